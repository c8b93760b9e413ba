/**
 * The zero-token tier: turns a plain instruction into one `Action` on the current snapshot, or
 * defers. It answers only when one element clearly fits: the best score clears the threshold, no
 * look-alike shares its role and name, and the runner-up is behind by the margin (or an explicit
 * ordinal picks among look-alikes). Deferring costs one model call; a wrong click can cost a
 * purchase, so every doubt defers, with the closest candidates for the message or the model.
 */
import type { Action } from '../../actions/types.ts';
import type { Snapshot } from '../../perception/types.ts';
import { actionFor, HAS_VARIABLE, optionFor, SELECT_WORDS, selectsOffering } from './action.ts';
import {
  inOpenDialog,
  resolveDialogClose,
  resolveExactCase,
  resolveGlyph,
  resolveRoleOnly,
} from './generic.ts';
import { ground } from './ground/decide.ts';
import { type ParsedInstruction, parseInstruction } from './parse.ts';
import { resolveTarget } from './resolve.ts';
import type { Candidate } from './score.ts';
import { type CandidateSummary, shown, summary } from './summary.ts';
import { normalize } from './text.ts';

export {
  type MatchVerb,
  normalizeKey,
  type ParsedInstruction,
  parseInstruction,
  type RoleHint,
  type TargetPhrase,
} from './parse.ts';
export { type Candidate, type MatchElement, scoreCandidates } from './score.ts';
export { type CandidateSummary, formatCandidates } from './summary.ts';
export { normalize, textScore, toNorm } from './text.ts';

export type MatchDecision =
  | {
      kind: 'action';
      action: Action;
      elementId?: number;
      score: number;
      margin: number;
      /** Why this element: which of its texts or facts matched, and how it beat the others. */
      reason: string;
      ms: number;
      parsed: ParsedInstruction;
    }
  | { kind: 'defer'; reason: string; candidates: CandidateSummary[]; ms: number; parsed?: ParsedInstruction };

export interface MatchOptions {
  /** Lowest score the chosen element needs (default 0.75). */
  threshold?: number;
  /** How far ahead of the runner-up it must be (default 0.15). */
  margin?: number;
}

/**
 * 0.75 sits between "the phrase is most of the name" (≥ 0.77: "save draft" ~ "Save draft now",
 * "email" ~ "Email address") and "the phrase is half the name" (0.70: "accept" ~ "Accept all",
 * "cancel" ~ "Cancel subscription"), which is where a guess would start.
 */
export const DEFAULT_THRESHOLD = 0.75;
/** Larger than any state factor's effect on equals (off-screen 0.97) and any stemming tie (0.98). */
export const DEFAULT_MARGIN = 0.15;

const TOP = 5;

/**
 * Decides what `instruction` does on `snapshot`, without a model. Pure and synchronous; a few
 * milliseconds on a few hundred elements.
 */
