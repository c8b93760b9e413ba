/**
 * Carries out one step's tool calls in order. Every tool returns a result value and never throws;
 * each is bounded by a timeout. The batch stops after a navigation, a failure, a tool that ends it,
 * or when the page changed under the next action (it was chosen on the old page): other kinds of
 * controls, or more than 20% more or fewer of them.
 */
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import type { Action } from '../actions/types.ts';
import { settle } from '../browser/settle.ts';
import { spentOn } from '../llm/spent.ts';
import type { LlmClient, Usage } from '../llm/types.ts';
import { extract } from '../ops/extract.ts';
import { type ElementRecording, recordAfter, recordBefore } from '../perception/recording.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { elementById, type Snapshot } from '../perception/types.ts';
import type { EvidenceStore, Json, JsonObject } from '../store/ports.ts';
import { classify, type ErrorClass, firstLine, withTimeout } from './errors.ts';
import { saveDownload, saveScreenshot } from './evidence.ts';
import type { AgentState } from './state.ts';
import { BATCH_ENDING, needsElement, type ToolCall } from './tools.ts';
import { controlsShifted, isPaginationName } from './watchdog.ts';

export const TOOL_TIMEOUT_MS = 60_000;
const ACTION_TIMEOUT_MS = 8_000;

export interface ToolResult {
  tool: ToolCall['tool'];
  input: Json;
  ok: boolean;
  outcome: string;
  ms: number;
  errorClass?: ErrorClass;
  navigated?: boolean;
  /** extract's answer. */
  extracted?: Json;
  saved?: { data: JsonObject; note: string };
  final?: { kind: 'done'; data: JsonObject } | { kind: 'fail'; reason: string };
  /** step_done's note: the current scenario step is achieved. */
  stepDone?: string;
  pagination?: boolean;
  usage?: Usage;
  /** `tool:target@url` — what the spam check compares. */
  key: string;
  /** A done element action: its element's locator candidates and what followed (compiling workflows). */
  recorded?: ElementRecording;
}

export interface DispatchContext {
  page: Page;
  /** The snapshot the model chose its ids from. */
  seen: Snapshot;
  state: AgentState;
  llm: LlmClient;
  evidence: EvidenceStore;
  variables?: Record<string, string> | undefined;
  checkNavigation?: ((url: string) => Promise<void>) | undefined;
  /** The caller stopped waiting: the calls left are not carried out. */
  signal?: AbortSignal | undefined;
  /** One tool call's limit (default TOOL_TIMEOUT_MS). */
  toolTimeoutMs?: number | undefined;
}

const urlPath = (url: string) => {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return url;
  }
};

function actionKey(call: ToolCall, url: string): string {
  const target =
    'id' in call && call.id !== undefined
      ? `#${call.id}`
      : call.tool === 'goto'
        ? call.url
        : call.tool === 'scroll'
          ? call.direction
          : '';
  return `${call.tool}:${target}@${urlPath(url)}`;
}

function toAction(call: ToolCall): Action[] {
  switch (call.tool) {
    case 'goto':
      return [{ method: 'goto', args: [call.url] }];
    case 'click':
      return [{ method: 'click', target: { id: call.id } }];
    case 'type':
      return [
        { method: 'fill', target: { id: call.id }, args: [call.text] },
        ...(call.submit ? [{ method: 'press' as const, target: { id: call.id }, args: ['Enter'] }] : []),
      ];
    case 'select_option':
      return [{ method: 'select', target: { id: call.id }, args: [call.option] }];
    case 'scroll': {
      const arg = { down: '+600', up: '-600', top: 'top', bottom: 'bottom' }[call.direction];
      return [
        { method: 'scroll', ...(call.id !== undefined ? { target: { id: call.id } } : {}), args: [arg] },
      ];
    }
    case 'wait':
      return [{ method: 'wait', args: [call.text ? `text:${call.text}` : String(call.ms ?? 1000)] }];
    default:
      return [];
  }
}

/** Element actions a workflow can replay (see lib/workflows/compile.ts). */
const RECORDED = new Set(['click', 'type', 'select_option']);

