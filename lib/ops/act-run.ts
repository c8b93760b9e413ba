import { executeAction } from '../actions/execute.ts';
import { describeTarget } from '../actions/helpers.ts';
import type { Action, ActionOutcome } from '../actions/types.ts';
import type { Usage } from '../llm/types.ts';
import type { Snapshot } from '../perception/types.ts';
import { elementById } from '../perception/types.ts';
import { driverOf, emptyUsage } from './page-state.ts';
import { type ActResult, type OpContext, OpError, type OpErrorKind, type ResolvedBy } from './types.ts';

interface Step {
  action: Action;
  outcome: ActionOutcome;
  /** Where a navigation this step caused was refused or failed. */
  deniedUrl?: string;
}

/** Rewrites an id target as the element's durable locator, so the action means the same thing tomorrow. */
function durable(action: Action, snap: Snapshot): Action {
  if (!action.target || !('id' in action.target)) return action;
  const el = elementById(snap, action.target.id);
  if (!el) return action;
  return { ...action, target: { locator: el.locator } };
}

function describe(action: Action, snap: Snapshot | undefined): string {
  const target = action.target;
  if (target && 'id' in target && snap) {
    const el = elementById(snap, target.id);
    if (el)
      return `${action.method} ${el.role} "${el.name}"${action.args?.length ? ` with ${JSON.stringify(action.args)}` : ''}`;
  }
  return `${action.method} ${describeTarget(action)}${action.args?.length ? ` with ${JSON.stringify(action.args)}` : ''}`;
}

/** Where a `goto` was headed, as the browser would resolve it. */
function gotoTarget(action: Action, snap: Snapshot): string | undefined {
  if (action.method !== 'goto' || !action.args?.[0]) return undefined;
  try {
    return new URL(action.args[0], snap.url === 'about:blank' ? undefined : snap.url).toString();
  } catch {
    return undefined;
  }
}

/**
 * One `act` call's record: every action it carried out, with its outcome, and the result those add
 * up to. A refused or failed navigation halts it: nothing more may be tried on a page that is gone.
 */
export class Run {
  usage: { total: Usage };
  steps: Step[] = [];
  started = performance.now();
  /** A step's navigation was refused or never arrived: the page is gone, nothing more may be tried on it. */
  halted = false;
  constructor(readonly ctx: OpContext) {
    this.usage = { total: emptyUsage(ctx.llm?.model ?? '') };
  }

  async exec(action: Action, snap: Snapshot): Promise<ActionOutcome> {
    // The caller has been answered (a deadline, a client gone): no action may follow that answer.
    if (this.ctx.signal?.aborted) throw new OpError('timeout', 'the call was cancelled before this action');
    let outcome = await executeAction(driverOf(this.ctx), action, {
      snapshot: snap,
      ...(this.ctx.variables ? { variables: this.ctx.variables } : {}),
      ...(this.ctx.options?.timeoutMs ? { timeoutMs: this.ctx.options.timeoutMs } : {}),
      ...(this.ctx.checkNavigation ? { checkNavigation: this.ctx.checkNavigation } : {}),
    });
    // The click itself may have worked while the page it led to was refused: that is the outcome.
    const problem = await this.ctx.pageProblem?.();
    if (problem) {
      this.halted = true;
      outcome = {
        ...outcome,
        ok: false,
        message: problem.message,
        error: { kind: problem.kind, message: problem.message },
      };
    }
    const denied = problem?.url ?? (outcome.error?.kind === 'blocked' ? gotoTarget(action, snap) : undefined);
    if (denied) this.halted = true;
    this.steps.push({
      action: { ...durable(action, snap), description: describe(action, snap) },
      outcome,
      ...(denied ? { deniedUrl: denied } : {}),
    });
    return outcome;
  }

  done(resolvedBy: ResolvedBy, extra: Partial<ActResult> = {}): ActResult {
    const last = this.steps[this.steps.length - 1];
    const ok = this.steps.length > 0 && this.steps.every((s) => s.outcome.ok);
    const result: ActResult = {
      success: ok,
      message: last ? last.outcome.message : 'nothing was done',
      actionDescription: this.steps.map((s) => s.action.description ?? '').join('; then '),
      actions: this.steps.filter((s) => s.outcome.ok).map((s) => s.action),
      usage: this.usage.total,
      resolvedBy,
      url: driverOf(this.ctx).url(),
      ms: Math.round(performance.now() - this.started),
      ...extra,
    };
    if (!ok && last?.outcome.error && !result.error)
      result.error = {
        kind: last.outcome.error.kind as OpErrorKind,
        message: last.outcome.error.message,
        ...(last.deniedUrl ? { url: last.deniedUrl } : {}),
      };
    return result;
  }
}