export function matchInstruction(
  instruction: string,
  page: Snapshot,
  opts: MatchOptions = {},
): MatchDecision {
  const started = performance.now();
  const threshold = opts.threshold ?? DEFAULT_THRESHOLD;
  const need = opts.margin ?? DEFAULT_MARGIN;
  const ms = () => Math.round((performance.now() - started) * 1000) / 1000;

  const parsed = parseInstruction(instruction);
  if (!parsed) return { kind: 'defer', reason: 'not a form the matcher knows', candidates: [], ms: ms() };
  // "the OK button in the dialog": only what the open dialog holds is a candidate.
  const snapshot = parsed.target?.within === 'dialog' ? inOpenDialog(page) : page;
  const deferWith = (reason: string, ranked: Candidate[] = []): MatchDecision => ({
    kind: 'defer',
    reason,
    candidates: ranked.slice(0, TOP).map(summary),
    ms: ms(),
    parsed,
  });
  const answer = (action: Action, cand?: Candidate, margin = 1, why?: string): MatchDecision => ({
    kind: 'action',
    action,
    ...(cand ? { elementId: cand.element.id } : {}),
    score: cand ? cand.score : 1,
    margin: Math.round(margin * 1000) / 1000,
    reason:
      why ??
      (cand
        ? `its ${cand.by} matches (${cand.score.toFixed(2)}, ahead by ${margin.toFixed(2)})`
        : 'no element needed'),
    ms: ms(),
    parsed,
  });

  const target = parsed.target;
  if (!target) {
    if (parsed.keyWord) {
      // "press home" next to a "Home" link: the key or the link? Not ours to guess.
      const word = normalize(parsed.keyWord);
      const named = snapshot.elements.find((e) => e.interactive && normalize(e.name) === word);
      if (named) return deferWith(`"${parsed.keyWord}" is a key and also ${shown(named)}`);
    }
    const action = actionFor(parsed, undefined);
    return typeof action === 'string' ? deferWith(action) : answer(action);
  }

  // Targets named by kind, not words ("the button", "tab #2", "close the dialog"): counted, not scored.
  const generic = target.closes
    ? resolveDialogClose(snapshot)
    : target.roleOnly
      ? resolveRoleOnly(parsed.verb, target, snapshot, parsed.value)
      : resolveGlyph(parsed.verb, target, snapshot);
  if (generic) {
    if (!generic.ok) {
      // "click the x" may still be an element called X when no dialog is open.
      if (!target.closes) return deferWith(generic.reason);
    } else {
      const action = actionFor(parsed, generic.cand.element);
      return typeof action === 'string'
        ? deferWith(action)
        : answer(action, generic.cand, generic.margin, generic.reason);
    }
  }
  // Sign-in and sign-up concepts ("the email field", "the log in button"): the grounding model
  // weighs every fact about the fields and their forms, and its deferral is final.
  const grounded = ground(target, parsed.verb, snapshot.elements, { threshold, margin: need });
  if (grounded) {
    const ranked: Candidate[] = grounded.ranked
      .slice(0, TOP)
      .map((s) => ({ element: s.el, score: Math.round(s.score * 1000) / 1000, base: s.score, by: 'name' }));
    if (!grounded.ok) return deferWith(grounded.reason, ranked);
    const action = actionFor(parsed, grounded.el);
    if (typeof action === 'string') return deferWith(action, ranked);
    const cand: Candidate = { element: grounded.el, score: grounded.score, base: grounded.score, by: 'name' };
    return answer(
      action,
      cand,
      grounded.margin,
      `${grounded.why} (${grounded.score.toFixed(2)}, ahead by ${grounded.margin.toFixed(2)})`,
    );
  }

  const main = resolveTarget(parsed, target, snapshot, threshold, need);

  // "set size to "Large"": a field to fill, or a native select to choose in. Both fitting is a tie.
  if (parsed.verb === 'fill' && parsed.alsoSelect && parsed.value !== undefined) {
    const asSelect = resolveTarget({ ...parsed, verb: 'select' }, target, snapshot, threshold, need);
    const selectOk =
      asSelect.pick.ok &&
      (HAS_VARIABLE.test(parsed.value) || optionFor(asSelect.pick.cand.element, parsed.value) !== undefined);
    if (selectOk && main.pick.ok) return deferWith('both a field and a dropdown fit', main.ranked);
    if (selectOk && asSelect.pick.ok) {
      const action = actionFor({ ...parsed, verb: 'select' }, asSelect.pick.cand.element);
      if (typeof action !== 'string') return answer(action, asSelect.pick.cand, asSelect.pick.margin);
    }
  }

  // "select Large" with no "from": a clickable thing called Large, or an option of one select.
  if (
    parsed.verb === 'click' &&
    parsed.word &&
    SELECT_WORDS.has(parsed.word) &&
    target.ordinal === undefined
  ) {
    const holders = selectsOffering(snapshot, target.phrase);
    if (holders.length > 0) {
      if (main.pick.ok || main.ranked.some((c) => c.score >= threshold))
        return deferWith(`"${target.phrase}" is both an element and a dropdown option`, main.ranked);
      if (holders.length > 1) return deferWith(`${holders.length} dropdowns offer "${target.phrase}"`);
      const el = holders[0]!;
      const action = actionFor(parsed, el, 'select-option');
      if (typeof action !== 'string') return answer(action, { element: el, score: 1, base: 1, by: 'value' });
    }
  }

  if (!main.pick.ok) {
    // "ok" among "ok" and "Ok": the quotes say which.
    const exact = resolveExactCase(target, main.ranked, threshold);
    if (!exact?.ok) return deferWith(main.pick.reason, main.ranked);
    const action = actionFor(parsed, exact.cand.element);
    return typeof action === 'string'
      ? deferWith(action, main.ranked)
      : answer(action, exact.cand, exact.margin);
  }
  const action = actionFor(parsed, main.pick.cand.element);
  if (typeof action === 'string') return deferWith(action, main.ranked);
  return answer(action, main.pick.cand, main.pick.margin, main.pick.why);
}
