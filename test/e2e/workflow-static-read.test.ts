/**
 * Reading without a browser, end to end in real Chromium: an extract sample compiled on a
 * server-rendered page is marked readable from its served HTML and replays with no Chromium page
 * opened and the same data the browser reads; one compiled on a page whose data script fills in is
 * not marked; a page that turned script-filled after compile falls back to the browser and is still
 * right; the guard's default policy keeps the compile check off a loopback page.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_POLICY, type GuardPolicy } from '../../lib/browser/guard-policy.ts';
import { closeStaticAgents } from '../../lib/browser/static-fetch.ts';
import { compileExtractSample } from '../../lib/workflows/compile.ts';
import { runWorkflow } from '../../lib/workflows/executor.ts';
import { runWorkflowOnce } from '../../lib/workflows/run-one.ts';
import type { Workflow } from '../../lib/workflows/schema.ts';
import { renderWorkflowPage } from '../../lib/workflows/show.ts';
import { runStaticFirst } from '../../lib/workflows/static-read.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type StaticShop, shopProduct, startStaticShop } from '../support/static-shop.ts';

let browser: Browser;
let shop: StaticShop;
let policy: GuardPolicy;
beforeAll(async () => {
  [browser, shop] = await Promise.all([startBrowser(), startStaticShop()]);
  policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${shop.port}`] };
});
afterAll(async () => {
  await closeStaticAgents();
  await Promise.all([browser?.close(), shop?.close()]);
});

const want = (id: number) => ({ ...shopProduct(id), wood: 'Walnut' });
const INSTRUCTION = "the chair's name, price, SKU, stock and wood";

/** Chromium pages opened by these helpers (every browser read goes through here). */
let opened = 0;
async function inBrowser<T>(url: string | undefined, fn: (page: Page) => Promise<T>): Promise<T> {
  opened++;
  const { page, context } = await openPage(browser);
  try {
    if (url) {
      await page.goto(url);
      // The script-filled page: wait for its data as a reader would.
      await page.waitForFunction(() => document.querySelector('h1.name')?.textContent !== '');
    }
    return await fn(page);
  } finally {
    await context.close();
  }
}

/** What the model read on product `id` is the truth: compile on that page with the check on. */
const compileOn = (id: number, checkPolicy = policy) =>
  inBrowser(`${shop.url}/p/${id}`, (page) =>
    compileExtractSample(
      page,
      { url: `${shop.url}/p/${id}`, instruction: INSTRUCTION, data: want(id) },
      { staticCheck: { policy: checkPolicy } },
    ),
  );

const init = (id: number) => ({
  tenant: 't',
  runId: 'r',
  sampleId: `p${id}`,
  inputs: {},
  url: `${shop.url}/p/${id}`,
});
const viaBrowser = (wf: Workflow, id: number) => () =>
  inBrowser(undefined, (page) => runWorkflow(wf, init(id), { page }));

