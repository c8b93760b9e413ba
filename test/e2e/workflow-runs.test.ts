/**
 * Runs in mode "workflow" (issue 23 item 6) on the generated catalogue, in real Chromium, through the
 * run handlers and the local state machine: a deterministic workflow replays on every sample with no
 * model; a redesign mid-run is healed by the first sample that meets it and later samples start on
 * the healed version for free; a heal whose post-condition fails writes nothing; a sample that cannot
 * heal falls back to the agent (one result); a version is verified after 3 identical successes; and
 * a run on DynamoDB + S3 whose worker is killed with SIGKILL resumes with no sample lost or doubled.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRunRoutes } from '../../lib/api/runs.ts';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { runCommand } from '../../lib/cli/run.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { act } from '../../lib/ops/act.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { type RunDeps, runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { totalsOf } from '../../lib/runs/merge.ts';
import { createRun, resumeInput } from '../../lib/runs/run-records.ts';
import { parseTaskSpec, SpecError, type TaskSpecInput } from '../../lib/runs/task-spec.ts';
import { checkRunWorkflow, workflowNeedsModel } from '../../lib/runs/workflow-versions.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { EvidenceStore, JsonObject, ResultRecord, RunStore } from '../../lib/store/ports.ts';
import type { WorkflowStore } from '../../lib/store/workflow-ports.ts';
import { compileActs } from '../../lib/workflows/compile.ts';
import type { Workflow, WorkflowInputDoc } from '../../lib/workflows/schema.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type CatalogueSite, price, product, startCatalogueSite } from '../support/catalogue-site.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt, modelConfig } from '../support/ops-env.ts';
import { openPointsIn } from '../support/planted-runs.ts';
import { finishWith } from '../support/runs-env.ts';

let browser: Browser;
let site: CatalogueSite;
let llm: ScriptedModel;
let aws: AwsLocal;
let dir: string;
let runStore: RunStore;
let evidence: EvidenceStore;
let workflows: WorkflowStore;

beforeAll(async () => {
  [browser, site, llm, aws] = await Promise.all([
    startBrowser(),
    startCatalogueSite({ products: 60 }),
    startScriptedModel(),
    startAwsLocal(['dynamo', 's3']),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-wf-runs-'));
  runStore = new LocalRunStore(join(dir, 'runs'));
  evidence = new LocalEvidenceStore(join(dir, 'evidence'));
  workflows = new LocalWorkflowStore(join(dir, 'workflows'));
});
afterAll(async () => {
  await closeGuardProxies();
  await Promise.all([browser?.close(), site?.close(), llm?.close(), aws?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

const TENANT = 'wf';
const detail = (id: number) => `${site.url}/product/${id}`;

/** Product facts read by a deterministic extractor: no model anywhere. */
const facts: WorkflowInputDoc = {
  name: 'product facts',
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
    {
      alias: 'is_product',
      type: 'browser_query',
      config: {
        method: 'validate',
        rules: [{ type: 'element_exists', selector: 'form.buy-form' }],
        store_variable: false,
      },
    },
    {
      alias: 'facts',
      type: 'browser_query',
      config: {
        method: 'extract',
        instruction: 'the product name, price and SKU',
        extractor: {
          fields: {
            name: { selector: 'h1' },
            price: { selector: '.product-price' },
            sku: { selector: '.sku' },
          },
        },
      },
    },
  ],
};
const expectedFacts = (id: number) => ({
  facts: { name: product(id).name, price: price(product(id).cents), sku: product(id).sku },
});

function deps(extra: Partial<RunDeps> = {}): RunDeps {
  return {
    runStore,
    evidence,
    workflows,
    slices: agentSliceRunner,
    browser: async () => browser,
    policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [`127.0.0.1:${site.port}`] }),
    llmFor: async () => createLlmClient(modelConfig(llm, 'openai')),
    sliceBudgetMs: 60_000,
    ...extra,
  };
}

async function runOf(
  spec: TaskSpecInput,
  samples: { id: number; qty?: string }[],
  extra: Partial<RunDeps> = {},
): Promise<{ runId: string; results: ResultRecord[]; byId: Map<number, ResultRecord> }> {
  const input = await createRun(runStore, evidence, {
    tenant: TENANT,
    spec: parseTaskSpec(spec),
    samples: samples.map((s) => ({
      sampleId: `p${s.id}`,
      url: detail(s.id),
      input: (s.qty ? { qty: s.qty } : {}) as Record<string, string>,
    })),
  });
  await startLocalRun(input, runHandlers(deps(extra)), { retryPauseMs: 1 }).result;
  const results = await runStore.listResults(TENANT, input.runId);
  const byId = new Map(results.map((r) => [Number(r.sampleId.slice(1)), r]));
  return { runId: input.runId, results, byId };
}

