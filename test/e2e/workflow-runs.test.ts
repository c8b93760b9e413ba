/**
 * Runs in mode "workflow" (issue 23 item 6) on the generated catalogue, in real Chromium, through the
 * run handlers and the local state machine — replay and resume: a deterministic workflow replays on
 * every sample with no model, and its version is verified after 3 identical successes; a bad workflow
 * is refused up front naming the field; a run on DynamoDB + S3 whose worker is killed with SIGKILL
 * resumes with no sample lost or doubled. Heals and the agent fallback: workflow-runs-heal.test.ts.
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRunRoutes } from '../../lib/api/runs.ts';
import { runCommand } from '../../lib/cli/run.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { totalsOf } from '../../lib/runs/merge.ts';
import { createRun, resumeInput } from '../../lib/runs/run-records.ts';
import { parseTaskSpec, SpecError } from '../../lib/runs/task-spec.ts';
import { checkRunWorkflow, workflowNeedsModel } from '../../lib/runs/workflow-versions.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import type { EvidenceStore, RunStore } from '../../lib/store/ports.ts';
import type { WorkflowStore } from '../../lib/store/workflow-ports.ts';
import type { WorkflowInputDoc } from '../../lib/workflows/schema.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import type { CatalogueSite } from '../support/catalogue-site.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import {
  expectedFacts,
  facts,
  startWorkflowRunsEnv,
  TENANT,
  usageOf,
  type WorkflowRunsEnv,
  workflowRunTools,
} from '../support/workflow-runs-env.ts';

let env: WorkflowRunsEnv;
let aws: AwsLocal;
let site: CatalogueSite;
let llm: ScriptedModel;
let dir: string;
let runStore: RunStore;
let evidence: EvidenceStore;
let workflows: WorkflowStore;
let tools: ReturnType<typeof workflowRunTools>;

beforeAll(async () => {
  [env, aws] = await Promise.all([startWorkflowRunsEnv('bfn-wf-runs-'), startAwsLocal(['dynamo', 's3'])]);
  ({ site, llm, dir, runStore, evidence, workflows } = env);
  tools = workflowRunTools(env);
});
afterAll(async () => {
  await Promise.all([env?.close(), aws?.stop()]);
});

const detail = (id: number) => tools.detail(id);
const runOf: ReturnType<typeof workflowRunTools>['runOf'] = (...a) => tools.runOf(...a);
const deps: ReturnType<typeof workflowRunTools>['deps'] = (...a) => tools.deps(...a);

describe('runs in mode "workflow": replay and resume', () => {
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
});
