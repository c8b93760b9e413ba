/**
 * Reading pages without a browser, as adaptive crawlers do: a workflow that only opens a page and
 * reads it by CSS does not need Chromium when the page's served HTML already holds the data.
 *
 * - At compile (and when a healed version is saved) `checkStaticRead` runs each extractor both ways —
 *   on the rendered page and on the served HTML fetched through the network guard and parsed in
 *   Node — and marks the workflow `staticRead.verified` only when the two give the same data.
 * - At replay `replayStatic` fetches and parses instead of opening a page. Right or nothing: a field
 *   with nothing, a value that does not read as its type, a non-2xx or non-HTML answer, a run that
 *   carries auth (cookies, profile, headers) — each sends that page to the browser instead, and the
 *   result's `resolvedBy` says which path read it (`static-html` or the browser's `deterministic`).
 * - `StaticGate` re-reads one static page in N with the browser during a run; on a difference the
 *   rest of the run goes to the browser (a site that started filling its data by script).
 */
import type { Page } from 'playwright-core';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { type OnThrottle, throttledBy, throttleReason } from '../browser/navigate.ts';
import { fetchHtml } from '../browser/static-fetch.ts';
import { emptyUsage } from '../llm/types.ts';
import { redactText } from '../perception/redact.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import {
  applyResult,
  finishFrame,
  type NewWorkflowStateInit,
  NOT_TEMPLATES,
  newWorkflowState,
  scopeOf,
} from './executor-core.ts';
import { applyExtractor, type Extractor, sameData } from './extractor.ts';
import { transformOn } from './nodes/transform.ts';
import type { StaticRead, Workflow, WorkflowNode } from './schema.ts';
import { parsePage, readPage, staticMiss } from './static-html.ts';
import { fillTemplates } from './templates.ts';
import type { NodeResult, WorkflowState } from './types.ts';
import { resolveInputs } from './validate.ts';

type Navigate = Extract<WorkflowNode, { type: 'browser_action' }>;
type Read = Extract<WorkflowNode, { type: 'browser_query' }>;
type Transform = Extract<WorkflowNode, { type: 'transform' }>;

export type StaticShape =
  | {
      ok: true;
      navigate: Navigate;
      /** The CSS reads (what the compile check compares) … */
      reads: Read[];
      /** … and, in document order, every node after the navigate: the reads and the transforms. */
      steps: (Read | Transform)[];
    }
  | { ok: false; reason: string };

/**
 * Pure: is this workflow "open a page, read it by CSS" and nothing else — but transforms, which only
 * reshape what the reads gave (a JSONata expression over the data: no page, no model)?
 */
export function staticShape(workflow: Workflow): StaticShape {
  const [first, ...rest] = workflow.nodes;
  if (!first || first.type !== 'browser_action' || !('action' in first.config) || 'target' in first.config)
    return { ok: false, reason: 'it does not start by opening a page' };
  if (first.config.action !== 'navigate') return { ok: false, reason: 'it does not start by opening a page' };
  if (rest.length === 0) return { ok: false, reason: 'it reads nothing' };
  const reads: Read[] = [];
  const steps: (Read | Transform)[] = [];
  for (const n of rest) {
    if (n.type === 'transform') {
      steps.push(n);
      continue;
    }
    if (n.type !== 'browser_query' || n.config.method !== 'extract')
      return {
        ok: false,
        reason: `${n.alias} (${n.type}) needs the browser: only CSS reads and transforms go without it`,
      };
    reads.push(n);
    steps.push(n);
  }
  if (reads.length === 0) return { ok: false, reason: 'it reads nothing' };
  return { ok: true, navigate: first, reads, steps };
}

const SECRET = /%[A-Za-z_][\w.-]*%/;
const extractorOf = (n: Read): Extractor => (n.config as { extractor: Extractor }).extractor;

/** The URL the workflow opens with these inputs (defaults where none are given). */
function startUrl(workflow: Workflow, navigate: Navigate, inputs: JsonObject): string {
  const scope: JsonObject = { inputs: resolveInputs(workflow, inputs) };
  return (fillTemplates(navigate.config, scope, NOT_TEMPLATES) as { url: string }).url;
}

export interface StaticCheckOptions {
  policy: GuardPolicy;
  signal?: AbortSignal;
}

const now = () => new Date().toISOString();
const short = (v: unknown) => {
  const s = JSON.stringify(v) ?? 'nothing';
  return s.length > 160 ? `${s.slice(0, 157)}…` : s;
};

/**
 * The compile check on the recorded page (`page`, rendered): each extractor applied to it and to the
 * served HTML of the URL the workflow opens. Verified only when every one gives the same data and the
 * served HTML leaves no field empty. Keeps a person's `enabled: false`.
 */