type WorkflowUsage = {
  mode: string;
  workflow: { id: string; version: number; name: string };
  resolvedBy: Record<string, number>;
  heals: { alias: string; via: string; confirmed: boolean }[];
  paid: { reason: string; alias?: string; promptTokens: number; completionTokens: number }[];
  fallback?: { reason: string };
};
const usageOf = (r: ResultRecord | undefined) => r?.usage as unknown as WorkflowUsage;

/** The three buy steps recorded on product 1 (v1) with the zero-token matcher, compiled and stored. */
async function storeBuyWorkflow(id: string, edit?: (wf: Workflow) => void): Promise<Workflow> {
  site.setTemplate('v1');
  const { page, context } = await openPage(browser);
  try {
    await page.goto(detail(1));
    const acts = [];
    for (const instruction of [
      'type "2" into the Quantity field',
      'check the Gift wrap checkbox',
      'click the Add to cart button',
    ]) {
      const result = await act({ page }, instruction);
      expect(result.success, result.message).toBe(true);
      acts.push({ instruction, result });
    }
    const wf = compileActs(acts, { startUrl: detail(1), input: { url: detail(1), qty: '2' } });
    edit?.(wf);
    await workflows.putVersion({ tenant: TENANT, id, version: 1, document: wf as unknown as JsonObject });
    return wf;
  } finally {
    await context.close();
  }
}

/** The model finds the relabelled quantity field by the id its outline gives it (one observe call). */
function observeQuantity(r: { schemaName?: string; text: string }) {
  if (r.schemaName !== 'list_elements') return undefined;
  const elementId = idInPrompt(r.text, 'spinbutton', 'How many?');
  return {
    json: { elements: [{ elementId, description: 'quantity field', method: 'fill', arguments: [] }] },
  };
}