async function pageAction(
  ctx: DispatchContext,
  call: ToolCall,
  current: Snapshot,
): Promise<Omit<ToolResult, 'ms' | 'key' | 'tool' | 'input'>> {
  let navigated = false;
  const messages: string[] = [];
  // Kept for compiling the run into a workflow; read before acting, since a click may remove it.
  const target = RECORDED.has(call.tool) && needsElement(call) ? elementById(current, call.id) : undefined;
  const urlBefore = ctx.page.url();
  const before = target ? await recordBefore(ctx.page, target.locator) : undefined;
  for (const action of toAction(call)) {
    const outcome = await executeAction(ctx.page, action, {
      snapshot: current,
      timeoutMs: ACTION_TIMEOUT_MS,
      ...(ctx.variables ? { variables: ctx.variables } : {}),
      ...(ctx.checkNavigation ? { checkNavigation: ctx.checkNavigation } : {}),
    });
    navigated ||= outcome.navigated;
    messages.push(outcome.message);
    if (!outcome.ok) {
      // A page that will not load (DNS, refused, timed out) or a browser that died is infrastructure;
      // an element that is missing or covered is the model's to fix.
      const infra =
        classify(new Error(outcome.message)) === 'infra' ||
        (outcome.error?.kind === 'timeout' && action.method === 'goto');
      return { ok: false, outcome: messages.join('; '), errorClass: infra ? 'infra' : 'logic', navigated };
    }
  }
  const pagination = call.tool === 'click' && !!target && isPaginationName(target.name);
  const recorded =
    before && target
      ? await recordAfter(ctx.page, before, target.locator, urlBefore, ctx.variables)
      : undefined;
  return {
    ok: true,
    outcome: navigated ? `${messages.join('; ')} → now on ${ctx.page.url()}` : messages.join('; '),
    navigated,
    ...(pagination ? { pagination } : {}),
    ...(recorded ? { recorded } : {}),
  };
}

/** Largest file the download tool keeps. */
const MAX_DOWNLOAD_BYTES = 25 * 1024 * 1024;

/** Reads a URL inside the page (its cookies, the browser's network and guard) as base64, capped. */
async function fetchInPage(
  page: Page,
  url: string,
): Promise<{ ok: boolean; status: number; disposition: string; base64: string; tooBig: boolean }> {
  return page.evaluate(
    async ({ url, max }) => {
      const res = await fetch(url, { credentials: 'include' });
      const buf = new Uint8Array(await res.arrayBuffer());
      if (buf.byteLength > max)
        return { ok: res.ok, status: res.status, disposition: '', base64: '', tooBig: true };
      let bin = '';
      for (let i = 0; i < buf.length; i += 0x8000) bin += String.fromCharCode(...buf.subarray(i, i + 0x8000));
      return {
        ok: res.ok,
        status: res.status,
        disposition: res.headers.get('content-disposition') ?? '',
        base64: btoa(bin),
        tooBig: false,
      };
    },
    { url, max: MAX_DOWNLOAD_BYTES },
  );
}

