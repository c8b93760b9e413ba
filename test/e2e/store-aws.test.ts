/**
 * The DynamoDB and S3 adapters through the real AWS SDK v3 against dynalite and s3rver: the same
 * contract as the local adapters, plus what only the AWS shape has (pointers to S3 for big state,
 * the checksum header, configuration from the environment) and the emulator's 1 MB query pages.
 */
import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRunRoutes } from '../../lib/api/runs.ts';
import { totalsOf } from '../../lib/runs/merge.ts';
import { totalsFromProgress } from '../../lib/runs/progress-totals.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { runPartition } from '../../lib/store/dynamo-items.ts';
import { DynamoRunStore } from '../../lib/store/dynamo-run-store.ts';
import { runEvidencePrefix } from '../../lib/store/keys.ts';
import type { RunStore } from '../../lib/store/ports.ts';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import {
  describeStoreContract,
  resultRecord,
  runRecord,
  sampleRecord,
} from '../support/run-store-contract.ts';

let aws: AwsLocal;
let started: Promise<AwsLocal> | undefined;
const awsLocal = () => {
  started ??= startAwsLocal(['dynamo', 's3']);
  return started;
};

beforeAll(async () => {
  aws = await awsLocal();
});
afterAll(async () => {
  await aws?.stop();
});

function stores(local: AwsLocal) {
  const evidence = new S3EvidenceStore({ client: local.s3.client, bucket: local.s3.bucket });
  const runs = new DynamoRunStore({
    client: local.dynamo.client,
    table: local.dynamo.table,
    blobs: evidence,
  });
  return { runs, evidence };
}

describeStoreContract('DynamoDB + S3 (dynalite, s3rver)', async () => {
  const local = await awsLocal();
  return {
    ...stores(local),
    // The emulator pages like DynamoDB (1 MB per Query), so only the adapter's page loop returns all 150.
    async checkPagedRun(tenant, runId) {
      const first = await local.dynamo.client.send(
        new QueryCommand({
          TableName: local.dynamo.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :results)',
          ExpressionAttributeValues: {
            ':pk': { S: runPartition(tenant, runId) },
            ':results': { S: 'result#' },
          },
        }),
      );
      expect(first.LastEvaluatedKey).toBeDefined();
      expect(first.Items?.length).toBeLessThan(150);
    },
  };
});

