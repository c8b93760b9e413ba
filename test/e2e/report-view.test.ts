/**
 * The report worth sharing and `workflow show`, opened in real Chromium (issue 23 item 9, issue 28
 * item 6): a run of agent, extract, workflow and scenario samples planted in the stores (screenshots rendered
 * by the browser) is served by the API; its report opens through a signed link with no header, and
 * shows the chart, failures grouped, tokens by mode, heals, per-field columns and screenshots; a
 * rendered screenshot of it is not blank; expired, tampered and other-run links are refused. The
 * workflow page opens from the API (tenant-scoped, under its CSP) and from the CLI with a sample's
 * results and heal, deterministic and AI nodes in different colours, without a CSP complaint.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { signReportToken } from '../../lib/api/report-link.ts';
import { workflowShowCommand } from '../../lib/cli/workflow-show.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { JsonObject } from '../../lib/store/ports.ts';
import { WORKFLOW_PAGE_CSP } from '../../lib/workflows/show.ts';
import { tempRoot } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { LONG_NOTE, plantReportRun, SAMPLES, TENANT, WORKFLOW } from '../support/report-view-run.ts';
import { serveOnLoopback } from '../support/serve.ts';

const KEY = new TextEncoder().encode('report-view-test-key-0123456789abcdef');
let browser: Browser;
let server: ServerType;
let base: string;
let root: string;
let runStore: LocalRunStore;
let evidence: LocalEvidenceStore;
let workflows: LocalWorkflowStore;
const savedEnv: Record<string, string | undefined> = {};

beforeAll(async () => {
  browser = await startBrowser();
  root = await tempRoot();
  const dirs = {
    BROWSERFN_RUNS_DIR: join(root, 'runs'),
    BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
    BROWSERFN_WORKFLOWS_DIR: join(root, 'workflows'),
  };
  for (const [k, v] of Object.entries(dirs)) {
    savedEnv[k] = process.env[k];
    process.env[k] = v;
  }
  runStore = new LocalRunStore(dirs.BROWSERFN_RUNS_DIR);
  evidence = new LocalEvidenceStore(dirs.BROWSERFN_EVIDENCE_DIR);
  workflows = new LocalWorkflowStore(dirs.BROWSERFN_WORKFLOWS_DIR);
  const app = createApp({
    keys: new Map([
      ['key-a', TENANT],
      ['key-b', 'other'],
    ]),
    policy: { allowPrivate: false, allowHosts: [] },
    runs: { runStore, evidence, launch: async () => undefined },
    workflows,
    reportLinkKey: KEY,
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
  await plantReportRun({ runStore, evidence }, browser, 'r-view');
  await plantReportRun({ runStore, evidence }, browser, 'r-other');
  for (const note of [undefined, 'healed add_to_cart: .buy-btn is gone']) {
    const latest = await workflows.getVersion(TENANT, 'shop-flow');
    await workflows.putVersion({
      tenant: TENANT,
      id: 'shop-flow',
      version: (latest?.version ?? 0) + 1,
      document: WORKFLOW as unknown as JsonObject,
      ...(note ? { note, parent: 1 } : {}),
    });
  }
});

afterAll(async () => {
  server?.close();
  await browser?.close();
  if (root) await rm(root, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** A fresh context with no Authorization header, collecting console errors (CSP refusals among them). */
async function openClean(): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  return { page, errors, close: () => context.close() };
}