export async function checkStaticRead(
  workflow: Workflow,
  page: Page,
  opts: StaticCheckOptions,
): Promise<StaticRead> {
  const enabled = workflow.staticRead?.enabled ?? true;
  const no = (reason: string, url?: string): StaticRead => ({
    verified: false,
    enabled,
    ...(url ? { url } : {}),
    checkedAt: now(),
    reason,
  });
  const shape = staticShape(workflow);
  if (!shape.ok) return no(`needs a browser: ${shape.reason}`);
  let url: string;
  try {
    url = startUrl(workflow, shape.navigate, {});
  } catch {
    url = page.url();
  }
  if (SECRET.test(url)) return no('the URL holds a secret: it is opened in the browser only');
  const got = await fetchHtml(url, { policy: opts.policy, ...(opts.signal ? { signal: opts.signal } : {}) });
  if (!got.ok) return no(`the served HTML could not be read: ${got.reason}`, url);
  const parsed = parsePage(got.body, got.url, got.contentType);
  for (const n of shape.reads) {
    const extractor = extractorOf(n);
    const miss = staticMiss(parsed, extractor);
    if (miss) return no(`${n.alias}: ${miss} (the page fills it in by script?)`, url);
    const served = readPage(parsed, extractor);
    const rendered = await applyExtractor(page, extractor);
    if (!sameData(served, rendered))
      return no(
        `${n.alias}: the served HTML gives ${short(served)}, the rendered page ${short(rendered)}`,
        url,
      );
  }
  return { verified: true, enabled, url, checkedAt: now() };
}

/** The workflow with the check's verdict in it (a compile, or a healed version about to be saved). */
export async function withStaticCheck(
  workflow: Workflow,
  page: Page,
  opts: StaticCheckOptions,
): Promise<Workflow> {
  return { ...workflow, staticRead: await checkStaticRead(workflow, page, opts) };
}

/**
 * A version written after a heal: its extractors changed, so the old verdict says nothing about them.
 * Checked again on the healed page when the caller has one and a policy, else marked unverified.
 */
export async function afterHeal(
  next: Workflow,
  page: Page | undefined,
  opts: StaticCheckOptions | undefined,
): Promise<Workflow> {
  if (!next.staticRead) return next;
  if (page && opts && !page.isClosed()) return withStaticCheck(next, page, opts);
  return {
    ...next,
    staticRead: {
      verified: false,
      enabled: next.staticRead.enabled,
      checkedAt: now(),
      reason: 'healed: the new extractor was not checked against the served HTML',
    },
  };
}

/** May replay try the static path at all? (The check passed and no one switched it off.) */
export const staticReadable = (w: Workflow) =>
  w.staticRead?.verified === true && w.staticRead.enabled !== false && staticShape(w).ok;

export interface StaticReplayOptions {
  policy: GuardPolicy;
  signal?: AbortSignal;
  /** Secrets: scrubbed from every reason and URL this reports. */
  variables?: Record<string, string>;
  /**
   * The run carries an auth profile, cookies or extra headers: the HTTP fetch would not send what
   * the browser sends, so the page is read in the browser (never a logged-out read passed off as data).
   */
  authenticated?: boolean;
  /**
   * The run's pacing (runs/host-pacing.ts): a site that answers "too many requests" has its host
   * paused and is asked again once the pause is over. Absent: such an answer is a miss like any other.
   */
  onThrottle?: OnThrottle;
}

export type StaticReplay =
  | { ok: true; state: WorkflowState }
  /**
   * `refused`: the site kept asking us to come back later (or there was no time left to wait):
   * the browser would be turned away alike, so the page is not asked for again now.
   */
  | { ok: false; reason: string; refused?: boolean };

/** Tries a throttled fetch again at most this many times, as the browser's paced load does. */
const THROTTLE_RETRIES = 3;

const result = (node: WorkflowNode, output: Json, ms: number): NodeResult => ({
  alias: node.alias,
  type: node.type,
  status: 'ok',
  output,
  usage: emptyUsage(),
  resolvedBy: 'static-html',
  ms: Math.round(ms),
});

/**
 * The whole workflow on one URL without a browser: `{ ok: true, state }` (done, the navigate's and
 * every read's `resolvedBy` "static-html", a transform's "deterministic") or `{ ok: false, reason }` — then nothing was reported and the caller
 * runs the page in the browser.
 */
