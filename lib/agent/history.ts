/**
 * What of the past the model sees: the newest steps that fit a token budget (at least a few, at
 * most MAX_RECENT), with older ones folded into a summary every SUMMARY_EVERY steps.
 */
import type { HistoryEntry } from './state.ts';

export const MIN_RECENT = 5;
export const MAX_RECENT = 25;
export const SUMMARY_EVERY = 10;
/** Entries kept verbatim after a summary. */
export const KEEP_AFTER_SUMMARY = 5;

export const estimateTokens = (text: string): number => Math.ceil(text.length / 3.5);

export function historyLine(e: HistoryEntry): string {
  let line = `${e.step}. ${e.actions}`;
  if (e.memory) line += ` | noted: ${e.memory}`;
  return line;
}

/** Newest entries first until the budget is spent (always at least MIN_RECENT), returned oldest first. */
export function fitHistory(entries: readonly HistoryEntry[], budgetTokens: number): string[] {
  const out: string[] = [];
  let used = 0;
  for (let i = entries.length - 1; i >= 0 && out.length < MAX_RECENT; i--) {
    const line = historyLine(entries[i]!);
    const cost = estimateTokens(line);
    if (out.length >= MIN_RECENT && used + cost > budgetTokens) break;
    out.push(line.length > 600 ? `${line.slice(0, 600)}…` : line);
    used += cost;
  }
  return out.reverse();
}

/** At every SUMMARY_EVERY-th step with enough history, the entries to fold into the summary. */
export function dueForSummary(step: number, history: readonly HistoryEntry[]): HistoryEntry[] | undefined {
  if (step === 0 || step % SUMMARY_EVERY !== 0 || history.length <= KEEP_AFTER_SUMMARY) return undefined;
  return history.slice(0, history.length - KEEP_AFTER_SUMMARY);
}
