/**
 * What runs needs from the agent (lib/agent), as an injected interface: make a sample's first state,
 * and run one slice of it. `agent-slice-binding.ts` is the one file that names the real implementation.
 */

import type { Page } from 'playwright-core';
import type { OnThrottle } from '../browser/navigate.ts';
import type { LlmClient } from '../llm/types.ts';
import type { Scenario } from '../scenarios/spec.ts';
import type { EvidenceStore, Json, RunStore } from '../store/ports.ts';
import type { RunMemoryStore } from '../store/run-memory-ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import type { TaskSpec } from './task-spec.ts';
import type { RunStaticRead } from './workflow-static.ts';

/** The agent's task as lib/agent takes it (AgentTask). */
export interface SliceTask {
  goal: string;
  /** `extract` reads the sample page once; `agent` (default) runs lib/agent's loop; `workflow` replays one. */
  mode?: 'agent' | 'extract' | 'cua' | 'workflow' | 'scenario';
  /** Mode "scenario": the steps each sample carries out (lib/runs/scenario-slice-binding.ts). */
  scenario?: Scenario;
  /** Mode "workflow": the stored workflow (an inline one was stored for the run by the handler). */
  workflow?: { id: string; version?: number };
  /** Mode "workflow": what a sample whose workflow fails does (default none: it fails). */
  fallback?: 'agent' | 'none';
  /** Mode "workflow": refuse a version that is not verified. */
  requireVerified?: boolean;
  /** The spec has a judge: a workflow sample's heals are written back only after its pass. */
  judged?: boolean;
  schema?: Record<string, unknown>;
  requiredFields?: string[];
  requiredArtifacts?: string[];
  keywords?: string[];
  maxSteps?: number;
  expectedItems?: number;
  vision?: 'fallback' | 'always' | 'never';
  wallClockMs?: number;
  /** Infrastructure errors in a row that trip the circuit breaker. */
  maxInfraErrors?: number;
  /** Standing instructions in the agent's system prompt (the spec's systemPrompt). */
  systemPrompt?: string;
  /** Computer-use mode: the provider's computer-use model drives the page by screenshots. */
  computerUse?: { model: string; format?: 'png' | 'jpeg' };
}

export type SliceStatus = 'running' | 'done' | 'partial_success' | 'failed' | 'needs_review';

export interface SliceUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costUsd: number;
  ms: number;
}

/** The fields of the agent's plain-JSON state that runs reads; the rest is the agent's own. */
export interface SliceState {
  version: 1;
  tenant: string;
  runId: string;
  sampleId: string;
  task: SliceTask;
  url: string;
  input: Record<string, string>;
  step: number;
  status: SliceStatus;
  reason?: string;
  data: Json;
  usage: SliceUsage;
  evidence: { key: string; sha256: string }[];
  checkpointSeq: number;
}

export interface SliceDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** What earlier samples of the run learned per site (agent mode reads and adds to it). */
  runMemory?: RunMemoryStore;
  llm?: LlmClient;
  /** A cheaper model for history summaries; `llm` when absent. */
  summaryLlm?: LlmClient;
  /** A fresh isolated context (auth profile loaded) and its page; `close` ends the context. */
  newPage: () => Promise<{ page: Page; close: () => Promise<void> }>;
  checkNavigation?: (url: string) => Promise<void>;
  /** The sample's page answered "too many requests": pause the host for the run and wait. */
  onThrottle?: OnThrottle;
  variables?: Record<string, string>;
  /** Mode "workflow": a page may be read from its served HTML under this guard policy (absent: always the browser). */
  staticRead?: RunStaticRead;
  /** Mode "workflow": where its versions are read, healed versions written and outcomes counted. */
  workflows?: WorkflowStore;
  log?: (event: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;
}

export interface SliceRunner {
  newState(init: {
    tenant: string;
    runId: string;
    sampleId: string;
    task: SliceTask;
    url: string;
    input?: Record<string, string>;
  }): SliceState;
  /** Works until the sample ends or `deadline` (epoch ms) nears; checkpoints and the one result are its job. */
  runSlice(state: SliceState, deps: SliceDeps, opts: { deadline: number }): Promise<SliceState>;
}

export const isFinal = (status: SliceStatus) => status !== 'running';

/** The spec's fields in the agent's task shape. */
export function taskFromSpec(spec: TaskSpec): SliceTask {
  return {
    goal: spec.goal,
    mode: spec.mode,
    ...(spec.outputSchema ? { schema: spec.outputSchema } : {}),
    ...(spec.requiredFields ? { requiredFields: spec.requiredFields } : {}),
    ...(spec.requiredArtifacts ? { requiredArtifacts: spec.requiredArtifacts } : {}),
    ...(spec.keywords ? { keywords: spec.keywords } : {}),
    maxSteps: spec.maxSteps,
    ...(spec.expectedItems ? { expectedItems: spec.expectedItems } : {}),
    vision: spec.vision,
    ...(spec.wallClockSeconds ? { wallClockMs: spec.wallClockSeconds * 1000 } : {}),
    ...(spec.maxInfraErrors ? { maxInfraErrors: spec.maxInfraErrors } : {}),
    ...(spec.systemPrompt ? { systemPrompt: spec.systemPrompt } : {}),
    ...(spec.computerUse ? { computerUse: spec.computerUse } : {}),
    ...(spec.mode === 'scenario' && spec.scenario ? { scenario: spec.scenario as Scenario } : {}),
    ...(spec.mode === 'workflow'
      ? {
          fallback: spec.fallback,
          ...(spec.requireVerified ? { requireVerified: true } : {}),
          ...(spec.judge ? { judged: true } : {}),
        }
      : {}),
  };
}
