/**
 * One task over many URLs as a library call: the same run state machine, stores and evidence as
 * `browserfn run`, on local files, with the embedded browser. What `import { runTask } from
 * "browserfn"` gives a program.
 */
import { join } from 'node:path';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { sharedBrowser } from '../browser/session.ts';
import { createLlmClient } from '../llm/client.ts';
import { resolveModelConfig } from '../llm/config.ts';
import type { LlmClient } from '../llm/types.ts';
import { evidenceKey } from '../store/keys.ts';
import { LocalEvidenceStore } from '../store/local-evidence-store.ts';
import { LocalRunMemoryStore } from '../store/local-run-memory.ts';
import { LocalRunStore } from '../store/local-run-store.ts';
import type { ResultRecord, RunStatus } from '../store/ports.ts';
import { agentSliceRunner } from './agent-slice-binding.ts';
import { runHandlers } from './handlers.ts';
import { startLocalRun } from './local-runner.ts';
import { createRun } from './run-records.ts';
import { parseTaskSpec, type TaskSpecInput } from './task-spec.ts';

export interface RunTaskOptions {
  /** Where runs (`.browserfn/runs`) and evidence (`evidence/`) are kept; default the working folder. */
  dir?: string;
  tenant?: string;
  /** The model for the run's spec model name; default: from the environment, as the CLI does. */
  llmFor?: (model: string | undefined) => Promise<LlmClient | undefined>;
  /** Which URLs pages may load; default the environment's policy with the samples' own hosts allowed. */
  policy?: GuardPolicy;
  /** Called when each sample ends. */
  onSample?: (sampleId: string, status: string) => void;
}

export interface TaskRunResult {
  runId: string;
  status: RunStatus | 'unknown';
  /** One per finished sample, sorted by sample id. */
  results: ResultRecord[];
  /** Path of the merged CSV of every sample's data. */
  csvPath: string;
}

const fromEnvironment = async (model: string | undefined) => {
  const config = resolveModelConfig(model ? { model } : {});
  return config ? createLlmClient(config) : undefined;
};

export async function runTask(
  spec: TaskSpecInput,
  samples: { url: string; sampleId?: string; input?: Record<string, string> }[],
  opts: RunTaskOptions = {},
): Promise<TaskRunResult> {
  const base = opts.dir ?? process.cwd();
  const tenant = opts.tenant ?? 'local';
  const runStore = new LocalRunStore(join(base, '.browserfn', 'runs'));
  const evidence = new LocalEvidenceStore(join(base, 'evidence'));
  const runMemory = new LocalRunMemoryStore(join(base, '.browserfn', 'runs'));
  const parsed = parseTaskSpec(spec);
  const list = samples.map((s, i) => ({
    sampleId: s.sampleId ?? `s${String(i + 1).padStart(4, '0')}`,
    url: s.url,
    input: s.input ?? {},
  }));
  // The caller named these URLs: their hosts may be loaded (redirects elsewhere are still checked).
  const hosts = [...new Set(list.map((s) => new URL(s.url).host))];
  const policy = opts.policy ?? mergePolicy(policyFromEnv(), { allowHosts: hosts });
  const input = await createRun(runStore, evidence, { tenant, spec: parsed, samples: list });
  const handlers = runHandlers({
    runStore,
    evidence,
    runMemory,
    slices: agentSliceRunner,
    browser: sharedBrowser,
    policy,
    allowAuthFiles: true,
    llmFor: opts.llmFor ?? fromEnvironment,
    ...(opts.onSample
      ? {
          onSlice: (e: { sampleId: string; status: string; final: boolean }) =>
            e.final && opts.onSample?.(e.sampleId, e.status),
        }
      : {}),
  });
  await runStore.updateRun(tenant, input.runId, { status: 'running' });
  await startLocalRun(input, handlers).result;
  const run = await runStore.getRun(tenant, input.runId);
  const results = (await runStore.listResults(tenant, input.runId)).sort((a, b) =>
    a.sampleId.localeCompare(b.sampleId),
  );
  return {
    runId: input.runId,
    status: run?.status ?? 'unknown',
    results,
    csvPath: evidence.pathOf(evidenceKey(tenant, input.runId, 'combined.csv')),
  };
}
