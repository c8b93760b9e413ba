import type { Action } from '../../actions/types.ts';
import type { Snapshot, SnapshotElement } from '../../perception/types.ts';
import { type ParsedInstruction, parseInstruction } from './parse.ts';
import { type Candidate, normalize, scoreCandidates } from './score.ts';

export { normalizeKey, type ParsedInstruction, parseInstruction } from './parse.ts';
export { scoreCandidates, textScore } from './score.ts';

export interface CandidateSummary {
  id: number;
  role: string;
  name: string;
  score: number;
}

export type MatchDecision =
  | {
      kind: 'action';
      action: Action;
      elementId?: number;
      score: number;
      margin: number;
      ms: number;
      parsed: ParsedInstruction;
    }
  | { kind: 'defer'; reason: string; candidates: CandidateSummary[]; ms: number; parsed?: ParsedInstruction };

export interface MatchOptions {
  /** Lowest score the best candidate needs (default 0.8). */
  threshold?: number;
  /** How far ahead of the runner-up it must be (default 0.15). */
  margin?: number;
}

const summary = (c: Candidate): CandidateSummary => ({
  id: c.element.id,
  role: c.element.role,
  name: c.element.name,
  score: c.score,
});

export function formatCandidates(candidates: CandidateSummary[]): string {
  return candidates.map((c) => `[${c.id}] ${c.role} "${c.name}" (${c.score.toFixed(2)})`).join(', ');
}

const describeEl = (el: SnapshotElement) => `${el.role} "${el.name}"`;

function actionFor(parsed: ParsedInstruction, el: SnapshotElement | undefined): Action | undefined {
  const target = el ? { id: el.id } : undefined;
  const on = el ? ` ${describeEl(el)}` : '';
  switch (parsed.verb) {
    case 'click':
    case 'dblclick':
    case 'hover':
      return target && { method: parsed.verb, target, description: `${parsed.verb}${on}` };
    case 'fill':
      return (
        target && {
          method: 'fill',
          target,
          args: [parsed.value ?? ''],
          description: `fill${on} with "${parsed.value}"`,
        }
      );
    case 'select': {
      if (!el || !target) return undefined;
      // The option must exist: choosing something that is not there is a guess.
      const want = normalize(parsed.value ?? '');
      const option = el.options?.find((o) => normalize(o) === want);
      if (!option) return undefined;
      return { method: 'select', target, args: [option], description: `select "${option}" in${on}` };
    }
    case 'check':
    case 'uncheck':
      return target && { method: parsed.verb, target, description: `${parsed.verb}${on}` };
    case 'toggle': {
      if (!el || !target) return undefined;
      const method = el.states.checked === true ? 'uncheck' : 'check';
      return { method, target, description: `${method}${on}` };
    }
    case 'press':
      return {
        method: 'press',
        ...(target ? { target } : {}),
        args: [parsed.key!],
        description: `press ${parsed.key}${on}`,
      };
    case 'scroll': {
      if (target) return { method: 'scroll', target, description: `scroll to${on}` };
      const to = parsed.scroll?.to;
      const arg = typeof to === 'number' ? `${to}%` : (to ?? 'down');
      return { method: 'scroll', args: [arg], description: `scroll ${arg}` };
    }
    case 'back':
    case 'forward':
    case 'reload':
      return { method: parsed.verb, description: parsed.verb };
  }
}

/**
 * The zero-token tier: answers only when one element clearly fits (score over the threshold and
 * ahead of the runner-up by the margin, or picked by an explicit ordinal among equals). Every
 * other case defers, with the closest candidates for the error message or the model.
 */
export function matchInstruction(
  instruction: string,
  snapshot: Snapshot,
  opts: MatchOptions = {},
): MatchDecision {
  const started = performance.now();
  const threshold = opts.threshold ?? 0.8;
  const marginNeeded = opts.margin ?? 0.15;
  const ms = () => Math.round((performance.now() - started) * 1000) / 1000;
  const parsed = parseInstruction(instruction);
  if (!parsed) return { kind: 'defer', reason: 'not a form the matcher knows', candidates: [], ms: ms() };
  if (!parsed.target) {
    const action = actionFor(parsed, undefined);
    if (!action) return { kind: 'defer', reason: 'needs a target', candidates: [], ms: ms(), parsed };
    return { kind: 'action', action, score: 1, margin: 1, ms: ms(), parsed };
  }
  const ranked = scoreCandidates(parsed.target, snapshot.elements, parsed.verb);
  const candidates = ranked.slice(0, 5).map(summary);
  const defer = (reason: string): MatchDecision => ({ kind: 'defer', reason, candidates, ms: ms(), parsed });
  const best = ranked[0];
  if (!best) return defer('no element fits');
  if (best.score < threshold) return defer(`best candidate scores ${best.score.toFixed(2)} < ${threshold}`);

  let chosen: Candidate | undefined;
  let margin: number;
  const ordinal = parsed.target.ordinal;
  if (ordinal !== undefined) {
    // Among the top group (same score), in reading order.
    const group = ranked.filter((c) => c.score >= best.score - 1e-9);
    const inOrder = group.sort(
      (a, b) => snapshot.elements.indexOf(a.element) - snapshot.elements.indexOf(b.element),
    );
    chosen = ordinal === -1 ? inOrder[inOrder.length - 1] : inOrder[ordinal - 1];
    if (!chosen) return defer(`there are only ${inOrder.length} matching elements`);
    const runnerUp = ranked.find((c) => c.score < best.score - 1e-9);
    margin = runnerUp ? best.score - runnerUp.score : 1;
  } else {
    const second = ranked[1];
    margin = second ? best.score - second.score : 1;
    if (second && margin < marginNeeded)
      return defer(
        margin === 0
          ? `${ranked.filter((c) => c.score === best.score).length} elements fit equally`
          : 'too close to call',
      );
    chosen = best;
  }
  if (margin < marginNeeded) return defer('too close to call');
  const action = actionFor(parsed, chosen.element);
  if (!action)
    return defer(parsed.verb === 'select' ? `no option "${parsed.value}" there` : 'cannot act on it');
  return {
    kind: 'action',
    action,
    elementId: chosen.element.id,
    score: chosen.score,
    margin,
    ms: ms(),
    parsed,
  };
}
