import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import type { SliceRunner } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from '../support/llm-server.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { headingIn, runDeps } from '../support/runs-env.ts';

/**
 * The slice loop for real: agent-mode runs on the local state machine (aws-local-stepfunctions) with
 * the DynamoDB + S3 stores (dynalite, s3rver), each slice allowed one step so a sample of four steps
 * needs four slices, each from the checkpoint the last one left in DynamoDB.
 */

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let aws: AwsLocal;

const stepOf = (r: RecordedRequest) => Number(/^Step (\d+) of \d+/m.exec(r.text)?.[1] ?? 0);
const decide = (actions: unknown[]): ScriptedReply => ({
  json: { evaluation_previous_step: 'ok', next_goal: 'next', actions },
});
/** Pages whose model answers 401 from their second step on (a revoked key, not worth a retry). */
const REVOKED = 'tall-mug';

beforeAll(async () => {
  [browser, site, llm, aws] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    startAwsLocal(['dynamo', 's3']),
  ]);
  // Four steps: save part of the data, save more of it, take a screenshot, report the name.
  llm.setHandler((req) => {
    if (req.schemaName !== 'next_actions') return { status: 400 };
    const step = stepOf(req);
    if (req.text.includes(REVOKED) && step >= 2)
      return { status: 401, json: { error: { message: 'invalid api key' } } };
    if (step === 1)
      return decide([
        { tool: 'save_progress', data: { colours: ['red'], seen: { first: true } }, note: 'first' },
      ]);
    if (step === 2)
      return decide([
        { tool: 'save_progress', data: { colours: ['red', 'blue'], seen: { second: true } }, note: 'second' },
      ]);
    if (step === 3) return decide([{ tool: 'screenshot', label: 'product' }]);
    return decide([{ tool: 'done', data: { title: headingIn(req) ?? null } }]);
  });
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await aws?.stop();
});

/** The real agent slice runner, each slice limited to `steps` steps; counts the slices per sample. */
function stepsPerSlice(steps: number | undefined, slices: Record<string, number>): SliceRunner {
  return {
    newState: agentSliceRunner.newState,
    runSlice: (state, deps, opts) => {
      slices[state.sampleId] = (slices[state.sampleId] ?? 0) + 1;
      const limited = steps === undefined ? opts : { ...opts, maxSteps: steps };
      return agentSliceRunner.runSlice(state, deps, limited);
    },
  };
}

const SAMPLES = ['steel-kettle', 'red-lamp'];

async function runOf(
  tenant: string,
  steps: number | undefined,
  extra: Record<string, unknown> = {},
  pages = SAMPLES,
) {
  const { runs, evidence } = storesFromEnv(aws.env);
  const spec = parseTaskSpec({
    goal: 'note the colours, screenshot the product, then report its name as title',
    outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    requiredFields: ['title'],
    maxSteps: 8,
    concurrency: 2,
    ...extra,
  });
  const input = await createRun(runs, evidence, {
    tenant,
    spec,
    samples: pages.map((p) => ({ sampleId: p, url: `${site.url}/products/${p}.html`, input: {} })),
  });
  const slices: Record<string, number> = {};
  const handlers = runHandlers(
    runDeps({ runStore: runs, evidence }, browser, site, llm, { slices: stepsPerSlice(steps, slices) }),
  );
  await startLocalRun(input, handlers, { retryPauseMs: 1 }).result;
  const results = await runs.listResults(tenant, input.runId);
  return { runs, runId: input.runId, results, slices };
}

describe('the slice loop on the local state machine with DynamoDB + S3', () => {
  it('a sample in four one-step slices ends as in one slice: saved data merged, one result each', async () => {
    const whole = await runOf('whole', undefined);
    const sliced = await runOf('sliced', 1);
    expect(whole.slices).toEqual({ 'steel-kettle': 1, 'red-lamp': 1 });
    expect(sliced.slices).toEqual({ 'steel-kettle': 4, 'red-lamp': 4 });
    // One result per sample, and the same result whether one slice or four did the work.
    expect(sliced.results.map((r) => r.sampleId).sort()).toEqual([...SAMPLES].sort());
    const outcome = (rs: typeof whole.results) => rs.map((r) => [r.sampleId, r.status, r.data]);
    expect(outcome(sliced.results)).toEqual(outcome(whole.results));
    // save_progress of slice 1 and slice 2 merged with done's data of slice 4.
    expect(sliced.results.find((r) => r.sampleId === 'red-lamp')?.data).toEqual({
      colours: ['red', 'blue'],
      seen: { first: true, second: true },
      title: 'Red Lamp',
    });
    for (const r of sliced.results) {
      expect(r.status).toBe('done');
      expect((r.usage as { steps: number }).steps).toBe(4);
      // The screenshot of slice 3 is in the evidence of the result slice 4 wrote.
      expect(r.evidence.some((e) => /_product\.png$/.test(e.key))).toBe(true);
    }
    const samples = await sliced.runs.listSamples('sliced', sliced.runId);
    expect(samples.map((s) => [s.sampleId, s.attempts])).toEqual(
      expect.arrayContaining([
        ['steel-kettle', 4],
        ['red-lamp', 4],
      ]),
    );
  }, 300_000);

  it('maxSlices: a sample still running after its last slice ends failed with the reason, its data kept', async () => {
    const { results, slices } = await runOf('stuck', 1, { maxSlices: 2 }, ['iron-pan']);
    expect(slices).toEqual({ 'iron-pan': 2 });
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ sampleId: 'iron-pan', status: 'failed' });
    expect(results[0]!.reason).toContain('did not end within 2 slices');
    expect(results[0]!.data).toEqual({ colours: ['red', 'blue'], seen: { first: true, second: true } });
  }, 300_000);

  it('a 401 from the model ends the sample at once with the reason and the data saved before, not slice after slice', async () => {
    const asked = llm.requests.length;
    const { results, slices } = await runOf('revoked', 1, { maxSlices: 10 }, [REVOKED]);
    const mine = llm.requests.slice(asked).filter((r) => r.schemaName === 'next_actions');
    // Step 1 saved data; step 2's request got the 401, asked once (the client may not retry a 401).
    expect(mine.map(stepOf)).toEqual([1, 2]);
    expect(slices).toEqual({ [REVOKED]: 2 });
    expect(results).toHaveLength(1);
    // Not done: it stopped with part of the data (partial_success), not with the model's answer.
    expect(results[0]).toMatchObject({ sampleId: REVOKED, status: 'partial_success' });
    expect(results[0]!.reason).toMatch(/^model error: .*401/);
    // What was saved before the error is kept in the result.
    expect(results[0]!.data).toEqual({ colours: ['red'], seen: { first: true } });
  }, 300_000);
});
