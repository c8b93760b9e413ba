/**
 * One sample's agent state as plain JSON. A slice reads it, works, and hands back the next one; the
 * next slice may run on another machine with a fresh browser. Secrets (`variables`) are never part
 * of it: they travel beside it in `AgentDeps` and are substituted only at the moment of typing.
 */
import { z } from 'zod';
import type { Json, JsonObject, SampleStatus } from '../store/ports.ts';

export const DEFAULT_MAX_STEPS = 20;
export const DEFAULT_MAX_ACTIONS_PER_STEP = 3;
export const DEFAULT_WALL_CLOCK_MS = 10 * 60_000;
/** Infrastructure errors in a row before the circuit breaker trips (the reference's 5). */
export const DEFAULT_MAX_INFRA_ERRORS = 5;

export const AgentTaskSchema = z
  .object({
    goal: z.string().trim().min(1, 'goal must not be empty'),
    /** JSON Schema of the data `done` should return. */
    schema: z.record(z.string(), z.unknown()).optional(),
    /** Dot paths that must be present in the final data (0 and false count as present). */
    requiredFields: z.array(z.string().min(1)).optional(),
    /** Screenshot labels that must have been saved before `done`. */
    requiredArtifacts: z.array(z.string().min(1)).optional(),
    /** Words that raise a page line's priority under the snapshot budget. */
    keywords: z.array(z.string().min(1)).optional(),
    maxSteps: z.number().int().min(1).max(500).optional(),
    /** `maxSteps` is a hard cap: no pagination bonus steps (a caller such as the Stagehand SDK promises that). */
    strictMaxSteps: z.boolean().optional(),
    /** Items the task expects (the longest array in the data is counted). */
    expectedItems: z.number().int().min(1).optional(),
    vision: z.enum(['fallback', 'always', 'never']).optional(),
    maxActionsPerStep: z.number().int().min(1).max(10).optional(),
    /** Working time of the sample across all its slices. */
    wallClockMs: z.number().int().min(1000).optional(),
    /** Infrastructure errors in a row that stop the sample as retryable (default 5). */
    maxInfraErrors: z.number().int().min(1).max(50).optional(),
    /** Standing instructions for this task (a run spec's systemPrompt, written by the planner). */
    systemPrompt: z.string().trim().min(1).max(4000).optional(),
    /** Token budget for the page outline in each step's prompt (default 3000). */
    pageBudget: z.number().int().min(300).max(50_000).optional(),
    /**
     * Scenario mode: steps carried out in order, each one goal ("open the settings", "turn on
     * dark mode"); the model marks each achieved with step_done, and done is accepted after the last.
     */
    steps: z.array(z.string().trim().min(1)).min(1).max(50).optional(),
    /**
     * Computer-use mode: a provider's computer-use model drives the page by screenshots and
     * coordinates instead of the page outline (canvas apps, drawn controls, key chords).
     */
    computerUse: z
      .object({
        model: z
          .string()
          .regex(
            /^(anthropic|openai|google)\/.+$/,
            'written "provider/model" with provider anthropic, openai or google',
          ),
        /** Screenshot format sent to the model (png default; jpeg is smaller and faster to encode). */
        format: z.enum(['png', 'jpeg']).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type AgentTask = z.infer<typeof AgentTaskSchema>;

export type AgentStatus = 'running' | Exclude<SampleStatus, 'pending' | 'running'>;

/** What the watchdog and the budgets remember between steps. */
export interface WatchdogState {
  /** URL + DOM hash of the page the last step saw. */
  lastSignature?: string;
  /** Steps in a row on the same page without new data. */
  stagnant: number;
  /** Highest stagnation level announced (0–3). */
  level: number;
  /** Hash of the accumulated data at the last step, to tell new data from none. */
  lastDataHash?: string;
  /** Hash of the last extract answer: new information read counts as progress too. */
  extractHash?: string;
  /** Action types on their URL (`click@host/path`) since the page or data last changed, newest last. */
  recentActions: string[];
  /** Failed actions in a row. */
  failuresInRow: number;
  warned75: boolean;
  warned90: boolean;
  /** Extra steps granted for pagination that kept yielding new items. */
  bonusSteps: number;
  /** A pagination click happened; the next new items grant bonus steps. */
  paginationPending: boolean;
  /** What `done` lacked last time (told to the model once). */
  bounce?: string;
  expectedNudged: boolean;
}

export interface UsageTotals {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costUsd: number;
  /** Model time. */
  ms: number;
  calls: number;
}

/** Run-local memory per domain: what worked and what failed there. */
export type DomainMemory = Record<string, { worked: string[]; failed: string[] }>;

/** One line of history the model sees again (compact, secrets already replaced). */
export interface HistoryEntry {
  step: number;
  url: string;
  /** `click [12] button "Sign in" → ok: navigated to /home` per action, joined. */
  actions: string;
  ok: boolean;
  memory?: string;
  nextGoal?: string;
}

export interface AgentState {
  version: 1;
  tenant: string;
  runId: string;
  sampleId: string;
  task: AgentTask;
  /** Where the page is now (where a resumed slice goes back to). */
  url: string;
  startUrl: string;
  input: Record<string, string>;
  /** Steps taken (model decisions acted on). */
  step: number;
  status: AgentStatus;
  reason?: string;
  /** Stopped by infrastructure trouble: running it again may succeed. */
  retryable?: boolean;
  /** Accumulated data (save_progress deep-merged, then done's data). */
  data: JsonObject;
  progressNotes: string[];
  /** Summary of history older than `history`. */
  summary: string;
  history: HistoryEntry[];
  /** Facts the model asked to keep (memory_update), newest last. */
  notes: string[];
  memory: DomainMemory;
  /**
   * Hints from earlier samples of the same run on this site (run memory), chosen once when the
   * sample starts and shown in its first steps; undefined until looked up.
   */
  runHints?: string[];
  watchdog: WatchdogState;
  usage: UsageTotals;
  /** Working milliseconds across slices (the wall-clock budget counts these). */
  activeMs: number;
  /** Evidence key of the browser's saved cookies and localStorage. */
  storageStatePointer?: string;
  /** Files written for this sample, in write order. */
  evidence: { key: string; sha256: string }[];
  /** Saved screenshot labels (for required artifacts). */
  artifacts: string[];
  screenshotCount: number;
  checkpointSeq: number;
  /** Step of the last checkpoint (resume redoes only steps after it). */
  checkpointStep: number;
  startedAt: string;
  infraErrorsInRow: number;
  slices: number;
  /** Scenario mode: index of the scenario step being worked on, and the notes of those achieved. */
  scenario?: { index: number; notes: string[] };
  /** Computer-use mode: where the provider's conversation is kept, and what the next turn reports. */
  cua?: CuaProgress;
}

export interface CuaProgress {
  /** Evidence key of the provider conversation saved at the last checkpoint (by reference, not inline). */
  conversationKey?: string;
  /** What the last turn's calls did, sent with the next screenshot. */
  pending: { callId: string; ok: boolean; message: string }[];
  /** Where the last click landed (CSS pixels): marked on the next screenshot. */
  marker?: { x: number; y: number };
  /** Hash of the last screenshot, and how many turns in a row it did not change. */
  lastShot?: string;
  unchanged: number;
}

export interface NewAgentStateInit {
  tenant: string;
  runId: string;
  sampleId: string;
  task: AgentTask;
  url: string;
  input?: Record<string, string>;
  /** Memory handed over from earlier samples of the same run. */
  memory?: DomainMemory;
}

export function newAgentState(init: NewAgentStateInit): AgentState {
  const task = AgentTaskSchema.parse(init.task);
  return {
    version: 1,
    tenant: init.tenant,
    runId: init.runId,
    sampleId: init.sampleId,
    task,
    url: init.url,
    startUrl: init.url,
    input: { ...(init.input ?? {}) },
    step: 0,
    status: 'running',
    data: {},
    progressNotes: [],
    summary: '',
    history: [],
    notes: [],
    memory: structuredClone(init.memory ?? {}),
    watchdog: {
      stagnant: 0,
      level: 0,
      recentActions: [],
      failuresInRow: 0,
      warned75: false,
      warned90: false,
      bonusSteps: 0,
      paginationPending: false,
      expectedNudged: false,
    },
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: 0, ms: 0, calls: 0 },
    activeMs: 0,
    evidence: [],
    artifacts: [],
    screenshotCount: 0,
    checkpointSeq: 0,
    checkpointStep: 0,
    startedAt: new Date().toISOString(),
    infraErrorsInRow: 0,
    slices: 0,
    ...(task.steps ? { scenario: { index: 0, notes: [] } } : {}),
  };
}

export const isFinal = (state: AgentState): boolean => state.status !== 'running';
export const maxStepsOf = (task: AgentTask): number => task.maxSteps ?? DEFAULT_MAX_STEPS;
/** Scenario steps not yet marked done (0 outside scenario mode). */
export const scenarioLeft = (state: AgentState): number =>
  state.task.steps ? state.task.steps.length - (state.scenario?.index ?? 0) : 0;

/** The step budget with pagination bonus steps. */
export const effectiveMaxSteps = (state: AgentState): number =>
  maxStepsOf(state.task) + state.watchdog.bonusSteps;

/** The state as the JsonObject a checkpoint stores (it is plain JSON already). */
export const stateToJson = (state: AgentState): JsonObject => state as unknown as JsonObject;

/** A checkpoint's JSON back to a state; refuses anything that is not a version-1 agent state. */
export function stateFromJson(json: JsonObject): AgentState {
  const s = json as unknown as Partial<AgentState>;
  if (s.version !== 1 || typeof s.runId !== 'string' || typeof s.sampleId !== 'string' || !s.task)
    throw new Error('checkpoint does not hold a version-1 agent state');
  return s as AgentState;
}

/** One step as it is logged (action_log.json) and reported live (CLI, onStep). */
export interface StepRecord {
  step: number;
  url: string;
  /** URL + DOM hash of the page the step saw. */
  signature: string;
  evaluation?: string;
  memory?: string;
  nextGoal?: string;
  /** `what`: the action by role and name (`click tab "Details"`), what run memory is distilled from. */
  actions: { tool: string; input: Json; ok: boolean; outcome: string; ms: number; what?: string }[];
  tokens: { prompt: number; completion: number; cached: number };
  /** Where the step's time went: reading the page, the model, carrying out the actions. */
  observeMs: number;
  modelMs: number;
  actMs: number;
  ms: number;
  notices: string[];
}
