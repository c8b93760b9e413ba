/**
 * What the run handlers are given: the stores, the slice runners per mode, the browser, the guard
 * policy, the model, and the progress hooks. One interface for the local runner, the queue consumer and
 * the Lambda functions.
 */
import type { Browser } from 'playwright-core';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import type { LlmClient } from '../llm/types.ts';
import type { EvidenceStore, RunStore, SampleStatus } from '../store/ports.ts';
import type { RunMemoryStore } from '../store/run-memory-ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import type { ItemsLocation } from './run-records.ts';
import type { SliceDeps, SliceRunner } from './slice-runner.ts';

export interface RunDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** Memory across the samples of a run (hints per site); absent → samples learn nothing from each other. */
  runMemory?: RunMemoryStore;
  slices: SliceRunner;
  /** Mode "workflow" samples (default: lib/runs/workflow-slice-binding.ts). */
  workflowSlices?: SliceRunner;
  /** The tenant's workflows, for mode "workflow" (absent: such samples fail saying so). */
  workflows?: WorkflowStore;
  browser: () => Promise<Browser>;
  /** Which URLs sample pages may load. */
  policy: GuardPolicy;
  /** The model for a run (its spec's `model`, else the configured default); undefined when none. */
  llmFor: (model: string | undefined) => Promise<LlmClient | undefined>;
  /** AWS: where the Distributed Map reads sample ids. Locally absent. */
  items?: ItemsLocation;
  /** Working time a slice gets before it checkpoints and hands over (default 540 s). */
  sliceBudgetMs?: number;
  /** Storage-state files on this machine may be read (the CLI); API callers name store keys only. */
  allowAuthFiles?: boolean;
  log?: SliceDeps['log'];
  /** Progress: called when a slice starts working on a sample. */
  onSliceStart?: (sampleId: string) => void;
  /** Progress: called when a slice ends. */
  onSlice?: (event: { sampleId: string; status: SampleStatus; final: boolean }) => void;
}
