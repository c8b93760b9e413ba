/**
 * The watchdog and the step budget, as pure functions over `WatchdogState`: stagnation levels,
 * one-time budget warnings, the same action repeated on one page, failures in a row, and which tools
 * the model is offered. The slice calls these and acts on what they return.
 */
import type { WatchdogState } from './state.ts';
import { FINAL_TOOLS, SCENARIO_TOOL, TOOL_NAMES, type ToolName } from './tools.ts';

export const STAGNATION_LEVELS = [3, 5, 8] as const;
/**
 * Actions of one type (click, scroll, wait…) on one URL, while neither the page nor the data changes,
 * that stop the sample (the reference's 4). A page that changes between steps (a tab opened, a form
 * filled, more items loaded) or new data starts the count again.
 */
export const SPAM_REPEATS = 4;
/** A batch stops when the page's interactive elements grow or shrink by more than this share. */
export const CONTROLS_SHIFT = 0.2;
/** Failed actions in a row after which the model is shown every visible control. */
export const FAILURES_BEFORE_HELP = 3;

const LEVEL_NOTICES = [
  '',
  'Watchdog: the page and the data have not changed for a few steps. Try a different approach: another element, scrolling, extract, or another page.',
  'Watchdog: CHANGE YOUR STRATEGY NOW. What you are doing is not working: do something different, or save what you have.',
  'Watchdog: no progress for too long. No more browsing: call done with what you have, or fail with the reason.',
];

export function levelFor(stagnant: number): number {
  let level = 0;
  for (const [i, at] of STAGNATION_LEVELS.entries()) if (stagnant >= at) level = i + 1;
  return level;
}

export interface StagnationUpdate {
  watchdog: WatchdogState;
  level: number;
  /** Entered level 2 on this step: save a checkpoint. */
  checkpoint: boolean;
  notice?: string;
}

/** Same page (URL + DOM hash) and same data as the step before counts one more stagnant step. */
export function trackStagnation(wd: WatchdogState, signature: string, dataHash: string): StagnationUpdate {
  const same = wd.lastSignature === signature && wd.lastDataHash === dataHash;
  const stagnant = same ? wd.stagnant + 1 : 0;
  const level = levelFor(stagnant);
  const next: WatchdogState = { ...wd, lastSignature: signature, lastDataHash: dataHash, stagnant, level };
  const out: StagnationUpdate = { watchdog: next, level, checkpoint: level === 2 && wd.level < 2 };
  if (level > 0) out.notice = LEVEL_NOTICES[level]!;
  return out;
}

/** One-time warnings at 75% and 90% of the step budget; `step` is the 1-based step about to run. */
export function budgetWarnings(
  wd: WatchdogState,
  step: number,
  maxSteps: number,
): { watchdog: WatchdogState; notices: string[] } {
  const notices: string[] = [];
  const next = { ...wd };
  const used = step / maxSteps;
  if (used >= 0.9 && !wd.warned90) {
    next.warned90 = true;
    next.warned75 = true;
    notices.push(
      `Budget: step ${step} of ${maxSteps}, 90% used. Save or finalize NOW: save_progress what you have, then done.`,
    );
  } else if (used >= 0.75 && !wd.warned75) {
    next.warned75 = true;
    notices.push(`Budget: step ${step} of ${maxSteps}, 75% used. Start consolidating your results.`);
  }
  return { watchdog: next, notices };
}

const WITH_SCENARIO: readonly ToolName[] = [...TOOL_NAMES, SCENARIO_TOOL];

/**
 * Tools offered for a step: only done / fail on the last step or at stagnation level 3; in scenario
 * mode, step_done as well while scenario steps remain.
 */
export function toolsFor(
  step: number,
  maxSteps: number,
  level: number,
  scenarioLeft = 0,
): readonly ToolName[] {
  if (step >= maxSteps || level >= 3) return FINAL_TOOLS;
  return scenarioLeft > 0 ? WITH_SCENARIO : TOOL_NAMES;
}

/** `click:#12@shop.test/p/1` → `click@shop.test/p/1`: the action's type on its URL, any target. */
export function actionKind(key: string): string {
  const tool = key.slice(0, key.indexOf(':'));
  return `${tool}@${key.slice(key.lastIndexOf('@') + 1)}`;
}

/**
 * Records the acted tools' keys by type and URL (`pageChanged`: the page or the data changed since
 * the last step, so earlier actions are forgotten); returns the type-on-URL done SPAM_REPEATS times.
 */
export function trackRepeats(
  wd: WatchdogState,
  keys: string[],
  pageChanged = false,
): { watchdog: WatchdogState; spam?: string } {
  const recent = [...(pageChanged ? [] : wd.recentActions), ...keys.map(actionKind)].slice(-50);
  const counts = new Map<string, number>();
  for (const k of recent) counts.set(k, (counts.get(k) ?? 0) + 1);
  const spam = keys.map(actionKind).find((k) => (counts.get(k) ?? 0) >= SPAM_REPEATS);
  return { watchdog: { ...wd, recentActions: recent }, ...(spam ? { spam } : {}) };
}

/** More than CONTROLS_SHIFT of the interactive elements appeared or went: ids picked before are stale. */
export function controlsShifted(before: number, after: number): boolean {
  return Math.abs(after - before) > CONTROLS_SHIFT * Math.max(before, 1);
}

/** Counts failed actions in a row; true when the model should be shown the visible controls. */
export function trackFailures(
  wd: WatchdogState,
  outcomes: boolean[],
): { watchdog: WatchdogState; help: boolean } {
  let failures = wd.failuresInRow;
  for (const ok of outcomes) failures = ok ? 0 : failures + 1;
  return { watchdog: { ...wd, failuresInRow: failures }, help: failures >= FAILURES_BEFORE_HELP };
}

const PAGINATION = /^(next( page)?|more|load more|show more|older|newer|page \d+|\d+|[»›>]+|next ?[»›>]+)$/i;

/** A control whose name says "another page of the same list". */
export const isPaginationName = (name: string): boolean => PAGINATION.test(name.trim());

export const PAGINATION_BONUS = 3;

/**
 * After a pagination click, new items grant bonus steps (at most the base budget again), so paging
 * through a long list does not eat the task's working budget.
 */
export function paginationBonus(wd: WatchdogState, newItems: boolean, maxSteps: number): WatchdogState {
  if (!wd.paginationPending || !newItems) return wd;
  const bonus = Math.min(maxSteps, wd.bonusSteps + PAGINATION_BONUS);
  return { ...wd, paginationPending: false, bonusSteps: bonus };
}
