/**
 * Pinned steps reach elements inside iframes and shadow roots (open and closed) through the durable
 * XPath chain, still checked against the recorded role and name.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordBefore } from '../../lib/perception/recording.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { runPinnedAction } from '../../lib/workflows/pinned.ts';
import { type Workflow, WorkflowSchema } from '../../lib/workflows/schema.ts';
import { freshPageEachTest } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let site: FixtureServer;
let page: Page;
beforeAll(async () => {
  site = await startFixtureServer();
});
afterAll(async () => {
  await site?.close();
});
freshPageEachTest((p) => {
  page = p;
});

/** Records the element with this role and name as a one-step workflow, the way compile pins it. */
async function pin(role: string, name: string, post: Record<string, unknown>[] = []): Promise<Workflow> {
  const snap = await snapshot(page);
  const el = snap.elements.find((e) => e.role === role && e.name === name);
  if (!el) throw new Error(`no ${role} "${name}" in:\n${snap.tree}`);
  const rec = await recordBefore(page, el.locator);
  return WorkflowSchema.parse({
    name: 'one step',
    nodes: [
      {
        alias: 'press_it',
        type: 'browser_action',
        config: {
          action: 'click',
          target: { candidates: rec.candidates, instruction: `the "${name}" button`, expect: { role, name } },
          postconditions: post,
        },
      },
    ],
  });
}

const runStep = (wf: Workflow) =>
  runPinnedAction({ node: wf.nodes[0]!, path: 'nodes.0', scope: {}, workflow: wf, deps: { page } });

describe('pinned steps in frames and shadow roots', () => {
  it('clicks a button inside an iframe by its chain, with no heal', async () => {
    await page.goto(`${site.url}/iframes.html`);
    const wf = await pin('button', 'Srcdoc button');
    const cfg = wf.nodes[0]!.config as { target: { candidates: { kind: string; value?: string }[] } };
    expect(cfg.target.candidates).toEqual([{ kind: 'xpath', value: expect.stringContaining(' >> ') }]);
    await page.reload();
    const r = await runStep(wf);
    expect(r).toMatchObject({ status: 'ok', resolvedBy: 'deterministic' });
    const inner = page
      .frames()
      .find((f) => f.url() === 'about:srcdoc' && f.parentFrame() === page.mainFrame());
    expect(await inner!.locator('button').textContent()).toBe('Srcdoc done');
  });

  it('clicks inside open and closed shadow roots, its effect checked by a post-condition', async () => {
    await page.goto(`${site.url}/shadow.html`);
    const nested = await pin('button', 'Nested shadow button', [
      { kind: 'text', contains: 'Nested clicked' },
    ]);
    const closed = await pin('button', 'Closed shadow button', [
      { kind: 'text', contains: 'Closed clicked' },
    ]);
    await page.reload();
    expect(await runStep(nested)).toMatchObject({ status: 'ok', resolvedBy: 'deterministic' });
    expect(await runStep(closed)).toMatchObject({ status: 'ok', resolvedBy: 'deterministic' });
    expect(await page.locator('#status').textContent()).toBe('Closed clicked, opt-in false');
  });
});
