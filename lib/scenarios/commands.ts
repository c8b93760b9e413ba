/**
 * Runs one iteration's commands in order on the live page: actions through lib/actions (by outline
 * id), verifications in the page (verify.ts). A failed command, or an action that changed the page
 * (new URL), ends the batch: what follows was decided on a page that is gone. Each command that
 * touched an element is recorded with its durable locator (and a unique CSS selector when the page
 * has one), so a passed scenario compiles into a workflow.
 */
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import type { Action } from '../actions/types.ts';
import { readCandidates } from '../perception/candidates.ts';
import { redactText } from '../perception/redact.ts';
import { type DurableLocator, elementById, type Snapshot } from '../perception/types.ts';
import type { PointRecord } from './coordinate-fallback.ts';
import type { ActionCommand, Command, CommandResult, VerificationCommand } from './decision.ts';
import { runVerification } from './verify.ts';

/** A command as it ran, with what a replay needs to find its element again. */
export type RecordedCommand =
  | {
      kind: 'action';
      /** 0-based scenario step. */
      step: number;
      command: ActionCommand;
      /** The action with its element as a durable locator (never an outline id). */
      action: Action;
      urlBefore: string;
      urlAfter: string;
      /** A coordinate command (coordinate-fallback.ts): where it pointed and the element it hit. */
      point?: PointRecord;
    }
  | {
      kind: 'verify';
      step: number;
      command: VerificationCommand;
      locator?: DurableLocator;
      /** A CSS selector that matched only this element when it was checked. */
      css?: string;
      ok: boolean;
      actual: string;
      url: string;
    };

const ELEMENTLESS = new Set(['goto', 'back', 'wait']);

/** The typed action for a command; ids resolved by the caller. Pure. */
export function toAction(c: ActionCommand, target: Action['target']): Action | { error: string } {
  const needsId = !ELEMENTLESS.has(c.action) && c.action !== 'scroll' && c.action !== 'press';
  if (needsId && !target) return { error: `${c.action} needs "id" (an element of the outline)` };
  const value = c.value ?? '';
  if (['fill', 'type', 'select', 'goto'].includes(c.action) && value === '' && c.action !== 'fill')
    return { error: `${c.action} needs "value"` };
  const args =
    c.action === 'fill' || c.action === 'type' || c.action === 'select' || c.action === 'goto'
      ? [value]
      : c.action === 'press'
        ? [value || 'Enter']
        : c.action === 'scroll' && value
          ? [value === 'down' ? '+600' : value === 'up' ? '-600' : value]
          : c.action === 'wait'
            ? [value || '500']
            : undefined;
  return {
    method: c.action === 'type' ? 'fill' : c.action,
    ...(target ? { target } : {}),
    ...(args ? { args } : {}),
    ...(c.description ? { description: c.description } : {}),
  };
}

export interface RunContext {
  page: Page;
  snap: Snapshot;
  step: number;
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  /** Each command's wall time as it ends (the runner's phase split). */
  onCommand?: (kind: 'action' | 'verify', ms: number) => void;
}

async function cssOf(page: Page, locator: DurableLocator): Promise<string | undefined> {
  const found = await readCandidates(page, locator).catch(() => []);
  const css = found.find((c) => c.kind === 'css');
  return css && css.kind === 'css' ? css.value : undefined;
}

async function runAction(
  ctx: RunContext,
  c: ActionCommand,
): Promise<{ result: CommandResult; recorded?: RecordedCommand; navigated: boolean }> {
  const el = c.id === undefined ? undefined : elementById(ctx.snap, c.id);
  if (c.id !== undefined && !el)
    return {
      result: { command: c, ok: false, message: `[${c.id}] is not an id of the current outline` },
      navigated: false,
    };
  const built = toAction(c, el ? { id: el.id } : undefined);
  if ('error' in built) return { result: { command: c, ok: false, message: built.error }, navigated: false };
  const urlBefore = ctx.page.url();
  const out = await executeAction(ctx.page, built, {
    snapshot: ctx.snap,
    ...(ctx.variables ? { variables: ctx.variables } : {}),
    ...(ctx.checkNavigation ? { checkNavigation: ctx.checkNavigation } : {}),
  });
  const message = redactText(out.message, ctx.variables);
  const result: CommandResult = { command: c, ok: out.ok, message };
  if (!out.ok) return { result, navigated: out.navigated };
  const action: Action = { ...built, ...(el ? { target: { locator: el.locator } } : {}) };
  return {
    result,
    navigated: out.navigated,
    recorded: { kind: 'action', step: ctx.step, command: c, action, urlBefore, urlAfter: out.url },
  };
}

async function runCheck(
  ctx: RunContext,
  c: VerificationCommand,
): Promise<{ result: CommandResult; recorded: RecordedCommand }> {
  const el = c.id === undefined ? undefined : elementById(ctx.snap, c.id);
  // Both only read the page: the replay's selector is looked up while the check runs.
  const [css, out] = await Promise.all([
    c.selector ?? (el ? cssOf(ctx.page, el.locator) : undefined),
    runVerification(ctx.page, ctx.snap, c, ctx.variables),
  ]);
  return {
    result: { command: c, ok: out.ok, message: out.message, actual: out.actual },
    recorded: {
      kind: 'verify',
      step: ctx.step,
      command: c,
      ...(el ? { locator: el.locator } : {}),
      ...(css ? { css } : {}),
      ok: out.ok,
      actual: out.actual,
      url: ctx.page.url(),
    },
  };
}

/** Runs the batch; the rest is skipped after a failure or a page change. */
export async function runCommands(
  ctx: RunContext,
  commands: readonly Command[],
): Promise<{ results: CommandResult[]; recorded: RecordedCommand[] }> {
  const results: CommandResult[] = [];
  const recorded: RecordedCommand[] = [];
  let stop: string | undefined;
  for (const c of commands) {
    if (stop) {
      results.push({ command: c, ok: false, skipped: true, message: `not run: ${stop}` });
      continue;
    }
    const started = performance.now();
    if (c.kind === 'verify') {
      const got = await runCheck(ctx, c);
      ctx.onCommand?.('verify', performance.now() - started);
      results.push(got.result);
      recorded.push(got.recorded);
      if (!got.result.ok) stop = 'a verification before it failed';
      continue;
    }
    const got = await runAction(ctx, c);
    ctx.onCommand?.('action', performance.now() - started);
    results.push(got.result);
    if (got.recorded) recorded.push(got.recorded);
    if (!got.result.ok) stop = 'a command before it failed';
    else if (got.navigated) stop = 'the page changed (new URL); look again';
  }
  return { results, recorded };
}

/** One line per result, as the model reads it next iteration. Pure. */
export function describeResults(results: readonly CommandResult[]): string[] {
  return results.map((r) => {
    const c = r.command;
    const what =
      c.kind === 'verify'
        ? `verify ${c.check}${c.id !== undefined ? ` [${c.id}]` : ''}${c.selector ? ` ${c.selector}` : ''}`
        : `${c.action}${c.id !== undefined ? ` [${c.id}]` : ''}${c.value !== undefined ? ` "${c.value}"` : ''}`;
    return `${r.skipped ? '–' : r.ok ? '✓' : '✗'} ${what}: ${r.message}`;
  });
}
