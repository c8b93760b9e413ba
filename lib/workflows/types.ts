/**
 * The contracts of the workflow engine: the plain-JSON state a run carries between slices, what each
 * node hands back, and what the imperative shell gives the node runners. The executor's core is a pure
 * step function over `WorkflowState`; browser, model and storage arrive through `WorkflowDeps`.
 */
import type { Page } from 'playwright-core';
import type { OnThrottle } from '../browser/navigate.ts';
import type { LlmClient, Usage } from '../llm/types.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import type {
  BrowserQueryConfigSchema,
  LocatorCandidate,
  NodeType,
  Workflow,
  WorkflowNode,
} from './schema.ts';

/**
 * How a node's result was reached. `deterministic`: no model and no healing (navigation, CSS
 * checks, transforms, a pinned target's first candidates); `static-html`: read from the page's
 * served HTML in Node, with no browser (static-read.ts); `heal-matcher` / `heal-llm`: the pinned
 * target failed and was found again by the zero-token matcher or one observe-only model call;
 * `cache` / `matcher` / `llm`: an AI node answered by that tier of the ops; `agent`: the agent loop.
 */
export type NodeResolvedBy =
  | 'deterministic'
  | 'static-html'
  | 'heal-matcher'
  | 'heal-llm'
  | 'cache'
  | 'matcher'
  | 'llm'
  | 'agent';

/** Deterministic and AI failures read differently (the reference's two error shapes). */
export interface NodeError {
  /** `deterministic`: a selector / post-condition / expression failed; `ai`: a model could not do it. */
  kind: 'deterministic' | 'ai' | 'input';
  /** One line: "Element not found: #submit". */
  message: string;
  /** What to do about it, in words a person acts on. */
  resolution: string;
  selector?: string;
  instruction?: string;
}

/** A healed pinned step: written into a new workflow version only once its post-conditions held. */
export interface HealRecord {
  alias: string;
  /** Node path in the document (`nodes.3`, `nodes.2.config.nodes.0`). */
  path: string;
  url: string;
  old: LocatorCandidate[];
  new: LocatorCandidate[];
  via: 'matcher' | 'llm';
  /** Why the old candidates failed. */
  reason: string;
  /** The post-conditions (and the judge, when the run has one) confirmed the healed step. */
  confirmed: boolean;
  /**
   * An extractor's heal (`browser_query` extract): the extractor derived again from what the model
   * read on this page, checked to give back exactly that; it replaces the node's. `old` / `new` then
   * list the fields' selectors as CSS candidates, for people reading the record.
   */
  extractor?: ExtractorSpec;
}

/** A deterministic extractor as the document holds it. */
export type ExtractorSpec = Extract<
  import('zod').infer<typeof BrowserQueryConfigSchema>,
  { method: 'extract' }
>['extractor'];

export interface NodeResult {
  alias: string;
  type: NodeType;
  status: 'ok' | 'failed' | 'skipped';
  output?: Json;
  error?: NodeError;
  usage: Usage;
  resolvedBy: NodeResolvedBy;
  ms: number;
  heal?: HealRecord;
  attempts?: number;
}

/** One frame of the cursor: which list of nodes the executor is in and where. */
export interface CursorFrame {
  /** Path of the node list in the document (`nodes`, `nodes.4.config.nodes`, `nodes.2.config.branches.1.nodes`). */
  list: string;
  index: number;
  /** Inside an iterate: which element, and the scope value it binds. */
  iteration?: { alias: string; index: number; as: string; item: Json };
  /** Inside a handle: attempt number of its body. */
  attempt?: number;
  /** What this list belongs to: the root, or the control node (by path) whose body it is. */
  kind?: 'root' | 'iterate' | 'route' | 'group' | 'handle-body' | 'handle-fallback';
  /** Path of the control node that owns this list. */
  owner?: string;
  /** An iterate's elements (evaluated once when it starts) and each iteration's outputs so far. */
  items?: Json[];
  collected?: Json[];
  /** A concurrent iterate: iterations at once, the next element to start, and the lanes under way. */
  concurrency?: number;
  next?: number;
  lanes?: IterationLane[];
}

/**
 * One iteration of a concurrent iterate, running in its own tab: a whole executor state of its own
 * (plain JSON like the parent's), kept in the parent's frame between slices so it resumes at the node
 * it reached, never from the top of the body.
 */
export interface IterationLane {
  index: number;
  state: WorkflowState;
  /** Names the lane's state carries only as scope (outer loop items), dropped when it merges back. */
  scopeNames: string[];
}

/** A workflow run's state as plain JSON: checkpointed between slices like `AgentState`. */
export interface WorkflowState {
  version: 1;
  tenant: string;
  runId: string;
  sampleId: string;
  /** Which workflow (store id + version, or the document's hash when it was given inline). */
  workflow: { id?: string; version: number; name: string; hash: string };
  inputs: JsonObject;
  /** Where the executor is: a stack of frames, outermost first. Empty when finished. */
  cursor: CursorFrame[];
  /** Results by alias; inside iterations keyed `alias[i]`. */
  results: Record<string, NodeResult>;
  /** Outputs by alias, what templates and expressions read. */
  outputs: JsonObject;
  /** `context` node values. */
  context: JsonObject;
  /** What the workflow returns: outputs of nodes with `store_variable`. */
  data: JsonObject;
  status: 'running' | 'done' | 'failed';
  reason?: string;
  /** The failing node's alias, when failed. */
  failedAt?: string;
  url: string;
  tabs: { name: string; url: string }[];
  currentTab: string;
  usage: {
    promptTokens: number;
    completionTokens: number;
    cachedTokens: number;
    costUsd: number;
    calls: number;
    ms: number;
  };
  heals: HealRecord[];
  /** Nodes executed (across slices). */
  steps: number;
  evidence: { key: string; sha256: string }[];
  startedAt: string;
  slices: number;
}

/** What the imperative shell gives the node runners. */
export interface WorkflowDeps {
  page: Page;
  /** Opens another tab in the same context (openNewTab, concurrent iterations). */
  newTab?: () => Promise<Page>;
  /** Absent: AI nodes fail with a clear "no model" error, deterministic ones run as usual. */
  llm?: LlmClient;
  /** Secrets: `%name%` in values is filled at the last step; never logged, stored or sent to a model. */
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  /** A run's pacing: a site answering "too many requests" pauses its host, and is asked again after. */
  onThrottle?: OnThrottle;
  /** Saves evidence (screenshots, heal records); returns the stored key and hash. */
  saveEvidence?: (
    file: string,
    body: Uint8Array | string,
    contentType: string,
  ) => Promise<{ key: string; sha256: string }>;
  log?: (event: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;
  signal?: AbortSignal;
  /** Runs the agent on a sub-goal (the `agent` node); absent: the node fails with the reason. */
  runAgent?: (
    goal: string,
    config: { maxSteps?: number; schema?: Record<string, unknown>; requiredFields?: string[] },
  ) => Promise<{
    ok: boolean;
    data: Json;
    reason: string;
    usage: Usage;
  }>;
}

/** Everything a node runner reads: the node with its templates already filled, and the scope. */
export interface NodeRun {
  node: WorkflowNode;
  /** Path of the node in the document. */
  path: string;
  /** `{ inputs, context, <alias>: output, <iterate as>: item }` — what templates and expressions see. */
  scope: JsonObject;
  workflow: Workflow;
  deps: WorkflowDeps;
}

/** One leaf node type's behaviour (control nodes are the executor's own). */
export type NodeRunner = (run: NodeRun) => Promise<NodeResult>;