describe('static read', () => {
  it('a server-rendered page: marked at compile, replayed with no Chromium page and the data the browser reads', async () => {
    shop.setMode('ssr');
    const wf = await compileOn(1);
    expect(wf.nodes.map((n) => n.type)).toEqual(['browser_action', 'browser_query']);
    expect(wf.staticRead).toMatchObject({ verified: true, enabled: true, url: `${shop.url}/p/1` });
    expect(renderWorkflowPage(wf)).toContain('read without a browser: yes');

    opened = 0;
    const ids = [2, 3, 4];
    const outs = await Promise.all(
      ids.map((id) => runStaticFirst(wf, init(id), { policy, browser: viaBrowser(wf, id) })),
    );
    expect(opened).toBe(0);
    for (const [i, out] of outs.entries()) {
      expect(out.path).toBe('static-html');
      expect(out.state.data).toEqual({ data: want(ids[i]!) });
      expect(Object.values(out.state.results).every((r) => r.resolvedBy === 'static-html')).toBe(true);
    }
    // The browser path on the same pages gives the same data.
    for (const id of ids)
      expect((await viaBrowser(wf, id)()).data).toEqual(outs[ids.indexOf(id)]!.state.data);

    // Through run-one (the API / CLI entry): says which path read it; a person's switch turns it off.
    const hitsBefore = shop.hits.length;
    const answer = await inBrowser(undefined, (page) =>
      runWorkflowOnce({
        tenant: 't',
        workflow: wf,
        url: `${shop.url}/p/5`,
        deps: { page },
        staticRead: { policy },
      }),
    );
    expect(answer).toMatchObject({ status: 'done', readBy: 'static-html', data: { data: want(5) } });
    expect(shop.hits.length).toBe(hitsBefore + 1);
    const off = { ...wf, staticRead: { ...wf.staticRead!, enabled: false } };
    const inChromium = await inBrowser(undefined, (page) =>
      runWorkflowOnce({
        tenant: 't',
        workflow: off,
        url: `${shop.url}/p/5`,
        deps: { page },
        staticRead: { policy },
      }),
    );
    expect(inChromium).toMatchObject({ status: 'done', readBy: 'browser', data: { data: want(5) } });
    expect(inChromium.results.data?.resolvedBy).toBe('deterministic');
    // No policy given: the operator's from the environment, which (as by default) does not open loopback.
    vi.stubEnv('BROWSERFN_ALLOW_PRIVATE', '');
    vi.stubEnv('BROWSERFN_ALLOW_HOSTS', '');
    const byDefault = await inBrowser(undefined, (page) =>
      runWorkflowOnce({ tenant: 't', workflow: wf, url: `${shop.url}/p/5`, deps: { page } }),
    ).finally(() => vi.unstubAllEnvs());
    expect(byDefault).toMatchObject({
      status: 'done',
      readBy: 'browser',
      staticFallback: expect.stringContaining('loopback address'),
      data: { data: want(5) },
    });
    // A context holding cookies for the page (a signed-in profile) is not read over plain HTTP.
    const signedIn = await inBrowser(undefined, async (page) => {
      await page.context().addCookies([{ name: 'session', value: 'abc', url: shop.url }]);
      return runWorkflowOnce({
        tenant: 't',
        workflow: wf,
        url: `${shop.url}/p/6`,
        deps: { page },
        staticRead: { policy },
      });
    });
    expect(signedIn).toMatchObject({
      status: 'done',
      readBy: 'browser',
      staticFallback: expect.stringContaining('signs in'),
    });
  });

  it('a page whose data script fills in after load is not marked; nor is a loopback page under the default policy', async () => {
    shop.setMode('script');
    try {
      const wf = await compileOn(7);
      expect(wf.nodes[1]!.type).toBe('browser_query'); // the extractor itself holds in the browser
      expect(wf.staticRead).toMatchObject({
        verified: false,
        reason: expect.stringContaining('empty in the served HTML'),
      });
      expect(renderWorkflowPage(wf)).toContain('read without a browser: no');
    } finally {
      shop.setMode('ssr');
    }
    const guarded = await compileOn(8, DEFAULT_POLICY);
    expect(guarded.staticRead).toMatchObject({
      verified: false,
      reason: expect.stringContaining('loopback address'),
    });
  });

  it('a page that turned script-filled after compile falls back to the browser and is still right', async () => {
    shop.setMode('ssr');
    const wf = await compileOn(1);
    expect(wf.staticRead?.verified).toBe(true);
    shop.setMode('script');
    try {
      opened = 0;
      const out = await runStaticFirst(wf, init(9), { policy, browser: viaBrowser(wf, 9) });
      expect(opened).toBe(1);
      expect(out).toMatchObject({ path: 'browser', fellBack: expect.stringContaining('name is empty') });
      expect(out.state.data).toEqual({ data: want(9) });
      expect(out.state.results.data?.resolvedBy).toBe('deterministic');
    } finally {
      shop.setMode('ssr');
    }
  });
});
