import type { Page } from 'playwright-core';
import type { OnThrottle } from '../browser/navigate.ts';
import type { ComputerUseModel } from '../llm/computer-use/types.ts';
import type { LlmClient } from '../llm/types.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import type { RunMemoryStore } from '../store/run-memory-ports.ts';
import type { StepRecord } from './state.ts';

/** A log event; every string in it has had secret values replaced by their `%name%` first. */
export type AgentLogEvent = { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown };

/** What a slice needs from outside: stores, models, a way to get a fresh guarded page. */
export interface AgentDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  llm: LlmClient;
  /**
   * What earlier samples of the run learned per site: read when a sample starts, added to when it
   * ends. Absent: no memory is carried between samples (a one-off agent call).
   */
  runMemory?: RunMemoryStore;
  /** A cheaper model for history summaries (default: `llm`). */
  summaryLlm?: LlmClient;
  /** A fresh guarded browser context with one page. */
  newPage: () => Promise<{ page: Page; close(): Promise<void> }>;
  /** Checks a navigation target against the network guard (throws when it is not allowed). */
  checkNavigation?: (url: string) => Promise<void>;
  /** The start page answered "too many requests": pause the host and wait (a run's shared buckets). */
  onThrottle?: OnThrottle;
  /** Secrets: the model sees `%name%`, the page gets the value. Never stored, logged or sent. */
  variables?: Record<string, string>;
  log?: (event: AgentLogEvent) => void;
  onStep?: (step: StepRecord) => void;
  /** Aborted when the caller stopped waiting (its deadline, a client gone): no step or action follows. */
  signal?: AbortSignal;
  /** How long one tool call may take before it counts as failed (default TOOL_TIMEOUT_MS, 60 s; tests). */
  toolTimeoutMs?: number;
  /** Computer-use mode's model; built from `task.computerUse.model` and the environment when absent. */
  computerUse?: ComputerUseModel;
}

export interface SliceOptions {
  /** Epoch ms: the slice checkpoints and returns before this. */
  deadline: number;
  /** Stop after this many steps in this slice (tests, step-wise drivers). */
  maxSteps?: number;
}
