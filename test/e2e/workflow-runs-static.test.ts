/**
 * Runs in mode "workflow" read pages from their served HTML when the workflow's compile check marked
 * it so: through the run handlers and the local runner, in real Chromium only where the browser is
 * needed. A server-rendered shop is read with one browser context for the whole run (the first page's
 * re-check) and the data the browser reads; the same workflow on a page that script fills in misses
 * on every page and each is read — right — in the browser.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type GuardPolicy, mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeStaticAgents } from '../../lib/browser/static-fetch.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec, rateBucketKey } from '../../lib/runs/task-spec.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { JsonObject } from '../../lib/store/ports.ts';
import { compileExtractSample } from '../../lib/workflows/compile.ts';
import type { Workflow } from '../../lib/workflows/schema.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type StaticShop, shopProduct, startStaticShop } from '../support/static-shop.ts';

let browser: Browser;
let shop: StaticShop;
let dir: string;
let policy: GuardPolicy;
let workflow: Workflow;

const want = (id: number) => ({ ...shopProduct(id), wood: 'Walnut' });

beforeAll(async () => {
  [browser, shop, dir] = await Promise.all([
    startBrowser(),
    startStaticShop(),
    mkdtemp(join(tmpdir(), 'bfn-wf-static-runs-')),
  ]);
  policy = mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [`127.0.0.1:${shop.port}`] });
  // What a model read on product 1 is the truth: compiled there with the served-HTML check on.
  shop.setMode('ssr');
  const { page, context } = await openPage(browser);
  try {
    await page.goto(`${shop.url}/p/1`);
    workflow = await compileExtractSample(
      page,
      { url: `${shop.url}/p/1`, instruction: "the chair's name, price, SKU, stock and wood", data: want(1) },
      { staticCheck: { policy } },
    );
  } finally {
    await context.close();
  }
});
afterAll(async () => {
  await closeStaticAgents();
  await closeGuardProxies();
  await Promise.all([browser?.close(), shop?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function runOn(ids: number[], opts: { query?: string; workflow?: Workflow } = {}) {
  const runStore = new LocalRunStore(join(dir, 'runs'));
  const evidence = new LocalEvidenceStore(join(dir, 'evidence'));
  const input = await createRun(runStore, evidence, {
    tenant: 't',
    spec: parseTaskSpec({
      goal: 'read the chair',
      mode: 'workflow',
      workflow: (opts.workflow ?? workflow) as unknown as JsonObject,
      concurrency: 1,
    }),
    samples: ids.map((id) => ({
      sampleId: `p${id}`,
      url: `${shop.url}/p/${id}${opts.query ?? ''}`,
      input: {},
    })),
  });
  const contexts = vi.spyOn(browser, 'newContext');
  try {
    await startLocalRun(
      input,
      runHandlers({
        runStore,
        evidence,
        workflows: new LocalWorkflowStore(join(dir, 'workflows')),
        slices: agentSliceRunner,
        browser: async () => browser,
        policy,
        llmFor: async () => undefined,
        sliceBudgetMs: 60_000,
      }),
      { retryPauseMs: 1 },
    ).result;
    const results = await runStore.listResults('t', input.runId);
    return { results, contexts: contexts.mock.calls.length, runStore };
  } finally {
    contexts.mockRestore();
  }
}

describe('mode "workflow" reads from the served HTML', () => {
  it('a server-rendered shop: every page right, one browser context for the run (the first page re-checked)', async () => {
    expect(workflow.staticRead?.verified).toBe(true);
    shop.setMode('ssr');
    const ids = [2, 3, 4, 5, 6, 7];
    const { results, contexts } = await runOn(ids);
    expect(results).toHaveLength(ids.length);
    for (const r of results) {
      expect(r.status, r.reason).toBe('done');
      expect(r.data).toEqual({ data: want(Number(r.sampleId.slice(1))) });
    }
    expect(contexts).toBe(1);
  });

  it('a page that script fills in: the served HTML misses, so every page is read in the browser, and right', async () => {
    shop.setMode('script');
    const ids = [8, 9, 10];
    const { results, contexts } = await runOn(ids);
    expect(results).toHaveLength(ids.length);
    for (const r of results) {
      expect(r.status, r.reason).toBe('done');
      expect(r.data).toEqual({ data: want(Number(r.sampleId.slice(1))) });
    }
    expect(contexts).toBe(ids.length);
  });

  it('a site answering 429 to the served-HTML read pauses its host and is asked again after Retry-After, not at once by the browser', async () => {
    shop.setMode('ssr');
    const { results, runStore } = await runOn([21], { query: '?busy=1' });
    expect(results[0]?.status, results[0]?.reason).toBe('done');
    expect(results[0]?.data).toEqual({ data: want(21) });
    const host = `127.0.0.1:${shop.port}`;
    expect(await runStore.bucketPausedUntil(rateBucketKey('t', host))).toBeGreaterThan(0);
    // The 429, the served HTML once the pause was over, and the first page's re-check in the browser.
    expect(shop.hits.filter((h) => h === '/p/21?busy=1')).toHaveLength(3);
  });

  it('a site that keeps answering 429 fails the sample saying so, asked 4 times and never by a browser', async () => {
    shop.setMode('ssr');
    const { results, contexts } = await runOn([22], { query: '?busy=99' });
    expect(results[0]?.status).toBe('failed');
    expect(results[0]?.reason).toContain('HTTP 429 (too many requests)');
    expect(results[0]?.data ?? null).toBeNull();
    expect(shop.hits.filter((h) => h === '/p/22?busy=99')).toHaveLength(4);
    expect(contexts).toBe(0);
  });

  it("in the browser too (static read off): the workflow's page load waits out a 429 and reads the page", async () => {
    shop.setMode('ssr');
    const off = { ...workflow, staticRead: { ...workflow.staticRead!, enabled: false } } as Workflow;
    const { results, runStore } = await runOn([23], { query: '?busy=1', workflow: off });
    expect(results[0]?.status, results[0]?.reason).toBe('done');
    expect(results[0]?.data).toEqual({ data: want(23) });
    expect(await runStore.bucketPausedUntil(rateBucketKey('t', `127.0.0.1:${shop.port}`))).toBeGreaterThan(0);
    expect(shop.hits.filter((h) => h === '/p/23?busy=1')).toHaveLength(2);
  });
});
