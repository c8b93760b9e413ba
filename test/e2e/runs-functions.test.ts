import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser } from '../../lib/browser/session.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { runEvidencePrefix } from '../../lib/store/keys.ts';
import { verifyRun } from '../../lib/store/manifest-store.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { titleModel } from '../support/runs-env.ts';

let site: FixtureServer;
let llm: ScriptedModel;
let aws: AwsLocal;

beforeAll(async () => {
  [site, llm, aws] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    startAwsLocal(['dynamo', 's3']),
  ]);
  titleModel(llm);
  // What the Lambda's configuration would set: the table and bucket (here on dynalite and s3rver).
  Object.assign(process.env, {
    ...aws.env,
    BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.openaiBaseURL,
    BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
  });
});
afterAll(async () => {
  await closeSharedBrowser();
  await closeGuardProxies();
  await site?.close();
  await llm?.close();
  await aws?.stop();
});

describe('Lambda entry points of a run', () => {
  it('agent-slice works a sample to its result, records a crash once, merge totals them', async () => {
    const { runs: runStore, evidence } = storesFromEnv(aws.env);
    const input = await createRun(runStore, evidence, {
      tenant: 'fn',
      spec: parseTaskSpec({
        goal: 'product name',
        outputSchema: { type: 'object', properties: { title: { type: 'string' } } },
      }),
      samples: [
        { sampleId: 'one', url: `${site.url}/products/brass-bell.html`, input: {} },
        { sampleId: 'two', url: `${site.url}/products/iron-pan.html`, input: {} },
      ],
    });
    const slice = (await import('../../functions/agent-slice.ts')).handler;
    const merge = (await import('../../functions/merge.ts')).handler;
    expect(await slice({ tenant: 'fn', runId: input.runId, sampleId: 'one' })).toEqual({
      final: true,
      status: 'done',
    });
    // A repeated slice (a retry after the result was written) does nothing and says so.
    const before = llm.requests.length;
    expect(await slice({ tenant: 'fn', runId: input.runId, sampleId: 'one' })).toEqual({
      final: true,
      status: 'done',
    });
    expect(llm.requests.length).toBe(before);
    const crash = { Error: 'Sandbox.Timedout', Cause: 'Task timed out after 900.00 seconds' };
    expect(await slice({ tenant: 'fn', runId: input.runId, sampleId: 'two', crash })).toEqual({
      final: true,
      status: 'failed',
    });
    expect(
      await slice({ tenant: 'fn', runId: input.runId, sampleId: 'two', crash: { Error: 'Other' } }),
    ).toEqual({
      final: true,
      status: 'failed',
    });
    expect((await runStore.getResult('fn', input.runId, 'two'))?.reason).toBe(
      'crashed: Sandbox.Timedout: Task timed out after 900.00 seconds',
    );
    const merged = (await merge({ tenant: 'fn', runId: input.runId })) as {
      counts: Record<string, number>;
      manifestHead: string;
    };
    expect(merged.counts).toMatchObject({ done: 1, failed: 1 });
    // The Lambdas wrote to DynamoDB + S3: what the run record and the bucket hold now verifies.
    const run = await runStore.getRun('fn', input.runId);
    expect(run).toMatchObject({ status: 'done', manifestHead: merged.manifestHead });
    const one = await runStore.getResult('fn', input.runId, 'one');
    expect(one?.data).toEqual({ title: 'Brass Bell' });
    const stored = (await evidence.list(runEvidencePrefix('fn', input.runId))).filter(
      (k) => !k.includes('/manifest'),
    );
    expect(stored.length).toBeGreaterThanOrEqual(one!.evidence.length + 2);
    expect(await verifyRun(evidence, 'fn', input.runId, run?.manifestHead)).toMatchObject({
      ok: true,
      files: stored.length,
    });
    await expect(slice({ tenant: 'fn', runId: input.runId })).rejects.toThrow(/slice event sampleId/);
  });
});
