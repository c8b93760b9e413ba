/**
 * Local AWS for tests: dynalite (DynamoDB API), s3rver (S3 API) and local-aws-sqs (SQS API) in one
 * child process on 127.0.0.1 random ports (see scripts/aws-emulators.ts for why a child), reached
 * through the real AWS SDK v3 clients. Start it once per test file (beforeAll) and stop it in afterAll.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { runTableDefinition } from '../../lib/store/dynamo-items.ts';

export type AwsService = 'dynamo' | 's3' | 'sqs';

/** s3rver checks signatures against these; dynalite and local-aws-sqs accept any. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
export const LOCAL_REGION = 'us-east-1';

export interface AwsLocal {
  dynamo: { endpoint: string; client: DynamoDBClient; table: string };
  s3: { endpoint: string; client: S3Client; bucket: string };
  sqs: { endpoint: string; client: SQSClient };
  /** Variables that point `storesFromEnv` (lib/store/config.ts) and any child process at the emulators. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

const SCRIPT = fileURLToPath(new URL('./scripts/aws-emulators.ts', import.meta.url));
/** The repository root, where `--import tsx` resolves from whatever the test's working folder is. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

function unstarted(service: AwsService): never {
  throw new Error(`startAwsLocal was not asked for ${service}`);
}

/** Starts the named emulators, creates the run table and the evidence bucket, and returns SDK clients. */
export async function startAwsLocal(services: AwsService[] = ['dynamo', 's3']): Promise<AwsLocal> {
  const s3Dir = await mkdtemp(join(tmpdir(), 'bfn-s3rver-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--import', 'tsx', SCRIPT, ...services],
    { cwd: ROOT, env: { ...process.env, S3RVER_DIRECTORY: s3Dir }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const ports = await new Promise<Partial<Record<AwsService, number>>>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`AWS emulators exited early (code ${code})`)));
    createInterface({ input: child.stdout! }).once('line', (line) => resolve(JSON.parse(line)));
  });
  child.removeAllListeners('exit');

  const endpoint = (service: AwsService) => `http://127.0.0.1:${ports[service]}`;
  const common = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const clients: Partial<AwsLocal> = {};
  const env: Record<string, string> = {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  };

  if (ports.dynamo) {
    const client = new DynamoDBClient({ ...common, endpoint: endpoint('dynamo') });
    const table = `browserfn-${randomUUID().slice(0, 8)}`;
    await client.send(new CreateTableCommand(runTableDefinition(table)));
    clients.dynamo = { endpoint: endpoint('dynamo'), client, table };
    Object.assign(env, { BROWSERFN_TABLE: table, BROWSERFN_DYNAMO_ENDPOINT: endpoint('dynamo') });
  }
  if (ports.s3) {
    const client = new S3Client({ ...common, endpoint: endpoint('s3'), forcePathStyle: true });
    const bucket = `browserfn-${randomUUID().slice(0, 8)}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    clients.s3 = { endpoint: endpoint('s3'), client, bucket };
    Object.assign(env, { BROWSERFN_BUCKET: bucket, BROWSERFN_S3_ENDPOINT: endpoint('s3') });
  }
  if (ports.sqs) {
    clients.sqs = {
      endpoint: endpoint('sqs'),
      client: new SQSClient({ ...common, endpoint: endpoint('sqs') }),
    };
    Object.assign(env, { BROWSERFN_SQS_ENDPOINT: endpoint('sqs') });
  }

  return {
    get dynamo() {
      return clients.dynamo ?? unstarted('dynamo');
    },
    get s3() {
      return clients.s3 ?? unstarted('s3');
    },
    get sqs() {
      return clients.sqs ?? unstarted('sqs');
    },
    env,
    async stop() {
      for (const c of [clients.dynamo, clients.s3, clients.sqs]) c?.client.destroy();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(s3Dir, { recursive: true, force: true });
    },
  };
}

export interface LocalQueue {
  queueUrl: string;
  dlqUrl: string;
  dlqArn: string;
}

/**
 * A queue with a dead-letter queue that takes messages received `maxReceiveCount` times and not deleted.
 * local-aws-sqs quirk: ChangeMessageVisibility counts as a receive there, so let failed messages come
 * back by a short `visibilityTimeoutSeconds` instead of setting their visibility to 0.
 */
export async function createQueueWithDlq(
  sqs: SQSClient,
  name: string,
  options: { maxReceiveCount?: number; visibilityTimeoutSeconds?: number } = {},
): Promise<LocalQueue> {
  const dlq = await sqs.send(new CreateQueueCommand({ QueueName: `${name}-dlq` }));
  const dlqUrl = dlq.QueueUrl ?? '';
  const attrs = await sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ['QueueArn'] }),
  );
  const dlqArn = attrs.Attributes?.QueueArn ?? '';
  const queue = await sqs.send(
    new CreateQueueCommand({
      QueueName: name,
      Attributes: {
        VisibilityTimeout: String(options.visibilityTimeoutSeconds ?? 30),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: dlqArn,
          maxReceiveCount: options.maxReceiveCount ?? 3,
        }),
      },
    }),
  );
  return { queueUrl: queue.QueueUrl ?? '', dlqUrl, dlqArn };
}
