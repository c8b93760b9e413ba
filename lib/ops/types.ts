import type { Action, ActionMethod } from '../actions/types.ts';
import type { PageInput } from '../browser/page-driver.ts';
import type { PageProblem } from '../browser/page-watch.ts';
import type { LlmClient, Usage } from '../llm/types.ts';
import type { Snapshot } from '../perception/types.ts';

/** Which tier answered: a cached past success, the deterministic matcher, the model, or the caller's own Action. */
export type ResolvedBy = 'cache' | 'matcher' | 'llm' | 'direct';

export type OpErrorKind =
  | 'no_model'
  | 'not_found'
  | 'not_actionable'
  | 'navigation'
  | 'timeout'
  | 'blocked'
  | 'invalid'
  | 'model'
  | 'unreachable'
  | 'browser_crashed';

export interface Candidate {
  id: number;
  role: string;
  name: string;
  score?: number;
}

export type OpLog = (event: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;

/** Per-call settings shared by act / observe / extract. */
export interface OpOptions {
  /** Scope the snapshot to the first match of a selector: CSS or XPath (`xpath=…`, `/…`, `(…`). */
  selector?: string;
  /**
   * When `selector` is not valid or matches nothing, read the whole page (and log it) instead of
   * failing: what Stagehand's SDK does. Our own API keeps the clear error.
   */
  selectorFallback?: boolean;
  /** Elements left out of the page read, with everything inside them: CSS or XPath each. */
  ignore?: string[];
  /** Use the set-of-marks screenshot: 'fallback' (default) when DOM confidence is low or no element was found. */
  vision?: 'fallback' | 'always' | 'never';
  /** Token budget for one prompt's page text. */
  budget?: number;
  timeoutMs?: number;
  /**
   * false: skip the zero-token matcher (and its compound split), so the model decides every time.
   * For measuring the model path on its own (bench:act-corpus --perfect); callers leave it unset.
   */
  matcher?: boolean;
}

export interface OpContext {
  /** The page: a driver (lib/browser/page-driver.ts), or on Node a Playwright Page, wrapped once. */
  page: PageInput;
  /** Absent when no model is configured: only the zero-token tiers can answer. */
  llm?: LlmClient;
  variables?: Record<string, string>;
  log?: OpLog;
  options?: OpOptions;
  /** Checks goto targets against the network guard. */
  checkNavigation?: (url: string) => Promise<void>;
  /** Zero-token tier 1 (action cache); optional. */
  cache?: ActionCacheLike;
  /** A main-frame navigation the guard refused or that never arrived since the last call (then cleared). */
  pageProblem?: () => Promise<PageProblem | undefined>;
  /** Aborted when the caller stops waiting (the request deadline): model calls stop with it. */
  signal?: AbortSignal;
  /**
   * Read-only calls (observe, extract) may answer from the page's last read when provably nothing
   * changed since (perception/held-read.ts). Worth it where one page takes many calls: sessions.
   */
  reuseReads?: boolean;
  /** The caller's standing instructions for every model call (the SDK's `systemPrompt`). */
  guidance?: string;
}

export interface ActionCacheLike {
  lookup(input: CacheQuery): Promise<CacheHit | undefined>;
  save(input: CacheQuery, actions: Action[], snapshot: Snapshot): Promise<void>;
  forget(input: CacheQuery): Promise<void>;
}

export interface CacheQuery {
  instruction: string;
  url: string;
  signature: string;
  variableNames: string[];
  /** The caller's standing instructions, when any: what the model chose under them is theirs. */
  guidance?: string;
}

export interface CacheHit {
  actions: Action[];
  key: string;
}

export interface ActResult {
  success: boolean;
  message: string;
  /** What was done, in words, with `%placeholders%` instead of secret values. */
  actionDescription: string;
  actions: Action[];
  usage: Usage;
  resolvedBy: ResolvedBy;
  cache?: 'hit' | 'miss' | 'healed';
  error?: { kind: OpErrorKind; message: string; candidates?: Candidate[]; url?: string };
  url: string;
  ms: number;
}

export interface ObservedElement {
  id: number;
  description: string;
  method: ActionMethod;
  arguments: string[];
  /** Durable locator (XPath chain across frames and shadow roots): pass it back to `act`. */
  selector: string;
  role: string;
  name: string;
  /** A checkbox's, radio's or switch's state when it was observed. */
  checked?: boolean;
}

export interface ObserveResult {
  elements: ObservedElement[];
  usage: Usage;
  resolvedBy: ResolvedBy;
  url: string;
  ms: number;
}

export interface ExtractResult<T = unknown> {
  data: T;
  usage: Usage;
  resolvedBy: ResolvedBy;
  /** Chunks of the page read before the model said it had everything. */
  chunks: { read: number; total: number };
  url: string;
  ms: number;
}

export class OpError extends Error {
  override name = 'OpError';
  /** Tokens the op spent before it failed (a model that found nothing still costs them). */
  usage?: Usage;
  constructor(
    readonly kind: OpErrorKind,
    message: string,
    readonly candidates?: Candidate[],
    /** The URL a blocked or unreachable navigation was headed for. */
    readonly url?: string,
  ) {
    super(message);
  }
}