const post = (path: string, body?: unknown, key = 'key-a') =>
  fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('the run report', () => {
  it('opens through a signed link with no header and shows what a person scans first', async () => {
    const res = await post('/v1/runs/r-view/report-link');
    expect(res.status).toBe(200);
    const link = (await res.json()) as { url: string; expiresAt: string };
    const lifetime = Date.parse(link.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(10 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    expect(new URL(link.url).pathname).toBe('/v1/runs/r-view/report');

    const { page, errors, close } = await openClean();
    try {
      const answer = await page.goto(link.url);
      expect(answer?.status()).toBe(200);
      expect(answer?.headers()['content-security-policy']).toContain("script-src 'sha256-");
      expect(await page.title()).toBe('browserfn run r-view');
      expect(await page.textContent('#goal')).toContain('read its name and price');
      expect(await page.textContent('#spec-model')).toBe('openai/gpt-4.1-mini');
      expect(await page.textContent('#spec-concurrency')).toBe('3');

      // The chart: one bar per status, as long as its count says, in its own colour.
      const bars = await page.locator('#status-chart rect.bar').evaluateAll((rects) =>
        rects.map((r) => ({
          status: r.getAttribute('data-status'),
          count: Number(r.getAttribute('data-count')),
          width: (r as SVGRectElement).getBBox().width,
          fill: getComputedStyle(r).fill,
        })),
      );
      const bar = Object.fromEntries(bars.map((b) => [b.status, b]));
      expect(bar.done?.count).toBe(6);
      expect(bar.failed?.count).toBe(3);
      expect(bar.done!.width).toBeGreaterThan(bar.failed!.width);
      expect(bar.failed!.width).toBeGreaterThan(0);
      expect(bar.done!.fill).not.toBe(bar.failed!.fill);

      // Failures grouped by reason: the two refused connections are one line, the captcha another.
      const groups = await page
        .locator('#failures tr.failure-group')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.querySelector('.n')?.textContent,
            r.querySelector('.why')?.textContent,
            r.querySelector('.ids')?.textContent,
          ]),
        );
      expect(groups).toEqual([
        ['2', 'could not open <url>: net::ERR_CONNECTION_REFUSED', 'ex2, ex3'],
        ['1', 'the agent gave up: a captcha blocks the page', 'agent2'],
      ]);

      // Tokens and cost by what paid for them; the run's totals hold every sample's.
      expect(await page.textContent('#total-tokens')).toBe('13580');
      const costs = await page
        .locator('#costs tr.mode-cost')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.getAttribute('data-mode'),
            r.querySelector('.mode-tokens')?.textContent,
            r.querySelector('.mode-cost-usd')?.textContent,
          ]),
        );
      expect(costs).toEqual([
        ['agent', '7400', '$0.0140'],
        ['extract', '1280', '$0.0020'],
        // A scenario sample's tokens are its own mode's, not the agent's.
        ['scenario', '760', '$0.0012'],
        ['workflow', '0', '$0.0000'],
        ['heal', '940', '$0.0015'],
        ['fallback', '3200', '$0.0060'],
      ]);

      // The heal: which sample and step, old → new locator, why.
      const heal = page.locator('#heals tr.heal[data-sample=wf2]');
      expect(await heal.getAttribute('data-alias')).toBe('add_to_cart');
      expect(await heal.locator('code.old').textContent()).toBe('css .buy-btn');
      expect(await heal.locator('code.new').textContent()).toBe('role button "Add to cart"');
      expect(await heal.textContent()).toContain('.buy-btn is gone after the redesign');

      // One column per output field, readable cells, long text clipped with the whole of it kept.
      const heads = await page.locator('thead th.field').allTextContents();
      expect(heads.slice(0, 4)).toEqual(['name', 'price', 'notes', 'scenario']);
      expect(await page.textContent('tr[data-sample=sc1] td[data-field=verificationsPassed]')).toBe('2');
      expect(await page.textContent('tr[data-sample=ex1] td[data-field=name]')).toBe('Red lamp');
      expect(await page.textContent('tr[data-sample=wf2] td[data-field=price]')).toBe('$25.00');
      const notes = page.locator('tr[data-sample=ex1] td[data-field=notes] details.clip');
      const shown = await notes.locator('summary').textContent();
      expect(shown!.length).toBeLessThan(LONG_NOTE.length);
      await notes.locator('summary').click();
      expect(await notes.textContent()).toContain(LONG_NOTE);
      expect(await page.locator('tr[data-sample=wf3] .wf').textContent()).toBe('workflow shop-flow v2');

      // Each row shows its sample's final screenshot, decoded as a real image.
      const finals = await page
        .locator('tr.sample td.shot img')
        .evaluateAll((imgs) =>
          imgs.map((i) => [
            i.closest('tr')?.getAttribute('data-sample'),
            (i as HTMLImageElement).naturalWidth,
          ]),
        );
      expect(finals.map(([id]) => id)).toEqual(SAMPLES.map((s) => s.id));
      for (const [, width] of finals) expect(Number(width)).toBeGreaterThan(100);
      expect(await page.getAttribute('tr[data-sample=agent1] td.shot img', 'alt')).toContain('02_final.png');

      // A screenshot of the rendered report is not blank: many colours, and far from all white.
      const shot = PNG.sync.read(await page.screenshot({ fullPage: true, path: join(root, 'report.png') }));
      const colours = new Set<number>();
      let white = 0;
      for (let i = 0; i < shot.data.length; i += 4) {
        const [r, g, b] = [shot.data[i]!, shot.data[i + 1]!, shot.data[i + 2]!];
        colours.add((r << 16) | (g << 8) | b);
        if (r > 245 && g > 245 && b > 245) white++;
      }
      expect(colours.size).toBeGreaterThan(50);
      expect(white / (shot.data.length / 4)).toBeLessThan(0.95);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });

  it('refuses an expired, tampered or other-run link, and a link opens nothing but its report', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const expired = signReportToken({ tenant: TENANT, runId: 'r-view', exp: nowS - 5 }, KEY);
    const other = (await (await post('/v1/runs/r-other/report-link')).json()) as { url: string };
    const otherToken = new URL(other.url).searchParams.get('token')!;
    const good = (await (await post('/v1/runs/r-view/report-link', { expiresInSeconds: 600 })).json()) as {
      url: string;
    };
    const goodToken = new URL(good.url).searchParams.get('token')!;
    const [payload, sig] = goodToken.split('.');
    const forged = Buffer.from(JSON.stringify({ t: 'other', r: 'r-view', e: nowS + 600 })).toString(
      'base64url',
    );
    const { page, close } = await openClean();
    try {
      for (const token of [
        expired,
        otherToken,
        `${forged}.${sig}`,
        `${payload}.${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`,
      ]) {
        const answer = await page.goto(`${base}/v1/runs/r-view/report?token=${encodeURIComponent(token)}`);
        expect(answer?.status()).toBe(401);
        expect(await page.textContent('body')).not.toContain('Steel kettle');
      }
      const expiredBody = await (await fetch(`${base}/v1/runs/r-view/report?token=${expired}`)).json();
      expect(JSON.stringify(expiredBody)).toMatch(/expired/);
      // The other run's own link still works; and a token is no key for anything else.
      expect((await page.goto(other.url))?.status()).toBe(200);
      expect((await fetch(`${base}/v1/runs/r-view/results?token=${goodToken}`)).status).toBe(401);
      expect(
        (await fetch(`${base}/v1/runs/r-view/report-link?token=${goodToken}`, { method: 'POST' })).status,
      ).toBe(401);
    } finally {
      await close();
    }
    // Asking: another key's run is not found; a lifetime beyond 24 h is refused naming the field.
    expect((await post('/v1/runs/r-view/report-link', undefined, 'key-b')).status).toBe(404);
    const tooLong = await post('/v1/runs/r-view/report-link', { expiresInSeconds: 90_000 });
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(await tooLong.json())).toContain('expiresInSeconds');
  });
});

