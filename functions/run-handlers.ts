import { modelFor } from '../lib/api/run-op.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { sharedBrowser } from '../lib/browser/session.ts';
import { agentSliceRunner } from '../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../lib/runs/handlers.ts';
import { itemsInBucket } from '../lib/runs/run-records.ts';
import { storesFromEnv } from '../lib/store/config.ts';

/**
 * The run handlers as the Lambdas (agent-slice, plan, merge) use them: one set per container, the
 * browser kept warm between invocations. Stores from the environment (lib/store/config.ts): on AWS
 * BROWSERFN_TABLE + BROWSERFN_BUCKET (DynamoDB + S3); unset, local files.
 */
const env = process.env;
const stores = storesFromEnv(env);
const policy = policyFromEnv();
const bucket = env.BROWSERFN_BUCKET?.trim();

export const handlers = runHandlers({
  runStore: stores.runs,
  evidence: stores.evidence,
  slices: agentSliceRunner,
  browser: sharedBrowser,
  policy,
  llmFor: (model) => modelFor(model ? { model } : {}, { policy }),
  // Leave time to checkpoint before the state's TimeoutSeconds and Lambda's own limit (infra/stack.ts
  // sets BROWSERFN_SLICE_MS from the function's timeout).
  sliceBudgetMs: Number(env.BROWSERFN_SLICE_MS ?? 540_000),
  // A planned run writes its sample ids where the Distributed Map reads them.
  ...(bucket ? { items: itemsInBucket(bucket, env.BROWSERFN_EVIDENCE_PREFIX?.trim() ?? '') } : {}),
  log: (e) => console.log(JSON.stringify(e)),
});
