/**
 * The zero-token tier: turns a plain instruction into one `Action` on the current snapshot, or
 * defers. It answers only when one element clearly fits: the best score clears the threshold, no
 * look-alike shares its role and name, and the runner-up is behind by the margin (or an explicit
 * ordinal picks among look-alikes). Deferring costs one model call; a wrong click can cost a
 * purchase, so every doubt defers, with the closest candidates for the message or the model.
 */
import type { Action } from '../../actions/types.ts';
import type { Snapshot } from '../../perception/types.ts';
import {
  inOpenDialog,
  resolveDialogClose,
  resolveExactCase,
  resolveGlyph,
  resolveRoleOnly,
} from './generic.ts';
import { ground } from './ground/decide.ts';
import { type ParsedInstruction, parseInstruction, type TargetPhrase } from './parse.ts';
import {
  type Candidate,
  isNativeSelect,
  type MatchElement,
  normalize,
  sameLook,
  scoreCandidates,
} from './score.ts';

export {
  type MatchVerb,
  normalizeKey,
  type ParsedInstruction,
  parseInstruction,
  type RoleHint,
  type TargetPhrase,
} from './parse.ts';
export { type Candidate, type MatchElement, normalize, scoreCandidates, textScore, toNorm } from './score.ts';

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
const EXACT = 0.95;
const EPS = 1e-9;
const HAS_VARIABLE = /%[A-Za-z_][\w.-]*%/;
const SELECT_WORDS = new Set(['select', 'choose', 'pick']);
const CHECK_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);

const summary = (c: Candidate): CandidateSummary => ({
  id: c.element.id,
  role: c.element.role,
  name: c.element.name,
  score: c.score,
});

/** "closest: [3] button 'Sign up' (0.62), [5] link 'Sign in' (0.41)" for error messages. */
export function formatCandidates(candidates: readonly CandidateSummary[]): string {
  if (candidates.length === 0) return 'no element came close';
  return `closest: ${candidates
    .map((c) => `[${c.id}] ${c.role} '${short(c.name)}' (${c.score.toFixed(2)})`)
    .join(', ')}`;
}

const short = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);
const shown = (el: MatchElement) =>
  `${el.role} '${short(el.name || el.label || el.placeholder || `#${el.id}`)}'`;

type Pick = { ok: true; cand: Candidate; margin: number; why?: string } | { ok: false; reason: string };

/** No ordinal: the best must clear the threshold, have no look-alike, and lead by the margin. */
function pickPlain(ranked: Candidate[], threshold: number, need: number): Pick {
  const best = ranked[0];
  if (!best) return { ok: false, reason: 'no element fits' };
  if (best.score < threshold)
    return { ok: false, reason: `best candidate scores ${best.score.toFixed(2)} < ${threshold}` };
  // Look-alikes the text could not separate (a context qualifier can): disabled or off-screen
  // twins count too, since the instruction does not say which one it means.
  const twins = ranked.filter(
    (c) => c !== best && sameLook(c.element, best.element) && best.base - c.base < need,
  ).length;
  if (twins > 0)
    return {
      ok: false,
      reason: `${twins + 1} elements look the same (${shown(best.element)}); say which one, e.g. "the second …"`,
    };
  const second = ranked[1];
  const margin = second ? best.score - second.score : best.score;
  if (margin < need)
    return { ok: false, reason: `too close to call: ${shown(best.element)} vs ${shown(second!.element)}` };
  return { ok: true, cand: best, margin };
}

/** Counting is only sound over the whole page: a budgeted or chunked snapshot left elements out. */
function countable(snapshot: Snapshot): string | undefined {
  if (snapshot.chunk) return 'an ordinal counts over the whole page, and this snapshot is one chunk';
  if (snapshot.stats.omittedInteractive > 0)
    return 'an ordinal counts over the whole page, and this snapshot left interactive elements out';
  return undefined;
}

/** With an ordinal: it picks among the equally-scored best group, in document order. */
function pickOrdinal(ranked: Candidate[], ordinal: number, threshold: number, need: number): Pick {
  let top = 0;
  for (const c of ranked) if (c.base > top) top = c.base;
  if (top < threshold) return { ok: false, reason: `best candidate scores ${top.toFixed(2)} < ${threshold}` };
  const group = ranked.filter((c) => c.base >= top - EPS).sort((a, b) => a.element.id - b.element.id);
  let rest = 0;
  for (const c of ranked) if (c.base < top - EPS && c.base > rest) rest = c.base;
  // Something nearly as good outside the group makes the count itself doubtful.
  if (top - rest < need) return { ok: false, reason: 'too close to call which elements count' };
  const chosen = ordinal === -1 ? group[group.length - 1] : group[ordinal - 1];
  if (!chosen) return { ok: false, reason: `there are only ${group.length} matching elements` };
  if (chosen.element.states.disabled) return { ok: false, reason: `${shown(chosen.element)} is disabled` };
  return { ok: true, cand: chosen, margin: top - rest };
}

interface Resolved {
  pick: Pick;
  ranked: Candidate[];
}

