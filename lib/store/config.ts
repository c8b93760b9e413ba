/**
 * Which store adapters a process uses, from its environment:
 *
 *   BROWSERFN_TABLE            DynamoDB table for runs (RunStore); unset → local files
 *   BROWSERFN_BUCKET           S3 bucket for evidence (EvidenceStore); unset → local files
 *   BROWSERFN_EVIDENCE_PREFIX  key prefix inside the bucket (default none)
 *   BROWSERFN_DYNAMO_ENDPOINT  DynamoDB endpoint override (tests: dynalite)
 *   BROWSERFN_S3_ENDPOINT      S3 endpoint override (tests: s3rver; path-style addressing is used)
 *   BROWSERFN_RUNS_DIR         local RunStore root (default `.browserfn/runs`)
 *   BROWSERFN_EVIDENCE_DIR     local EvidenceStore root (default `evidence`)
 *   BROWSERFN_WORKFLOWS_DIR    local WorkflowStore root (default `.browserfn/workflows`; on AWS the
 *                              run table + bucket hold workflows)
 *   BROWSERFN_WORKFLOW_VERIFY_AFTER  identical successes before a workflow version is verified (default 3)
 *
 * Region and credentials: AWS_REGION and AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN
 * from the env given, else the AWS SDK's usual chain (profiles, roles).
 */
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoRunMemoryStore } from './dynamo-run-memory.ts';
import { DynamoRunStore } from './dynamo-run-store.ts';
import { DynamoWorkflowStore } from './dynamo-workflow-store.ts';
import { LocalEvidenceStore } from './local-evidence-store.ts';
import { LocalRunMemoryStore } from './local-run-memory.ts';
import { LocalRunStore } from './local-run-store.ts';
import { LocalWorkflowStore } from './local-workflow-store.ts';
import type { EvidenceStore, RunStore } from './ports.ts';
import type { RunMemoryStore } from './run-memory-ports.ts';
import { S3EvidenceStore } from './s3-evidence-store.ts';
import { DEFAULT_VERIFY_AFTER, type WorkflowStore } from './workflow-ports.ts';

export interface Stores {
  runs: RunStore;
  evidence: EvidenceStore;
  /** Versioned workflows (issue 23): the run table + bucket on AWS, local files otherwise. */
  workflows: WorkflowStore;
  /** What samples of a run learned per site, for the run's later samples: beside the runs. */
  runMemory: RunMemoryStore;
  /** Where each store lives, for logs and the CLI (`dynamodb:<table>`, `s3://bucket/prefix`, a path). */
  describe: { runs: string; evidence: string; workflows: string };
}

export interface StoreConfigOptions {
  /** Base for the local default folders (default: the current directory). */
  cwd?: string;
  /**
   * Local files in one folder, `runs/` and `evidence/` (default on Lambda: BROWSERFN_DATA_DIR, else
   * /tmp/browserfn). BROWSERFN_RUNS_DIR / BROWSERFN_EVIDENCE_DIR still win.
   */
  dataDir?: string;
}

type Env = Record<string, string | undefined>;

const nonEmpty = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

function checkEndpoint(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be a URL such as http://127.0.0.1:4567, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${name} must be an http(s) URL, got "${value}"`);
  }
  return value;
}