describe('AWS adapters', () => {
  it('keep big state in S3 by pointer, outside the run evidence, and drop replaced blobs', async () => {
    const { runs, evidence } = stores(aws);
    const big = 'x'.repeat(350_000);
    await runs.saveCheckpoint('pt', 'r', 's', { seq: 1, state: { big }, savedAt: '' });
    const blobs = await evidence.list('pt/_state/');
    expect(blobs).toHaveLength(1);
    expect(blobs[0]?.startsWith(runEvidencePrefix('pt', 'r'))).toBe(false);
    await runs.saveCheckpoint('pt', 'r', 's', { seq: 2, state: { big: `${big}!` }, savedAt: '' });
    const after = await evidence.list('pt/_state/');
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(blobs[0]);
    // A refused save leaves no blob behind.
    await runs.saveCheckpoint('pt', 'r', 's', { seq: 1, state: { big }, savedAt: '' });
    expect(await evidence.list('pt/_state/')).toEqual(after);
  });

  it('send the SHA-256 checksum header with every put', async () => {
    const seen: Record<string, string>[] = [];
    const { client, bucket } = aws.s3;
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { method?: string; headers?: Record<string, string> };
        if (request.method === 'PUT' && request.headers) seen.push({ ...request.headers });
        return next(args);
      },
      { step: 'finalizeRequest', name: 'recordPutHeaders' },
    );
    try {
      const store = new S3EvidenceStore({ client, bucket });
      const written = await store.put('sum/run_r/a.txt', 'checked bytes');
      const expected = createHash('sha256').update('checked bytes').digest();
      expect(written.sha256).toBe(expected.toString('hex'));
      expect(seen.at(-1)?.['x-amz-checksum-sha256']).toBe(expected.toString('base64'));
    } finally {
      client.middlewareStack.remove('recordPutHeaders');
    }
  });

  it('are what storesFromEnv picks when the table and bucket are set', async () => {
    const fromEnv = storesFromEnv(aws.env);
    expect(fromEnv.describe).toMatchObject({
      runs: `dynamodb:${aws.dynamo.table}`,
      evidence: `s3://${aws.s3.bucket}/`,
    });
    expect(await fromEnv.runs.createRun(runRecord('env', 'r1'))).toBe('written');
    // Written through the env-configured clients, read through the test's own: same table.
    expect((await stores(aws).runs.getRun('env', 'r1'))?.runId).toBe('r1');
    await fromEnv.evidence.put('env/run_r1/x.txt', 'x');
    expect(await stores(aws).evidence.list('env/')).toEqual(['env/run_r1/x.txt']);
  });

  it('keep running totals on the run item, a repeated result counted once, and status reads use them', async () => {
    const { runs, evidence } = stores(aws);
    const t = 'totals';
    await runs.createRun({ ...runRecord(t, 'r'), status: 'running' });
    await runs.putSamples([
      sampleRecord(t, 'r', 's1'),
      sampleRecord(t, 'r', 's2'),
      { ...sampleRecord(t, 'r', 's3'), status: 'running' },
    ]);
    await runs.updateSample(t, 'r', 's1', { status: 'running', attempts: 1 });
    // Four slices racing to write s1's result: the first write wins, and only it is counted.
    const usage = { promptTokens: 100, completionTokens: 20, cachedTokens: 5, costUsd: 0.25, ms: 1500 };
    const raced = await Promise.all(
      [1, 2, 3, 4].map((n) => runs.putResult({ ...resultRecord(t, 'r', 's1', { n }), usage })),
    );
    expect(raced.filter((w) => w === 'written')).toHaveLength(1);
    expect(await runs.putResult({ ...resultRecord(t, 'r', 's1'), usage })).toBe('exists');
    await runs.updateSample(t, 'r', 's1', { status: 'done' });
    await runs.putResult({ ...resultRecord(t, 'r', 's2'), status: 'failed', usage: { promptTokens: 7 } });
    // A resumed run puts its samples again: only the new one counts.
    await runs.putSamples([sampleRecord(t, 'r', 's1'), sampleRecord(t, 'r', 's4')]);

    const progress = await runs.runProgress(t, 'r');
    expect(progress).toMatchObject({
      samples: 4,
      running: 1,
      results: { done: 1, failed: 1 },
      promptTokens: 107,
      completionTokens: 20,
      cachedTokens: 5,
      costUsd: 0.25,
      sampleMs: 1500,
    });
    // The kept totals are exactly what counting every sample and result gives.
    const run = await runs.getRun(t, 'r');
    const counted = totalsOf(run!, await runs.listSamples(t, 'r'), await runs.listResults(t, 'r'));
    expect(counted).toMatchObject(totalsFromProgress(run!, progress!));
    expect(counted.counts).toMatchObject({ pending: 1, running: 1, done: 1, failed: 1 });

    // GET /v1/runs/{id} answers from them without listing a sample or a result.
    const listed: string[] = [];
    const watched = new Proxy(runs, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name === 'listSamples' || name === 'listResults') listed.push(name);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as RunStore;
    const app = new Hono<{ Variables: { tenant: string } }>();
    app.use('*', async (c, next) => {
      c.set('tenant', t);
      await next();
    });
    registerRunRoutes(app, { runStore: watched, evidence, launch: async () => undefined });
    const res = await app.request('/v1/runs/r');
    expect(res.status).toBe(200);
    expect(((await res.json()) as { totals: unknown }).totals).toEqual(totalsFromProgress(run!, progress!));
    expect(listed).toEqual([]);
    expect(await runs.runProgress(t, 'missing')).toBeUndefined();
  });
});