function resolveTarget(
  parsed: ParsedInstruction,
  target: TargetPhrase,
  snapshot: Snapshot,
  threshold: number,
  need: number,
): Resolved {
  const verb = parsed.verb;
  // Targets with a kind and no words ("the button", "the second tab") were counted earlier by
  // resolveRoleOnly (generic.ts); here the element is always named.
  if (target.ordinal === undefined) {
    const ranked = scoreCandidates(target, snapshot.elements, verb);
    return { pick: pickPlain(ranked, threshold, need), ranked };
  }
  if (!target.phrase) return { pick: { ok: false, reason: 'no words name the element' }, ranked: [] };
  const cannotCount = countable(snapshot);
  const ranked = scoreCandidates(target, snapshot.elements, verb);
  if (target.literal) {
    // "first aid kit" may be a name, not a count: an exact literal reading wins, unless the
    // counted reading is exact too.
    const { ordinal: _o, literal, full: _f, ...rest } = target;
    const lit = scoreCandidates({ ...rest, phrase: literal }, snapshot.elements, verb);
    const litBest = lit[0];
    const inGroup = (c: Candidate) => ranked.some((r) => r.element === c.element && r.base >= EXACT);
    if (litBest && litBest.base >= EXACT) {
      if (ranked.some((r) => r.base >= EXACT && r.element !== litBest.element))
        return {
          pick: { ok: false, reason: `"${literal}" reads both as a name and as a count` },
          ranked: lit,
        };
      return { pick: pickPlain(lit, threshold, need), ranked: lit };
    }
    if (litBest && litBest.score >= threshold && !inGroup(litBest))
      return {
        pick: { ok: false, reason: `"${literal}" reads both as a name and as a count` },
        ranked,
      };
  }
  if (cannotCount) return { pick: { ok: false, reason: cannotCount }, ranked };
  return { pick: pickOrdinal(ranked, target.ordinal, threshold, need), ranked };
}

/** The option of a native select that a value names (same normalised text), if any. */
function optionFor(el: MatchElement, value: string): string | undefined {
  const want = normalize(value);
  if (!want || !el.options) return undefined;
  return el.options.find((o) => o === value) ?? el.options.find((o) => normalize(o) === want);
}

/** Native selects holding exactly the option `value` names. */
function selectsOffering(snapshot: Snapshot, value: string): MatchElement[] {
  return snapshot.elements.filter(
    (e) => isNativeSelect(e) && e.interactive && !e.states.disabled && optionFor(e, value) !== undefined,
  );
}

function scrollArg(parsed: ParsedInstruction): string {
  const to = parsed.scroll?.to ?? 'down';
  if (typeof to === 'number') return `${to}%`;
  if ((to === 'up' || to === 'down') && parsed.scroll?.px)
    return `${to === 'up' ? '-' : '+'}${parsed.scroll.px}`;
  return to;
}

/** The action for a decided element (or none, for page-level verbs); a string is a reason to defer. */
function actionFor(
  parsed: ParsedInstruction,
  el: MatchElement | undefined,
  method?: 'select-option',
): Action | string {
  const target = el ? { id: el.id } : undefined;
  const on = el ? ` ${shown(el)}` : '';
  if (method === 'select-option' && el) {
    const option = optionFor(el, parsed.target?.phrase ?? parsed.value ?? '');
    if (!option) return 'no such option';
    return {
      method: 'select',
      target: { id: el.id },
      args: [option],
      description: `select '${option}' in${on}`,
    };
  }
  switch (parsed.verb) {
    case 'click':
      if (!target || !el) return 'needs a target';
      // "select the Terms checkbox" / "choose Pro": ticking is idempotent, a click would toggle.
      if (parsed.word && SELECT_WORDS.has(parsed.word) && CHECK_ROLES.has(el.role))
        return { method: 'check', target, description: `check${on}` };
      return { method: 'click', target, description: `click${on}` };
    case 'dblclick':
      return target ? { method: 'dblclick', target, description: `double-click${on}` } : 'needs a target';
    case 'hover':
      return target ? { method: 'hover', target, description: `hover over${on}` } : 'needs a target';
    case 'fill':
    case 'type': {
      const value = parsed.value ?? '';
      if (!target) return { method: 'type', args: [value], description: `type '${value}'` };
      return {
        method: parsed.verb,
        target,
        args: [value],
        description: value ? `${parsed.verb} '${value}' into${on}` : `clear${on}`,
      };
    }
    case 'select': {
      if (!el || !target) return 'needs a target';
      const value = parsed.value ?? '';
      // A variable's value is unknown until the browser needs it: the executor checks the option.
      if (HAS_VARIABLE.test(value))
        return { method: 'select', target, args: [value], description: `select '${value}' in${on}` };
      const option = optionFor(el, value);
      if (!option) return `no option '${value}' in${on}`;
      return { method: 'select', target, args: [option], description: `select '${option}' in${on}` };
    }
    case 'check':
    case 'uncheck':
      return target ? { method: parsed.verb, target, description: `${parsed.verb}${on}` } : 'needs a target';
    case 'toggle': {
      if (!el || !target) return 'needs a target';
      const now = el.states.checked;
      if (now !== true && now !== false) return `cannot tell whether${on} is checked`;
      const method = now ? 'uncheck' : 'check';
      return { method, target, description: `${method}${on}` };
    }
    case 'press': {
      const key = parsed.key ?? '';
      return {
        method: 'press',
        ...(target ? { target } : {}),
        args: [key],
        description: `press ${key}${el ? ` in${on}` : ''}`,
      };
    }
    case 'scroll': {
      if (target) return { method: 'scroll', target, args: [], description: `scroll to${on}` };
      const arg = scrollArg(parsed);
      const how = arg.endsWith('%') ? `to ${arg}` : arg === 'top' || arg === 'bottom' ? `to the ${arg}` : arg;
      return { method: 'scroll', args: [arg], description: `scroll ${how}` };
    }
    case 'back':
      return { method: 'back', description: 'go back' };
    case 'forward':
      return { method: 'forward', description: 'go forward' };
    case 'reload':
      return { method: 'reload', description: 'reload the page' };
  }
}

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