describe('workflow show', () => {
  it('draws the stored workflow from the API, and with a sample’s results and heal from the CLI', async () => {
    const served = await fetch(`${base}/v1/workflows/shop-flow/show`, {
      headers: { authorization: 'Bearer key-a' },
    });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-security-policy')).toBe(WORKFLOW_PAGE_CSP);
    const html = await served.text();
    const elsewhere = await fetch(`${base}/v1/workflows/shop-flow/show`, {
      headers: { authorization: 'Bearer key-b' },
    });
    expect(elsewhere.status).toBe(404);

    const file = join(root, 'shop-flow.html');
    const printed: string[] = [];
    const code = await workflowShowCommand(
      ['shop-flow', '--version', '1', '--run', 'r-view/wf2', '--out', file],
      (s) => printed.push(s),
    );
    expect(code).toBe(0);
    expect(printed).toEqual([file]);

    const { page, errors, close } = await openClean();
    try {
      await page.setContent(html);
      expect(await page.locator('#versions tr.version').count()).toBe(2);
      expect(await page.textContent('#versions tr.version.current')).toContain('v2');

      await page.goto(`file://${file}`);
      const nodes = await page
        .locator('.node')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-alias'), e.getAttribute('data-kind')]));
      expect(nodes).toEqual([
        ['open_shop', 'deterministic'],
        ['add_to_cart', 'deterministic'],
        ['each_offer', 'control'],
        ['read_offer', 'ai'],
        ['guard', 'control'],
        ['tidy', 'deterministic'],
        ['ask', 'ai'],
      ]);
      // Nested: the AI query sits inside the iterate's lane, the fallback inside the handle's.
      expect(await page.locator('[data-alias=each_offer] .lane [data-alias=read_offer]').count()).toBe(1);
      expect(await page.locator('[data-alias=guard] .lane [data-alias=ask]').count()).toBe(1);
      expect(await page.locator('#graph > .edge').count()).toBe(3);
      const colour = (alias: string) =>
        page.locator(`[data-alias=${alias}]`).evaluate((e) => {
          const s = getComputedStyle(e);
          return `${s.borderTopColor} ${s.backgroundColor}`;
        });
      expect(await colour('open_shop')).toBe(await colour('add_to_cart'));
      expect(await colour('open_shop')).not.toBe(await colour('read_offer'));
      expect(await colour('read_offer')).toBe(await colour('ask'));
      expect(await colour('each_offer')).not.toBe(await colour('open_shop'));
      // Per node: the first candidate, the last result, tokens, and the heal old → new with why.
      const add = page.locator('[data-alias=add_to_cart]');
      expect(await add.locator('.target').textContent()).toBe('target: css .buy-btn');
      expect(await add.locator('.result').textContent()).toBe('last result: ok · heal-llm · 12 ms');
      expect(await add.locator('.tokens').textContent()).toBe('tokens: 940');
      expect(await add.locator('.heal code.old').textContent()).toBe('css .buy-btn');
      expect(await add.locator('.heal code.new').textContent()).toBe('role button "Add to cart"');
      expect(await add.locator('.heal').textContent()).toContain('.buy-btn is gone after the redesign');
      expect(await page.locator('[data-alias=read_offer] .result').first().textContent()).toContain(
        '2 runs: 2 ok, 0 failed',
      );
      expect(await page.locator('[data-alias=tidy] .result').count()).toBe(0);
      expect(await page.textContent('.sub')).toContain('results from run r-view, sample wf2');
      expect(await page.textContent('#versions tr.version.current')).toContain('v1');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
    expect((await readFile(file, 'utf8')).includes('<script')).toBe(false);
  });
});
