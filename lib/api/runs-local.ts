/**
 * The runs API on one machine: local-file stores and the local state machine, started in the
 * background by POST /v1/runs. (On AWS, `launch` starts a Step Functions execution instead.)
 */
import type { Browser } from 'playwright-core';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { agentSliceRunner } from '../runs/agent-slice-binding.ts';
import { runHandlers } from '../runs/handlers.ts';
import { abortLocalRun, activeLocalRuns, isLocalRunActive, startLocalRun } from '../runs/local-runner.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import type { RunMemoryStore } from '../store/run-memory-ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { modelFor } from './run-op.ts';
import type { RunsApiDeps } from './runs.ts';

export interface LocalRunsOptions {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** Memory across the samples of a run (lib/store/config.ts: beside the runs). */
  runMemory?: RunMemoryStore;
  browser: () => Promise<Browser>;
  policy: GuardPolicy;
  /** The tenant's workflows, for runs in mode "workflow". */
  workflows?: WorkflowStore;
  env?: NodeJS.ProcessEnv;
  /** Runs in progress per key, and samples at once per run (RunsApiDeps.limits); none by default. */
  limits?: RunsApiDeps['limits'];
  log?: (e: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;
}

export function localRunsApi(o: LocalRunsOptions): RunsApiDeps {
  const handlers = runHandlers({
    runStore: o.runStore,
    evidence: o.evidence,
    ...(o.runMemory ? { runMemory: o.runMemory } : {}),
    slices: agentSliceRunner,
    ...(o.workflows ? { workflows: o.workflows } : {}),
    browser: o.browser,
    policy: o.policy,
    llmFor: (model) =>
      modelFor(model ? { model } : {}, { policy: o.policy, ...(o.env ? { env: o.env } : {}) }),
    ...(o.log ? { log: o.log } : {}),
  });
  return {
    runStore: o.runStore,
    evidence: o.evidence,
    ...(o.workflows ? { workflows: o.workflows } : {}),
    launch: async (input) => {
      // Marked here, before any slice runs, so a cancel right after the start is never overwritten.
      await o.runStore.updateRun(input.tenant, input.runId, { status: 'running' });
      const execution = startLocalRun(input, handlers);
      execution.result.catch(async (err: Error) => {
        o.log?.({ level: 'warn', msg: 'run failed', runId: input.runId, error: err.message });
        const reason = err.message.split('\n')[0] ?? 'failed';
        // The failure may be the store itself (out of file handles, disk full): try again for a while
        // before giving up, so the run does not read as running forever. Status reads settle the rest.
        for (let attempt = 0; attempt < 6; attempt++) {
          try {
            await o.runStore.updateRun(input.tenant, input.runId, { status: 'failed', reason });
            return;
          } catch (writeErr) {
            o.log?.({
              level: 'warn',
              msg: 'could not mark the run failed',
              runId: input.runId,
              error: String(writeErr),
            });
            await new Promise((r) => setTimeout(r, 250 * 2 ** attempt));
          }
        }
      });
    },
    isActive: async (tenant, runId) => isLocalRunActive(tenant, runId),
    activeRuns: async (tenant) => activeLocalRuns(tenant),
    ...(o.limits ? { limits: o.limits } : {}),
    stop: async (tenant, runId) => {
      // The merged files then show what was finished when the run was cancelled.
      if (abortLocalRun(tenant, runId)) await handlers.merge({ tenant, runId });
    },
  };
}
