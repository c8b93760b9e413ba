import { modelFor } from '../lib/api/run-op.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { sharedBrowser } from '../lib/browser/session.ts';
import { agentSliceRunner } from '../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../lib/runs/handlers.ts';
import { jsonLog } from '../lib/runs/json-log.ts';
import type { SampleRuntime } from '../lib/runs/queue/deps.ts';
import { itemsInBucket } from '../lib/runs/run-records.ts';
import { storesFromEnv } from '../lib/store/config.ts';
import type { EvidenceStore, RunStore } from '../lib/store/ports.ts';
import type { RunMemoryStore } from '../lib/store/run-memory-ports.ts';
import type { WorkflowStore } from '../lib/store/workflow-ports.ts';

/**
 * The run handlers as the Lambdas (plan, discover, agent-slice, merge) use them: one set per container,
 * the browser kept warm between invocations. Stores: DynamoDB + S3 when BROWSERFN_TABLE /
 * BROWSERFN_BUCKET are set (lib/store/config.ts), else local files under BROWSERFN_DATA_DIR.
 */
export function lambdaStores(env = process.env): {
  runStore: RunStore;
  evidence: EvidenceStore;
  runMemory: RunMemoryStore;
  workflows: WorkflowStore;
} {
  // Off Lambda too (tests, a local invoke), local files go where a Lambda keeps them.
  const s = storesFromEnv(env, { dataDir: env.BROWSERFN_DATA_DIR ?? '/tmp/browserfn' });
  return { runStore: s.runs, evidence: s.evidence, runMemory: s.runMemory, workflows: s.workflows };
}

const policy = policyFromEnv();
const bucket = process.env.BROWSERFN_BUCKET;

/** What every sample needs besides the stores; shared with the queue consumer (functions/queue.ts). */
export const runtime: SampleRuntime = {
  slices: agentSliceRunner,
  browser: sharedBrowser,
  policy,
  llmFor: (model) => modelFor(model ? { model } : {}, { policy }),
  // Leave time to checkpoint before the state's TimeoutSeconds and Lambda's own limit (infra/stack.ts
  // sets BROWSERFN_SLICE_MS from the function's timeout).
  sliceBudgetMs: Number(process.env.BROWSERFN_SLICE_MS ?? 540_000),
  log: jsonLog(),
};

export const handlers = runHandlers({
  ...lambdaStores(),
  ...runtime,
  // A planned or discovered run writes its sample ids where the Distributed Map reads them.
  ...(bucket ? { items: itemsInBucket(bucket, process.env.BROWSERFN_EVIDENCE_PREFIX?.trim() ?? '') } : {}),
});
