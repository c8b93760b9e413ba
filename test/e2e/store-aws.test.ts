/**
 * The DynamoDB and S3 adapters through the real AWS SDK v3 against dynalite and s3rver: the same
 * contract as the local adapters, plus what only the AWS shape has (pointers to S3 for big state,
 * the checksum header, configuration from the environment) and the emulator's 1 MB query pages.
 */
import { createHash } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storesFromEnv } from '../../lib/store/config.ts';
import { runPartition } from '../../lib/store/dynamo-items.ts';
import { DynamoRunStore } from '../../lib/store/dynamo-run-store.ts';
import { runEvidencePrefix } from '../../lib/store/keys.ts';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { describeStoreContract, runRecord } from '../support/run-store-contract.ts';

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
});
