import { join } from 'node:path';
import { modelFor } from '../lib/api/run-op.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { sharedBrowser } from '../lib/browser/session.ts';
import { agentSliceRunner } from '../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../lib/runs/handlers.ts';
import { runEvidencePrefix } from '../lib/store/keys.ts';
import { LocalEvidenceStore } from '../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../lib/store/local-run-store.ts';
import type { EvidenceStore, RunStore } from '../lib/store/ports.ts';

/**
 * The run handlers as the Lambdas (agent-slice, plan, merge) use them: one set per container, the
 * browser kept warm between invocations. Stores: local files under BROWSERFN_DATA_DIR until the
 * DynamoDB + S3 adapters are wired here (lib/store/config.ts).
 */
function stores(): { runStore: RunStore; evidence: EvidenceStore } {
  const root = process.env.BROWSERFN_DATA_DIR ?? '/tmp/browserfn';
  return {
    runStore: new LocalRunStore(join(root, 'runs')),
    evidence: new LocalEvidenceStore(join(root, 'evidence')),
  };
}

const policy = policyFromEnv();
const bucket = process.env.BROWSERFN_BUCKET;

export const handlers = runHandlers({
  ...stores(),
  slices: agentSliceRunner,
  browser: sharedBrowser,
  policy,
  llmFor: (model) => modelFor(model ? { model } : {}, { policy }),
  // Leave time to checkpoint before the state's TimeoutSeconds (600 s) and Lambda's own limit.
  sliceBudgetMs: Number(process.env.BROWSERFN_SLICE_BUDGET_MS ?? 540_000),
  ...(bucket
    ? {
        items: (tenant: string, runId: string) => ({
          bucket,
          key: `${runEvidencePrefix(tenant, runId)}items.json`,
          resultsPrefix: `${runEvidencePrefix(tenant, runId)}map-results`,
        }),
      }
    : {}),
  log: (e) => console.log(JSON.stringify(e)),
});
