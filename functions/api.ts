import { handle } from 'hono/aws-lambda';
import { createApp } from '../lib/api/app.ts';
import { keysFromEnv } from '../lib/api/auth.ts';
import { awsRunsApi, sfnClientFromEnv } from '../lib/api/runs-aws.ts';
import { localRunsApi } from '../lib/api/runs-local.ts';
import { callRateFromEnv } from '../lib/api/tenant-gate.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../lib/browser/guard-proxy.ts';
import { closeSharedBrowser, sharedBrowser } from '../lib/browser/session.ts';
import { itemsInBucket } from '../lib/runs/run-records.ts';
import { storesFromEnv } from '../lib/store/config.ts';
import { withInvocationTmp } from './invocation-tmp.ts';

/**
 * Lambda entry for API Gateway (HTTP API, payload v2) and Function URLs. The browser stays warm
 * between invocations of the same container; each request gets its own context.
 */
const env = process.env;
const policy = policyFromEnv();
const log = (e: Record<string, unknown>) => console.log(JSON.stringify(e));
const stores = storesFromEnv(env);
const stateMachineArn = env.BROWSERFN_STATE_MACHINE_ARN?.trim();
const bucket = env.BROWSERFN_BUCKET?.trim();
if (stateMachineArn && !bucket)
  throw new Error(
    'BROWSERFN_STATE_MACHINE_ARN needs BROWSERFN_BUCKET: the Distributed Map reads samples from S3',
  );

// On AWS a run is a Step Functions execution. Without a state machine, runs execute in-process with
// the local runner, except on Lambda, where a frozen container would leave them `running` forever:
// there the runs routes stay off (404) until BROWSERFN_STATE_MACHINE_ARN is set.
const onLambda = Boolean(env.AWS_LAMBDA_FUNCTION_NAME);
const runs =
  stateMachineArn && bucket
    ? awsRunsApi({
        runStore: stores.runs,
        evidence: stores.evidence,
        stateMachineArn,
        items: itemsInBucket(bucket, env.BROWSERFN_EVIDENCE_PREFIX?.trim() ?? ''),
        client: sfnClientFromEnv(env),
        log,
        workflows: stores.workflows,
      })
    : onLambda
      ? undefined
      : localRunsApi({
          runStore: stores.runs,
          evidence: stores.evidence,
          workflows: stores.workflows,
          runMemory: stores.runMemory,
          browser: sharedBrowser,
          policy,
          log,
        });

// Each instance serves one call at a time, so the in-process per-key gate cannot hold a key back
// across instances: a rate kept in the shared store does.
const callRate = callRateFromEnv(env.BROWSERFN_CALLS_PER_SECOND_PER_KEY, stores.runs);

export const app = createApp({
  keys: keysFromEnv(),
  policy,
  browser: sharedBrowser,
  requestTimeoutMs: Number(env.BROWSERFN_REQUEST_TIMEOUT_MS ?? 25_000),
  log,
  ...(runs ? { runs } : {}),
  ...(callRate ? { callRate } : {}),
});

const served = handle(app);

/** Each invocation gets its own temp folder, removed when it ends (invocation-tmp.ts). */
export const handler = (...args: Parameters<typeof served>) =>
  // A browser that will not start fails only the calls that need it, as a JSON error, not every route.
  withInvocationTmp(() => served(...args), { warm: () => sharedBrowser().catch(() => undefined) });

/**
 * Closes the warm browser and the guard proxy with every connection it holds, after which nothing
 * of ours keeps the process alive (Lambda shutdown, tests, embedders).
 */
export async function shutdown(): Promise<void> {
  await closeSharedBrowser();
  await closeGuardProxies();
}
