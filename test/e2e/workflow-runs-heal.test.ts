/**
 * Runs in mode "workflow" (issue 23 item 6) on the generated catalogue, in real Chromium, through the
 * run handlers and the local state machine — heals: a redesign mid-run is healed by the first sample
 * that meets it and later samples start on the healed version for free; a heal whose post-condition
 * fails writes nothing; a sample that cannot heal falls back to the agent (one result); with a judge,
 * a heal is written back only after its pass. Replay and resume: workflow-runs.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totalsOf } from '../../lib/runs/merge.ts';
import type { RunStore } from '../../lib/store/ports.ts';
import type { WorkflowStore } from '../../lib/store/workflow-ports.ts';
import type { CatalogueSite } from '../support/catalogue-site.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { openPointsIn } from '../support/planted-runs.ts';
import { finishWith } from '../support/runs-env.ts';
import {
  observeQuantity,
  startWorkflowRunsEnv,
  TENANT,
  usageOf,
  type WorkflowRunsEnv,
  workflowRunTools,
} from '../support/workflow-runs-env.ts';

let env: WorkflowRunsEnv;
let site: CatalogueSite;
let llm: ScriptedModel;
let runStore: RunStore;
let workflows: WorkflowStore;
let tools: ReturnType<typeof workflowRunTools>;

beforeAll(async () => {
  env = await startWorkflowRunsEnv('bfn-wf-heal-');
  ({ site, llm, runStore, workflows } = env);
  tools = workflowRunTools(env);
});
afterAll(async () => {
  await env?.close();
});

const runOf: ReturnType<typeof workflowRunTools>['runOf'] = (...a) => tools.runOf(...a);
const storeBuyWorkflow: ReturnType<typeof workflowRunTools>['storeBuyWorkflow'] = (...a) =>
  tools.storeBuyWorkflow(...a);

describe('runs in mode "workflow": heals and the agent fallback', () => {
  it('heals the redesign once mid-run and later samples start on the healed version for free', async () => {
    const wf = await storeBuyWorkflow('buy');
    const fillAlias = wf.nodes[1]!.alias;
    const clickAlias = wf.nodes[3]!.alias;
    llm.requests.length = 0;
    llm.setHandler((r) => observeQuantity(r) ?? { status: 400 });
    const carts = site.carts.length;
    // The site is redesigned after the first sample ends (one sample at a time).
    const { results, byId } = await runOf(
      { goal: 'buy the product', mode: 'workflow', workflow: { id: 'buy' }, concurrency: 1 },
      [
        { id: 5, qty: '3' },
        { id: 7, qty: '2' },
        { id: 8, qty: '4' },
        { id: 9, qty: '1' },
      ],
      { onSlice: (e) => e.final && e.sampleId === 'p5' && site.setTemplate('v2') },
    );
    expect(results.map((r) => [r.sampleId, r.status])).toEqual(
      expect.arrayContaining([
        ['p5', 'done'],
        ['p7', 'done'],
        ['p8', 'done'],
        ['p9', 'done'],
      ]),
    );
    // Every product reached the cart once, with its own quantity and the gift wrap.
    expect(site.carts.slice(carts).map((c) => [c.id, c.qty, c.gift, c.template])).toEqual([
      [5, 3, true, 'v1'],
      [7, 2, true, 'v2'],
      [8, 4, true, 'v2'],
      [9, 1, true, 'v2'],
    ]);
    // One model request in the whole run: the observe call for the one step whose words changed.
    expect(llm.requests.map((r) => r.schemaName)).toEqual(['list_elements']);
    const healed = usageOf(byId.get(7));
    expect(healed.workflow.version).toBe(1);
    expect(healed.heals.map((h) => [h.alias, h.via, h.confirmed])).toEqual([
      [fillAlias, 'llm', true],
      [clickAlias, 'matcher', true],
    ]);
    expect(healed.paid).toHaveLength(1);
    expect(healed.paid[0]).toMatchObject({ reason: 'heal', alias: fillAlias });
    expect(healed.paid[0]!.promptTokens).toBeGreaterThan(0);
    expect(healed.resolvedBy).toMatchObject({ 'heal-llm': 1, 'heal-matcher': 1 });
    expect(usageOf(byId.get(5))).toMatchObject({ paid: [], workflow: { version: 1 } });
    for (const later of [8, 9]) {
      expect(usageOf(byId.get(later))).toMatchObject({ paid: [], heals: [], workflow: { version: 2 } });
      expect(usageOf(byId.get(later)).resolvedBy).toEqual({ deterministic: 4 });
    }
    const versions = await workflows.listVersions(TENANT, 'buy');
    expect(versions.map((v) => [v.version, v.parent])).toEqual([
      [1, undefined],
      [2, 1],
    ]);
    expect(versions[1]!.note).toContain(fillAlias);
    expect(versions[1]!.note).toContain(clickAlias);
    // The heal's tokens are counted as heal tokens in the run's totals by mode.
    const run = (await runStore.getRun(TENANT, results[0]!.runId))!;
    const totals = totalsOf(run, await runStore.listSamples(TENANT, run.runId), results);
    expect(Object.keys(totals.tokensByMode ?? {})).toEqual(['heal']);
  });

  it('writes nothing when a heal post-condition fails; with fallback "agent" the agent gives the one result', async () => {
    // The click's recorded effect is changed to one the page never shows.
    const wf = await storeBuyWorkflow('buy-strict', (w) => {
      (w.nodes[3]!.config as { postconditions?: unknown[] }).postconditions = [
        { kind: 'url', pattern: '*/checkout*' },
      ];
    });
    const clickAlias = wf.nodes[3]!.alias;
    site.setTemplate('v2');
    llm.requests.length = 0;
    llm.setHandler((r) => observeQuantity(r) ?? finishWith({ bought: true }, r));
    const none = await runOf({ goal: 'buy the product', mode: 'workflow', workflow: { id: 'buy-strict' } }, [
      { id: 12, qty: '2' },
    ]);
    const failed = none.byId.get(12)!;
    expect(failed.status).toBe('failed');
    expect(failed.reason).toMatch(
      new RegExp(`^workflow failed: ${clickAlias} \\(browser_action\\):.*checkout`),
    );
    expect(usageOf(failed).heals.find((h) => h.alias === clickAlias)).toMatchObject({ confirmed: false });
    // Nothing is written back from a sample that failed, not even its confirmed heal; the failure counts.
    const versions = await workflows.listVersions(TENANT, 'buy-strict');
    expect(versions.map((v) => v.version)).toEqual([1]);
    expect(versions[0]!.runs).toEqual({ ok: 0, failed: 1 });

    const seen = llm.requests.length;
    const fallback = await runOf(
      { goal: 'buy the product', mode: 'workflow', workflow: { id: 'buy-strict' }, fallback: 'agent' },
      [{ id: 13, qty: '2' }],
    );
    expect(fallback.results).toHaveLength(1);
    const r = fallback.byId.get(13)!;
    expect(r.status, r.reason).toBe('done');
    expect(r.data).toEqual({ bought: true });
    // One result holding both parts' evidence: what the workflow did, then the agent's log.
    expect(r.evidence.some((e) => e.key.endsWith('workflow_log.json'))).toBe(true);
    expect(r.evidence.some((e) => e.key.endsWith('action_log.json'))).toBe(true);
    const u = usageOf(r);
    expect(u.mode).toBe('workflow');
    expect(u.fallback?.reason).toMatch(new RegExp(`^${clickAlias} \\(browser_action\\)`));
    expect(u.paid.map((p) => p.reason)).toEqual(['heal', 'fallback']);
    // The sample's totals hold the heal's and the agent's tokens.
    const paidTotal = u.paid.reduce((s, p) => s + p.promptTokens, 0);
    expect(r.usage.promptTokens).toBe(paidTotal);
    expect(llm.requests.slice(seen).map((q) => q.schemaName)).toEqual(['list_elements', 'next_actions']);
    expect((await workflows.listVersions(TENANT, 'buy-strict')).map((v) => v.version)).toEqual([1]);
  });

  it('with a judge, a heal is written back only once the judge passes the sample', async () => {
    await storeBuyWorkflow('buy-judged');
    site.setTemplate('v2');
    const judgeSays = (met: 'yes' | 'no') => (r: { schemaName?: string; text: string }) =>
      r.schemaName === 'judge_verdict'
        ? {
            json: {
              keyPoints: openPointsIn(r.text).map((o) => ({
                index: o.index,
                met,
                evidenceStep: 1,
                why: met === 'yes' ? 'the product is in the cart' : 'nothing shows it reached the cart',
              })),
              blockedBy: 'none',
              impossibleTask: false,
              reasoning: met === 'yes' ? 'done as asked' : 'not shown',
            },
          }
        : (observeQuantity(r) ?? { status: 400 });
    try {
      const spec = {
        goal: 'buy the product',
        mode: 'workflow',
        workflow: { id: 'buy-judged' },
        judge: true,
      } as const;
      llm.setHandler(judgeSays('no'));
      const failed = await runOf(spec, [{ id: 21, qty: '2' }]);
      expect(failed.byId.get(21)?.status).toBe('done');
      expect(usageOf(failed.byId.get(21)).heals.length).toBeGreaterThan(0);
      // The heal held its post-conditions, but the judge failed the sample: nothing is written.
      expect((await workflows.listVersions(TENANT, 'buy-judged')).map((v) => v.version)).toEqual([1]);

      llm.setHandler(judgeSays('yes'));
      const passed = await runOf(spec, [{ id: 22, qty: '1' }]);
      expect(passed.byId.get(22)?.status).toBe('done');
      const versions = await workflows.listVersions(TENANT, 'buy-judged');
      expect(versions.map((v) => [v.version, v.parent])).toEqual([
        [1, undefined],
        [2, 1],
      ]);
    } finally {
      site.setTemplate('v1');
    }
  });
});
