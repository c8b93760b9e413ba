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
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
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

async function runOn(ids: number[]) {
  const runStore = new LocalRunStore(join(dir, 'runs'));
  const evidence = new LocalEvidenceStore(join(dir, 'evidence'));
  const input = await createRun(runStore, evidence, {
    tenant: 't',
    spec: parseTaskSpec({
      goal: 'read the chair',
      mode: 'workflow',
      workflow: workflow as unknown as JsonObject,
      concurrency: 1,
    }),
    samples: ids.map((id) => ({ sampleId: `p${id}`, url: `${shop.url}/p/${id}`, input: {} })),
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
    return { results, contexts: contexts.mock.calls.length };
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
});