/** The stores named by `env` (process.env by default); local files when nothing AWS is set. */
export function storesFromEnv(env: Env = process.env, options: StoreConfigOptions = {}): Stores {
  // A Lambda's code directory is read-only: its local files live in one folder under /tmp.
  const onLambda = Boolean(nonEmpty(env.AWS_LAMBDA_FUNCTION_NAME));
  const dataDir =
    options.dataDir ?? (onLambda ? (nonEmpty(env.BROWSERFN_DATA_DIR) ?? '/tmp/browserfn') : undefined);
  const cwd = dataDir ?? options.cwd ?? process.cwd();
  const defaults = dataDir
    ? { runs: 'runs', evidence: 'evidence', workflows: 'workflows' }
    : { runs: '.browserfn/runs', evidence: 'evidence', workflows: '.browserfn/workflows' };
  const verifyAfter = verifyAfterFrom(env.BROWSERFN_WORKFLOW_VERIFY_AFTER);
  const table = nonEmpty(env.BROWSERFN_TABLE);
  const bucket = nonEmpty(env.BROWSERFN_BUCKET);
  const dynamoEndpoint = checkEndpoint('BROWSERFN_DYNAMO_ENDPOINT', nonEmpty(env.BROWSERFN_DYNAMO_ENDPOINT));
  const s3Endpoint = checkEndpoint('BROWSERFN_S3_ENDPOINT', nonEmpty(env.BROWSERFN_S3_ENDPOINT));
  // An endpoint override means an emulator or a compatible service: give the SDK a region if none is set.
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  // Keys in the env given (which may not be process.env) win; otherwise the SDK's own chain (roles…).
  const aws = {
    ...(region ? { region } : {}),
    ...(accessKeyId && secretAccessKey
      ? { credentials: { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) } }
      : {}),
  };

  let evidence: EvidenceStore;
  let evidenceWhere: string;
  if (bucket) {
    const prefix = nonEmpty(env.BROWSERFN_EVIDENCE_PREFIX) ?? '';
    const client = new S3Client({
      ...(s3Endpoint ? { region: 'us-east-1' } : {}),
      ...aws,
      ...(s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : {}),
    });
    evidence = new S3EvidenceStore({ client, bucket, prefix });
    evidenceWhere = `s3://${bucket}/${prefix}`;
  } else {
    const root = resolve(cwd, nonEmpty(env.BROWSERFN_EVIDENCE_DIR) ?? defaults.evidence);
    evidence = new LocalEvidenceStore(root);
    evidenceWhere = root;
  }

  let runs: RunStore;
  let runMemory: RunMemoryStore;
  let runsWhere: string;
  let workflows: WorkflowStore;
  let workflowsWhere: string;
  if (table) {
    if (!bucket) {
      // Large checkpoints and results leave the table for the bucket; a Lambda has no lasting disk.
      throw new Error('BROWSERFN_TABLE needs BROWSERFN_BUCKET too: large run state is kept in S3 by pointer');
    }
    const client = new DynamoDBClient({
      ...(dynamoEndpoint ? { region: 'us-east-1' } : {}),
      ...aws,
      ...(dynamoEndpoint ? { endpoint: dynamoEndpoint } : {}),
    });
    runs = new DynamoRunStore({ client, table, blobs: evidence });
    runMemory = new DynamoRunMemoryStore({ client, table });
    runsWhere = `dynamodb:${table}`;
    workflows = new DynamoWorkflowStore({ client, table, blobs: evidence, verifyAfter });
    workflowsWhere = `dynamodb:${table}`;
  } else {
    const root = resolve(cwd, nonEmpty(env.BROWSERFN_RUNS_DIR) ?? defaults.runs);
    runs = new LocalRunStore(root);
    runMemory = new LocalRunMemoryStore(root);
    runsWhere = root;
    workflowsWhere = resolve(cwd, nonEmpty(env.BROWSERFN_WORKFLOWS_DIR) ?? defaults.workflows);
    workflows = new LocalWorkflowStore(workflowsWhere, { verifyAfter });
  }

  return {
    runs,
    evidence,
    workflows,
    runMemory,
    describe: { runs: runsWhere, evidence: evidenceWhere, workflows: workflowsWhere },
  };
}

function verifyAfterFrom(value: string | undefined): number {
  const text = nonEmpty(value);
  if (text === undefined) return DEFAULT_VERIFY_AFTER;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new Error(`BROWSERFN_WORKFLOW_VERIFY_AFTER must be a whole number from 1 to 1000, got "${text}"`);
  }
  return n;
}