describe('runs in mode "workflow"', () => {
  it('replays a deterministic workflow on 6 pages with 0 model requests, one result each, and verifies the version', async () => {
    llm.requests.length = 0;
    llm.setHandler(() => ({ status: 500 }));
    site.setTemplate('v1');
    const ids = [3, 11, 17, 24, 38, 52];
    // An inline document: stored under the tenant for the run, so the run's samples share its versions.
    const { runId, results, byId } = await runOf(
      { goal: 'read the product facts', mode: 'workflow', workflow: facts, concurrency: 2 },
      ids.map((id) => ({ id })),
      // No model configured at all: a workflow with no AI nodes and no fallback needs none.
      { llmFor: async () => undefined },
    );
    expect(llm.requests).toHaveLength(0);
    expect(results).toHaveLength(ids.length);
    for (const id of ids) {
      const r = byId.get(id)!;
      expect(r.status, r.reason).toBe('done');
      expect(r.data).toEqual(expectedFacts(id));
      const u = usageOf(r);
      expect(u.mode).toBe('workflow');
      expect(u.paid).toEqual([]);
      expect(u.resolvedBy).toEqual({ deterministic: 3 });
      expect(u.workflow).toMatchObject({ id: `run-${runId}`, version: 1, name: 'product facts' });
      expect(r.usage.promptTokens).toBe(0);
      // The sample's evidence holds what each node did.
      expect(r.evidence.some((e) => e.key.endsWith('workflow_log.json'))).toBe(true);
    }
    // Six identical successes: the version is verified (after 3), and counted.
    const v1 = await workflows.getVersion(TENANT, `run-${runId}`, 1);
    expect(v1).toMatchObject({ verified: true, runs: { ok: 6, failed: 0 } });
    const run = (await runStore.getRun(TENANT, runId))!;
    expect(totalsOf(run, await runStore.listSamples(TENANT, runId), results).tokensByMode).toEqual({});

    // requireVerified: a stored id that is verified runs; an unverified one is refused up front.
    await workflows.putVersion({ tenant: TENANT, id: 'facts', version: 1, document: v1!.document });
    const strict = parseTaskSpec({
      goal: 'read the product facts',
      mode: 'workflow',
      workflow: { id: 'facts' },
      requireVerified: true,
    });
    await expect(checkRunWorkflow(workflows, TENANT, strict)).rejects.toThrow(
      /requireVerified: workflow "facts" version 1 is not verified/,
    );
    await expect(
      checkRunWorkflow(workflows, TENANT, { ...strict, workflow: { id: 'nope' }, requireVerified: false }),
    ).rejects.toThrow(/workflow.id: no workflow "nope" is stored/);
    await expect(
      checkRunWorkflow(workflows, 'another-tenant', { ...strict, requireVerified: false }),
    ).rejects.toThrow(SpecError);
  });

  it('refuses a bad inline workflow or an unknown id up front, naming the field (spec, API, CLI)', async () => {
    const bad = {
      ...facts,
      nodes: [
        facts.nodes[0],
        { alias: 'x', type: 'browser_query', config: { method: 'validate', rules: [] } },
      ],
    };
    expect(() => parseTaskSpec({ goal: 'g', mode: 'workflow', workflow: bad })).toThrow(
      /task spec workflow: nodes\.1\.config\.rules \(x\)/,
    );
    expect(() => parseTaskSpec({ goal: 'g', mode: 'workflow' })).toThrow(
      /workflow: mode "workflow" needs a workflow/,
    );

    // A model is needed only for AI nodes or the agent fallback (the CLI refuses without one then).
    const inline = { goal: 'g', mode: 'workflow' as const, workflow: facts };
    expect(await workflowNeedsModel(workflows, TENANT, parseTaskSpec(inline))).toBe(false);
    expect(await workflowNeedsModel(workflows, TENANT, parseTaskSpec({ ...inline, fallback: 'agent' }))).toBe(
      true,
    );
    const withAi = {
      ...facts,
      nodes: [
        ...facts.nodes,
        { alias: 'think', type: 'cognition', config: { instruction: 'summarise the facts' } },
      ],
    } as WorkflowInputDoc;
    expect(await workflowNeedsModel(workflows, TENANT, parseTaskSpec({ ...inline, workflow: withAi }))).toBe(
      true,
    );
    // The API: a stored id this tenant does not have is a 400 before any run is created.
    const app = new Hono<{ Variables: { tenant: string } }>();
    app.use('*', async (c, next) => {
      c.set('tenant', TENANT);
      await next();
    });
    let launched = 0;
    registerRunRoutes(app, {
      runStore,
      evidence,
      workflows,
      launch: async () => {
        launched += 1;
      },
    });
    const res = await app.request('/v1/runs', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        spec: { goal: 'g', mode: 'workflow', workflow: { id: 'no-such-flow' } },
        samples: [{ sampleId: 'p1', url: detail(1) }],
      }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string; issues: { path: string }[] } };
    expect(body.error.message).toMatch(/workflow\.id: no workflow "no-such-flow" is stored/);
    expect(body.error.issues[0]?.path).toBe('workflow.id');
    expect(launched).toBe(0);
    // The CLI: one line, before any run is created.
    const spec = join(dir, 'unknown-flow.json');
    await writeFile(spec, JSON.stringify({ goal: 'g', mode: 'workflow', workflow: { id: 'no-such-flow' } }));
    await expect(
      runCommand(['--task', spec, '--url', detail(1), '--out', dir], () => undefined),
    ).rejects.toThrow(/^--task: task spec workflow\.id: no workflow "no-such-flow" is stored$/);
  });

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

  it('a worker killed with SIGKILL mid-run on DynamoDB + S3 resumes: no sample lost or doubled', async () => {
    site.setTemplate('v1');
    const stores = storesFromEnv(aws.env);
    const ids = [21, 22, 23, 25, 26, 27];
    const input = await createRun(stores.runs, stores.evidence, {
      tenant: TENANT,
      spec: parseTaskSpec({
        goal: 'read the product facts',
        mode: 'workflow',
        workflow: facts,
        concurrency: 2,
      }),
      samples: ids.map((id) => ({ sampleId: `p${id}`, url: detail(id), input: {} })),
    });
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/scripts/workflow-run.ts'], {
      env: {
        ...process.env,
        WF_STORES_ENV: JSON.stringify(aws.env),
        WF_HOST: `127.0.0.1:${site.port}`,
        WF_INPUT: JSON.stringify(input),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => {
      err += String(d);
    });
    let killAt: () => void = () => undefined;
    const enough = new Promise<void>((resolve) => {
      killAt = resolve;
    });
    child.stdout.on('data', (d) => {
      out += String(d);
      // Some samples finished, others part-way: one slice per node, each checkpointed.
      if ((out.match(/ final\n/g) ?? []).length >= 2 && /^slice \S+ more$/m.test(out)) killAt();
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ? -1 : code)),
    );
    await Promise.race([enough, exited]);
    child.kill('SIGKILL');
    expect(await exited, `${out}\n${err.slice(-2000)}`).toBe(-1);
    expect(out).not.toContain('run returned');
    const before = await stores.runs.listResults(TENANT, input.runId);
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(before.length).toBeLessThan(ids.length);

    const resumed = await resumeInput(stores.runs, stores.evidence, TENANT, input.runId);
    await startLocalRun(
      resumed,
      runHandlers(deps({ runStore: stores.runs, evidence: stores.evidence, workflows: stores.workflows })),
      { retryPauseMs: 1 },
    ).result;
    const results = await stores.runs.listResults(TENANT, input.runId);
    expect(results.map((r) => r.sampleId).sort()).toEqual(ids.map((id) => `p${id}`).sort());
    for (const r of results) {
      expect(r.status, r.reason).toBe('done');
      expect(r.data).toEqual(expectedFacts(Number(r.sampleId.slice(1))));
    }
    // The results written before the kill are the ones kept.
    for (const b of before)
      expect(results.find((r) => r.sampleId === b.sampleId)?.writtenAt).toBe(b.writtenAt);
    const version = await stores.workflows.getVersion(TENANT, `run-${input.runId}`, 1);
    expect(version?.runs.ok).toBeGreaterThanOrEqual(ids.length);
  }, 240_000);

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