export async function replayStatic(
  workflow: Workflow,
  init: Omit<NewWorkflowStateInit, 'workflow'>,
  opts: StaticReplayOptions,
): Promise<StaticReplay> {
  const scrub = (s: string) => redactText(s, opts.variables);
  if (!staticReadable(workflow))
    return { ok: false, reason: 'the workflow is not marked readable without a browser' };
  if (opts.authenticated)
    return { ok: false, reason: 'the run signs in (auth profile, cookies or headers): read in the browser' };
  const shape = staticShape(workflow) as Extract<StaticShape, { ok: true }>;
  const state = newWorkflowState({ ...init, workflow });
  const { url } = fillTemplates(shape.navigate.config, scopeOf(state), NOT_TEMPLATES) as { url: string };
  if (SECRET.test(url)) return { ok: false, reason: 'the URL holds a secret: read in the browser' };
  const started = performance.now();
  const fetchOnce = () =>
    fetchHtml(url, { policy: opts.policy, ...(opts.signal ? { signal: opts.signal } : {}) });
  let got = await fetchOnce();
  for (let i = 0; ; i++) {
    if (got.ok || got.status === undefined) break;
    const throttle = throttledBy(
      got.status,
      got.retryAfter !== undefined ? { 'retry-after': got.retryAfter } : {},
    );
    if (!throttle || !opts.onThrottle) break;
    if (i === THROTTLE_RETRIES || !(await opts.onThrottle(url, throttle.retryAfter)))
      return { ok: false, reason: throttleReason(got.status), refused: true };
    got = await fetchOnce();
  }
  if (!got.ok) return { ok: false, reason: scrub(got.reason) };
  applyResult(
    workflow,
    state,
    shape.navigate,
    result(shape.navigate, { url: got.url, status: got.status }, performance.now() - started),
  );
  const parsed = parsePage(got.body, got.url, got.contentType);
  for (const n of shape.steps) {
    const t = performance.now();
    if (n.type === 'transform') {
      const filled = { ...n, config: fillTemplates(n.config, scopeOf(state), NOT_TEMPLATES) } as Transform;
      const done = await transformOn(filled, scopeOf(state));
      // The browser would fail it alike; it is run there all the same, so the failure is the executor's to tell.
      if (done.status !== 'ok')
        return { ok: false, reason: scrub(`${n.alias}: ${done.error?.message ?? 'the transform failed'}`) };
      applyResult(workflow, state, n, done);
      continue;
    }
    const filled = { ...n, config: fillTemplates(n.config, scopeOf(state), NOT_TEMPLATES) } as Read;
    const extractor = extractorOf(filled);
    const miss = staticMiss(parsed, extractor);
    if (miss) return { ok: false, reason: scrub(`${n.alias}: ${miss} at ${got.url}`) };
    applyResult(workflow, state, n, result(n, readPage(parsed, extractor), performance.now() - t));
  }
  state.url = got.url;
  state.steps = shape.steps.length + 1;
  finishFrame(workflow, state);
  return { ok: true, state };
}

/**
 * One run's watch over the static path: every `every`-th page read statically is read again in the
 * browser; the first difference turns the static path off for the rest of the run (`off` says why).
 */
export class StaticGate {
  private reads = 0;
  off: string | undefined;
  readonly rechecks: { page: string; same: boolean }[] = [];
  constructor(readonly every = 50) {}

  /** Should this static read (just made) be checked in the browser? The first one always is. */
  recheckNow(): boolean {
    this.reads += 1;
    return this.every > 0 && (this.reads - 1) % this.every === 0;
  }

  /** The browser's answer on a page read statically; a difference closes the gate. */
  compare(page: string, staticData: unknown, browserData: unknown): boolean {
    const same = sameData(staticData, browserData);
    this.rechecks.push({ page, same });
    if (!same) this.off = `the browser read ${page} differently: the rest of the run is read in the browser`;
    return same;
  }
}

export interface StaticFirstOptions extends StaticReplayOptions {
  gate?: StaticGate;
  /** Runs the page in the browser (the fallback, and the gate's re-check). */
  browser: () => Promise<WorkflowState>;
  log?: (event: { level: 'debug' | 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;
}

export interface StaticFirstOutcome {
  state: WorkflowState;
  /** Which path's answer `state` is. */
  path: 'static-html' | 'browser';
  /** Why the static path was not used for this page (absent when it was, or was never tried). */
  fellBack?: string;
  /** The browser ran too, to re-check a static read. */
  rechecked?: boolean;
}

/**
 * Static when the workflow and the gate allow it, else (or when the static read misses) the browser.
 * A re-check that differs returns the browser's answer and closes the gate.
 */
export async function runStaticFirst(
  workflow: Workflow,
  init: Omit<NewWorkflowStateInit, 'workflow'>,
  opts: StaticFirstOptions,
): Promise<StaticFirstOutcome> {
  if (!staticReadable(workflow) || opts.gate?.off) return { state: await opts.browser(), path: 'browser' };
  const got = await replayStatic(workflow, init, opts);
  if (!got.ok) {
    opts.log?.({ level: 'info', msg: 'read in the browser instead of the served HTML', why: got.reason });
    return { state: await opts.browser(), path: 'browser', fellBack: got.reason };
  }
  if (opts.gate?.recheckNow()) {
    const browser = await opts.browser();
    if (browser.status !== 'done') return { state: got.state, path: 'static-html', rechecked: true };
    if (!opts.gate.compare(redactText(init.url, opts.variables), got.state.data, browser.data)) {
      opts.log?.({ level: 'warn', msg: 'static read differs from the browser', why: opts.gate.off });
      return { state: browser, path: 'browser', fellBack: opts.gate.off!, rechecked: true };
    }
    return { state: got.state, path: 'static-html', rechecked: true };
  }
  return { state: got.state, path: 'static-html' };
}
