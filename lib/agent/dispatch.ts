/**
 * Carries out one step's tool calls in order. Every tool returns a result value and never throws;
 * each is bounded by a timeout. The batch stops after a navigation, a failure, a tool that ends it,
 * or when the page's structure changed under the next action (it was chosen on the old page).
 */
import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import type { Action } from '../actions/types.ts';
import { settle } from '../browser/settle.ts';
import type { LlmClient, Usage } from '../llm/types.ts';
import { extract } from '../ops/extract.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { elementById, type Snapshot } from '../perception/types.ts';
import type { EvidenceStore, Json, JsonObject } from '../store/ports.ts';
import { classify, type ErrorClass, firstLine, withTimeout } from './errors.ts';
import { saveDownload, saveScreenshot } from './evidence.ts';
import type { AgentState } from './state.ts';
import { BATCH_ENDING, needsElement, type ToolCall } from './tools.ts';
import { isPaginationName } from './watchdog.ts';

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
  pagination?: boolean;
  usage?: Usage;
  /** `tool:target@url` — what the spam check compares. */
  key: string;
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

async function pageAction(
  ctx: DispatchContext,
  call: ToolCall,
  current: Snapshot,
): Promise<Omit<ToolResult, 'ms' | 'key' | 'tool' | 'input'>> {
  let navigated = false;
  const messages: string[] = [];
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
  const el = needsElement(call) ? elementById(current, call.id) : undefined;
  const pagination = call.tool === 'click' && !!el && isPaginationName(el.name);
  return {
    ok: true,
    outcome: navigated ? `${messages.join('; ')} → now on ${ctx.page.url()}` : messages.join('; '),
    navigated,
    ...(pagination ? { pagination } : {}),
  };
}

async function download(ctx: DispatchContext, id: number, current: Snapshot) {
  const waiting = ctx.page.waitForEvent('download', { timeout: 15_000 });
  waiting.catch(() => undefined);
  const clicked = await executeAction(
    ctx.page,
    { method: 'click', target: { id } },
    { snapshot: current, timeoutMs: ACTION_TIMEOUT_MS },
  );
  if (!clicked.ok) return { ok: false, outcome: clicked.message, errorClass: 'logic' as const };
  const dl = await waiting;
  const path = await dl.path();
  const saved = await saveDownload(ctx.evidence, ctx.state, dl.suggestedFilename(), await readFile(path));
  return { ok: true, outcome: `downloaded ${saved.file} (sha256 ${saved.sha256.slice(0, 12)}…)` };
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
      return download(ctx, call.id, current);
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
    default:
      return pageAction(ctx, call, current);
  }
}

/** Runs a step's calls; returns one result per call that ran (the rest of an aborted batch is skipped). */
export async function dispatch(
  ctx: DispatchContext,
  calls: ToolCall[],
): Promise<{ results: ToolResult[]; skipped: number; abort?: string }> {
  const results: ToolResult[] = [];
  let current = ctx.seen;
  for (const [i, call] of calls.entries()) {
    const started = performance.now();
    const key = actionKey(call, ctx.page.url());
    let r: Omit<ToolResult, 'ms' | 'key' | 'tool' | 'input'>;
    try {
      r = await withTimeout(TOOL_TIMEOUT_MS, call.tool, runTool(ctx, call, current));
    } catch (err) {
      r = { ok: false, outcome: `${call.tool} failed: ${firstLine(err)}`, errorClass: classify(err) };
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
        await settle(ctx.page, { timeoutMs: 1500, quietMs: 100 });
        const fresh = await snapshot(ctx.page, ctx.variables ? { secrets: ctx.variables } : {});
        if (fresh.signature !== current.signature)
          return { results, skipped: rest, abort: 'the page changed' };
        current = fresh;
      } catch (err) {
        return { results, skipped: rest, abort: `the page could not be read again: ${firstLine(err)}` };
      }
    }
  }
  return { results, skipped: 0 };
}
