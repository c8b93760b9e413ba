/**
 * Memory across the samples of a run, as pure functions: what one sample's action log says worked
 * and failed on a site (zero tokens), and which of the run's lines a later sample is shown, ranked by
 * its goal. The store side (lib/store/run-memory-ports.ts) and the calls live in run-memory-sync.ts.
 */
import type { RunMemoryEntry, RunMemoryLine } from '../store/run-memory-ports.ts';
import { domainOf } from './memory.ts';
import type { StepRecord } from './state.ts';

/** Hints a sample is shown, and the steps that show them (the reference's "first 3 steps only"). */
export const RUN_HINTS_SHOWN = 5;
export const RUN_HINT_STEPS = 3;

/** Tools that move through the page; their ids mean nothing to another sample, their names do. */
const PAGE_TOOLS = new Set(['click', 'type', 'select_option', 'scroll', 'wait', 'download']);
const DATA_TOOLS = new Set(['save_progress', 'done', 'extract']);

type LoggedAction = StepRecord['actions'][number];

/** The action as a later sample can use it: role and name, never the typed text or an element id. */
function described(a: LoggedAction): string {
  const what = (a.what ?? a.tool).replace(/\[\d+\]\s*/g, '');
  return a.tool === 'type' ? what.replace(/^type ".*" into/s, 'type into') : what;
}

/** Field names of the data an action saved (save_progress / done), to match later goals against. */
function dataKeys(a: LoggedAction): string[] {
  const input = a.input as { data?: unknown } | null;
  const data = input && typeof input === 'object' ? input.data : undefined;
  return data && typeof data === 'object' && !Array.isArray(data) ? Object.keys(data).slice(0, 6) : [];
}

const short = (text: string, n: number) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

/**
 * What the log says: the path that led to the first saved or read data ("click tab "Details" → the
 * data was there"), or that it was on the start page; and the page actions that failed. Empty when
 * the log says nothing a later sample could use (then one small model call may be asked instead).
 */
export function distillFromLog(steps: readonly StepRecord[]): RunMemoryLine[] {
  const lines: RunMemoryLine[] = [];
  const firstData = (() => {
    for (const [si, s] of steps.entries())
      for (const [ai, a] of s.actions.entries()) if (a.ok && DATA_TOOLS.has(a.tool)) return { si, ai };
    return undefined;
  })();
  if (firstData) {
    const step = steps[firstData.si]!;
    const action = step.actions[firstData.ai]!;
    const okPage = (acts: readonly LoggedAction[]) => acts.filter((a) => a.ok && PAGE_TOOLS.has(a.tool));
    // The actions just before the data showed: in the same step, else the latest step that acted.
    let lead = okPage(step.actions.slice(0, firstData.ai));
    for (let si = firstData.si - 1; lead.length === 0 && si >= 0; si--) lead = okPage(steps[si]!.actions);
    const keys = dataKeys(action);
    const what = keys.length ? `the data (${keys.join(', ')})` : 'the data';
    const domain = domainOf(step.url);
    if (domain)
      lines.push({
        domain,
        kind: 'worked',
        text:
          lead.length > 0
            ? `to reach ${what}: ${lead.slice(-3).map(described).join(', then ')}; it showed after that (${action.tool} at step ${step.step})`
            : `${what} is on the start page: ${action.tool} it at once (step ${step.step}), no clicking needed`,
      });
  }
  const seen = new Set<string>();
  for (const s of steps)
    for (const a of s.actions) {
      if (a.ok || !PAGE_TOOLS.has(a.tool)) continue;
      const what = described(a);
      const domain = domainOf(s.url);
      if (seen.has(what) || !domain || seen.size >= 3) continue;
      seen.add(what);
      lines.push({ domain, kind: 'failed', text: `${what} failed: ${short(a.outcome, 100)}` });
    }
  return lines;
}

const STOP = new Set(['the', 'and', 'for', 'from', 'with', 'this', 'that', 'each', 'page', 'its', 'into']);

/** The words of a text that can match between a goal and a hint (lower case, 3+ letters). */
export function words(text: string): Set<string> {
  return new Set(
    text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length >= 3 && !STOP.has(w)),
  );
}

/**
 * The run's lines for one domain, best first: most words shared with the goal, then seen in more
 * samples, then what worked before what failed, then the newest. One line per text, with its count.
 */
export function rankHints(
  entries: readonly RunMemoryEntry[],
  domain: string,
  goal: string,
  limit = RUN_HINTS_SHOWN,
): string[] {
  const goalWords = words(goal);
  const byText = new Map<string, { line: RunMemoryLine; samples: Set<string>; newest: number }>();
  for (const [order, entry] of entries.entries())
    for (const line of entry.lines) {
      if (line.domain !== domain) continue;
      const key = `${line.kind}\n${line.text}`;
      const seen = byText.get(key) ?? { line, samples: new Set<string>(), newest: order };
      seen.samples.add(entry.sampleId);
      seen.newest = order;
      byText.set(key, seen);
    }
  const overlap = (text: string) => [...words(text)].filter((w) => goalWords.has(w)).length;
  return [...byText.values()]
    .map((h) => ({ ...h, score: overlap(h.line.text) }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        b.samples.size - a.samples.size ||
        (a.line.kind === b.line.kind ? 0 : a.line.kind === 'worked' ? -1 : 1) ||
        b.newest - a.newest,
    )
    .slice(0, limit)
    .map((h) => {
      const n = h.samples.size;
      return `${h.line.kind} (${n} sample${n === 1 ? '' : 's'}): ${h.line.text}`;
    });
}