/** The file name a server or URL suggests; made safe (no folders, no dot files) when saved. */
function suggestedName(url: string, disposition: string): string {
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(disposition);
  if (m?.[1]) return decodeURIComponent(m[1]);
  const last = new URL(url).pathname.split('/').pop() ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/**
 * Downloads what a link points to. Job contexts refuse browser downloads, so the file is fetched
 * from inside the page instead: same cookies, same network guard.
 */
async function download(ctx: DispatchContext, id: number) {
  const el = elementById(ctx.seen, id)!;
  if (!el.url) return { ok: false, outcome: `[${id}] is not a link to a file`, errorClass: 'logic' as const };
  try {
    await ctx.checkNavigation?.(el.url);
  } catch (err) {
    return { ok: false, outcome: `download blocked: ${firstLine(err)}`, errorClass: 'logic' as const };
  }
  const got = await fetchInPage(ctx.page, el.url);
  if (got.tooBig)
    return {
      ok: false,
      outcome: `download larger than ${MAX_DOWNLOAD_BYTES} bytes`,
      errorClass: 'logic' as const,
    };
  if (!got.ok)
    return { ok: false, outcome: `download answered HTTP ${got.status}`, errorClass: 'logic' as const };
  const bytes = Buffer.from(got.base64, 'base64');
  const saved = await saveDownload(ctx.evidence, ctx.state, suggestedName(el.url, got.disposition), bytes);
  return {
    ok: true,
    outcome: `downloaded ${saved.file} (${bytes.byteLength} bytes, sha256 ${saved.sha256.slice(0, 12)}…)`,
  };
}

async function runTool(
  ctx: DispatchContext,
  call: ToolCall,
  current: Snapshot,
): Promise<Omit<ToolResult, 'ms' | 'key' | 'tool' | 'input'>> {
  if (needsElement(call) && !elementById(ctx.seen, call.id))
    return {
      ok: false,
      outcome: `[${call.id}] is not an element of the current page outline; pick an id shown there`,
      errorClass: 'logic',
    };
  switch (call.tool) {
    case 'screenshot': {
      const saved = await saveScreenshot(ctx.evidence, ctx.state, ctx.page, call.label, ctx.variables);
      return { ok: true, outcome: `saved ${saved.file}` };
    }
    case 'extract': {
      let schema: Record<string, unknown> | undefined;
      if (call.schema) {
        try {
          schema = JSON.parse(call.schema) as Record<string, unknown>;
        } catch {
          return { ok: false, outcome: 'extract: schema is not valid JSON', errorClass: 'logic' };
        }
      }
      const res = await extract(
        { page: ctx.page, llm: ctx.llm, ...(ctx.variables ? { variables: ctx.variables } : {}) },
        call.instruction,
        schema,
      );
      const data = res.data as Json;
      return {
        ok: true,
        outcome: `extracted: ${JSON.stringify(data).slice(0, 1500)}`,
        extracted: data,
        usage: res.usage,
      };
    }
    case 'download':
      return download(ctx, call.id);
    case 'save_progress':
      return {
        ok: true,
        outcome: `saved progress: ${call.note}`,
        saved: { data: call.data as JsonObject, note: call.note },
      };
    case 'done':
      return { ok: true, outcome: 'done', final: { kind: 'done', data: call.data as JsonObject } };
    case 'fail':
      return { ok: true, outcome: `fail: ${call.reason}`, final: { kind: 'fail', reason: call.reason } };
    case 'step_done':
      return { ok: true, outcome: `scenario step done: ${call.note}`, stepDone: call.note };
    default:
      return pageAction(ctx, call, current);
  }
}

const interactiveCount = (snap: Snapshot) => snap.elements.filter((e) => e.interactive).length;

/** Runs a step's calls; returns one result per call that ran (the rest of an aborted batch is skipped). */
export async function dispatch(
  ctx: DispatchContext,
  calls: ToolCall[],
): Promise<{ results: ToolResult[]; skipped: number; abort?: string }> {
  const results: ToolResult[] = [];
  let current = ctx.seen;
  for (const [i, call] of calls.entries()) {
    if (ctx.signal?.aborted)
      return { results, skipped: calls.length - i, abort: 'the caller stopped waiting' };
    const started = performance.now();
    const key = actionKey(call, ctx.page.url());
    let r: Omit<ToolResult, 'ms' | 'key' | 'tool' | 'input'>;
    try {
      r = await withTimeout(ctx.toolTimeoutMs ?? TOOL_TIMEOUT_MS, call.tool, runTool(ctx, call, current));
    } catch (err) {
      // A tool whose model call failed (an extract answered in the wrong shape) still spent tokens.
      const spent = spentOn(err);
      r = {
        ok: false,
        outcome: `${call.tool} failed: ${firstLine(err)}`,
        errorClass: classify(err),
        ...(spent ? { usage: spent } : {}),
      };
    }
    const input = JSON.parse(redactText(JSON.stringify(call), ctx.variables)) as Json;
    results.push({
      ...r,
      outcome: redactText(r.outcome, ctx.variables),
      tool: call.tool,
      input,
      key,
      ms: Math.round(performance.now() - started),
    });
    const rest = calls.length - i - 1;
    if (rest === 0) break;
    if (!r.ok) return { results, skipped: rest, abort: 'an action failed' };
    if (BATCH_ENDING.has(call.tool) || r.final)
      return { results, skipped: rest, abort: `${call.tool} ends a step` };
    if (r.navigated) return { results, skipped: rest, abort: 'the page navigated' };
    if (toAction(call).length > 0 && call.tool !== 'wait') {
      // Did the page's set of controls change? Then the next id was picked on a page that is gone.
      try {
        await settle(ctx.page, { timeoutMs: 1500, quietMs: 50 });
        const fresh = await snapshot(ctx.page, ctx.variables ? { secrets: ctx.variables } : {});
        if (fresh.signature !== current.signature)
          return { results, skipped: rest, abort: 'the page changed' };
        const before = interactiveCount(current);
        const after = interactiveCount(fresh);
        if (controlsShifted(before, after))
          return {
            results,
            skipped: rest,
            abort: `the page's controls changed from ${before} to ${after}`,
          };
        current = fresh;
      } catch (err) {
        return { results, skipped: rest, abort: `the page could not be read again: ${firstLine(err)}` };
      }
    }
  }
  return { results, skipped: 0 };
}
