import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import type { SliceRunner } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { headingIn, runDeps, tempStores } from '../support/runs-env.ts';

/** A run in agent mode (the default): each sample is lib/agent's loop, driven by the state machine. */

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let stores: Awaited<ReturnType<typeof tempStores>>;

beforeAll(async () => {
  [browser, site, llm, stores] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    tempStores('bfn-runs-agent-'),
  ]);
  // Step 1: look at the product (a screenshot the spec requires); step 2: report its name.
  llm.setHandler((req) => {
    if (req.schemaName !== 'next_actions') return { status: 400 };
    const step = Number(/^Step (\d+) of \d+/m.exec(req.text)?.[1] ?? 0);
    const actions =
      step === 1
        ? [{ tool: 'screenshot', label: 'product' }]
        : [{ tool: 'done', data: { title: headingIn(req) ?? null } }];
    return { json: { evaluation_previous_step: 'ok', next_goal: 'next', actions } };
  });
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await stores?.cleanup();
});

const crashOn = (sampleId: string): SliceRunner => ({
  newState: agentSliceRunner.newState,
  runSlice: (state, deps, opts) =>
    state.sampleId === sampleId
      ? Promise.reject(new Error('worker lost: browser process exited'))
      : agentSliceRunner.runSlice(state, deps, opts),
});

describe('a run of agents', () => {
  it('carries each sample through the agent loop: two done with their artifacts, one crash failed', async () => {
    const spec = parseTaskSpec({
      goal: 'screenshot the product, then report its name as title',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      requiredFields: ['title'],
      requiredArtifacts: ['product'],
      maxSteps: 5,
      concurrency: 2,
    });
    expect(spec.mode).toBe('agent');
    const tenant = 'agents';
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      spec,
      samples: [
        { sampleId: 'kettle', url: `${site.url}/products/steel-kettle.html`, input: {} },
        { sampleId: 'lamp', url: `${site.url}/products/red-lamp.html`, input: {} },
        { sampleId: 'lost', url: `${site.url}/products/green-chair.html`, input: {} },
      ],
    });
    const handlers = runHandlers(runDeps(stores, browser, site, llm, { slices: crashOn('lost') }));
    await startLocalRun(input, handlers, { retryPauseMs: 1 }).result;

    const results = await stores.runStore.listResults(tenant, input.runId);
    expect(results.map((r) => [r.sampleId, r.status, r.data])).toEqual([
      ['kettle', 'done', { title: 'Steel Kettle' }],
      ['lamp', 'done', { title: 'Red Lamp' }],
      ['lost', 'failed', null],
    ]);
    // Two decisions per finished sample (screenshot, then done); the crashed one never asked.
    expect(llm.requests.filter((r) => r.schemaName === 'next_actions')).toHaveLength(4);
    for (const r of results.slice(0, 2)) {
      expect(r.usage.promptTokens).toBeGreaterThan(0);
      const shot = r.evidence.find((e) => /\/\d\d_product\.png$/.test(e.key));
      expect(shot, JSON.stringify(r.evidence)).toBeDefined();
      const bytes = await stores.evidence.get(shot!.key);
      expect(createHash('sha256').update(bytes!).digest('hex')).toBe(shot!.sha256);
      expect(r.evidence.some((e) => e.key.endsWith('/action_log.json'))).toBe(true);
    }
    const run = await stores.runStore.getRun(tenant, input.runId);
    expect(run?.status).toBe('done');
    expect((run?.totals as { counts: Record<string, number> }).counts).toMatchObject({ done: 2, failed: 1 });
  });
});

describe('a slice asked for less working time (the queue near its timeout)', () => {
  it('works to that deadline, and never past the configured budget', async () => {
    const spec = parseTaskSpec({
      goal: 'screenshot the product, then report its name as title',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      maxSteps: 5,
    });
    const tenant = 'budgets';
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      spec,
      samples: ['a', 'b', 'c'].map((sampleId) => ({
        sampleId,
        url: `${site.url}/products/steel-kettle.html`,
        input: {},
      })),
    });
    const given: Record<string, number> = {};
    const timed: SliceRunner = {
      newState: agentSliceRunner.newState,
      runSlice: (state, deps, opts) => {
        given[state.sampleId] = opts.deadline - Date.now();
        return agentSliceRunner.runSlice(state, deps, opts);
      },
    };
    const handlers = runHandlers(runDeps(stores, browser, site, llm, { slices: timed }));
    const ids = { tenant, runId: input.runId };
    await handlers.slice({ ...ids, sampleId: 'a', budgetMs: 20_000 });
    await handlers.slice({ ...ids, sampleId: 'b', budgetMs: 10_000_000 });
    await handlers.slice({ ...ids, sampleId: 'c' });
    expect(given.a).toBeGreaterThan(15_000);
    expect(given.a).toBeLessThanOrEqual(20_000);
    // The configured budget (runDeps: 60 s) caps a caller that asks for more.
    expect(given.b).toBeGreaterThan(55_000);
    expect(given.b).toBeLessThanOrEqual(60_000);
    expect(given.c).toBeGreaterThan(55_000);
    expect((await stores.runStore.listResults(tenant, input.runId)).map((r) => r.status)).toEqual([
      'done',
      'done',
      'done',
    ]);
  });
});
