/**
 * Targets named by kind rather than by words: "the button", "the text field", "tab #2", and the
 * close control of an open dialog. There is no text to score, so the rule is counting: act when
 * exactly one usable element of that kind is on the page (or the ordinal picks one in reading
 * order), defer otherwise. Counting is only sound over the whole page.
 */
import type { Snapshot } from '../../perception/types.ts';
import type { MatchVerb, TargetPhrase } from './parse.ts';
import { hintFactor, isNativeSelect, verbAllows } from './roles.ts';
import type { Candidate, MatchElement } from './score.ts';
import { normalize } from './text.ts';

export type GenericPick =
  | { ok: true; cand: Candidate; margin: number; reason?: string }
  | { ok: false; reason: string };

const HAS_VARIABLE = /%[A-Za-z_][\w.-]*%/;
/** What a dialog's close control is called, once normalised; glyphs are compared raw. */
const CLOSE_NAMES = new Set([
  'close',
  'x',
  'dismiss',
  'close dialog',
  'close modal',
  'close popup',
  'close window',
  'close this dialog',
  'close the dialog',
]);
const CLOSE_GLYPHS = new Set(['×', '✕', '✖', '╳', '⨯', 'x', 'X', '✗', '🗙']);
const CLOSE_ROLES = new Set(['button', 'link', 'clickable', 'img']);

/** Kind words that also say which element: a textarea is a field, but not every field is one. */
const TAG_WORDS: Record<string, string> = { textarea: 'textarea', 'text area': 'textarea', text: 'input' };

const picked = (el: MatchElement, margin = 1, reason?: string): GenericPick => ({
  ok: true,
  cand: { element: el, score: 1, base: 1, by: 'name' },
  margin,
  ...(reason ? { reason } : {}),
});

const ORDINAL_WORDS = [
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
];
const ordinalWord = (n: number) => (n === -1 ? 'last' : (ORDINAL_WORDS[n - 1] ?? `${n}th`));
const plural = (kind: string) => (kind.endsWith('s') ? kind : `${kind}s`);

/** Why counting would mislead on this snapshot, if it would. */
export function cannotCount(snapshot: Snapshot): string | undefined {
  if (snapshot.chunk) return 'counting elements needs the whole page, and this snapshot is one chunk';
  if (snapshot.stats.omittedInteractive > 0)
    return 'counting elements needs the whole page, and this snapshot left interactive elements out';
  return undefined;
}

/** Native selects holding the option `value` names (same normalised text). */
function offers(el: MatchElement, value: string): boolean {
  const want = normalize(value);
  return !!el.options?.some((o) => o === value || normalize(o) === want);
}

/**
 * "the button", "the second tab", "select A from the dropdown": elements whose role the hint names
 * exactly (a link is not "the button"), that the verb can act on. One usable one → it; with an
 * ordinal, the nth in reading order; anything else defers.
 */
export function resolveRoleOnly(
  verb: MatchVerb,
  target: TargetPhrase,
  snapshot: Snapshot,
  value?: string,
): GenericPick {
  const hint = target.roleHint;
  if (!hint) return { ok: false, reason: 'no kind of element named' };
  const why = cannotCount(snapshot);
  if (why) return { ok: false, reason: why };
  const tag = TAG_WORDS[target.full ?? ''];
  // Usable: rendered (when the snapshot measured boxes at all) and not hidden by the page's styling.
  const measured = snapshot.elements.some((e) => e.box);
  let pool = snapshot.elements.filter(
    (e) =>
      e.interactive &&
      verbAllows(verb, e) &&
      hintFactor(hint, e) === 1 &&
      (!measured || !!e.box) &&
      e.facts?.concealed !== true &&
      (!tag || e.tag === tag),
  );
  // "select A from the dropdown": only the dropdowns that offer A can be meant.
  if (verb === 'select' && value !== undefined && !HAS_VARIABLE.test(value))
    pool = pool.filter((e) => isNativeSelect(e) && offers(e, value));
  const kind = target.full ?? hint;
  if (target.ordinal !== undefined) {
    const chosen = target.ordinal === -1 ? pool[pool.length - 1] : pool[target.ordinal - 1];
    if (!chosen)
      return { ok: false, reason: `there are only ${pool.length} usable ${plural(kind)} on the page` };
    // "Tab #2" may be a name as much as a count: both readings must agree.
    const literal = normalize(`${kind} ${target.ordinal}`);
    const named = pool.filter((e) => normalize(e.name) === literal);
    if (named.length > 0 && (named.length > 1 || named[0] !== chosen))
      return { ok: false, reason: `"${kind} ${target.ordinal}" reads both as a name and as a count` };
    if (chosen.states.disabled) return { ok: false, reason: `that ${kind} is disabled` };
    return picked(chosen, 1, `the ${ordinalWord(target.ordinal)} of ${pool.length} usable ${plural(kind)}`);
  }
  if (pool.length === 0) return { ok: false, reason: `no ${kind} on the page` };
  // A disabled twin still counts: the instruction may mean it, and then acting on the other is wrong.
  if (pool.length > 1) return { ok: false, reason: `${pool.length} elements are "the ${kind}"; say which` };
  const only = pool[0]!;
  if (only.states.disabled) return { ok: false, reason: `the only ${kind} is disabled` };
  return picked(only, 1, `the only usable ${kind} on the page`);
}

const isCloseControl = (el: MatchElement): boolean =>
  CLOSE_ROLES.has(el.role) &&
  (CLOSE_GLYPHS.has(el.name.trim()) ||
    CLOSE_NAMES.has(normalize(el.name)) ||
    CLOSE_NAMES.has(normalize(el.label ?? '')));

/**
 * "close the dialog", "click the x": the close control inside the open dialog. Several close
 * controls in one dialog (an × and a Close button) all do the same, so the first is taken; close
 * controls in different dialogs are a question of which dialog, and defer.
 */
export function resolveDialogClose(snapshot: Snapshot): GenericPick {
  const inDialogs = snapshot.elements.filter((e) => e.dialog !== undefined && e.interactive && !!e.box);
  if (inDialogs.length === 0) return { ok: false, reason: 'no open dialog with a control in it' };
  const closers = inDialogs.filter((e) => isCloseControl(e) && !e.states.disabled);
  if (closers.length === 0) return { ok: false, reason: 'the open dialog has no close control' };
  const dialogs = new Set(closers.map((e) => `${e.frame}:${e.dialog}`));
  if (dialogs.size > 1) return { ok: false, reason: `${dialogs.size} open dialogs; say which one to close` };
  return picked(closers[0]!);
}

/**
 * A quoted name made only of symbols ("⇐", "+", "…"): words-based scoring sees nothing in it, so
 * it must equal an element's name exactly, on exactly one element. Undefined when the target has
 * words to score.
 */
export function resolveGlyph(
  verb: MatchVerb,
  target: TargetPhrase,
  snapshot: Snapshot,
): GenericPick | undefined {
  if (!target.quoted || !target.phrase.trim() || normalize(target.phrase)) return undefined;
  const want = target.phrase.trim();
  const hint = target.roleHint;
  const hits = snapshot.elements.filter(
    (e) =>
      e.interactive &&
      verbAllows(verb, e) &&
      (!hint || hintFactor(hint, e) > 0) &&
      (e.name.trim() === want || e.label?.trim() === want),
  );
  if (hits.length === 0) return { ok: false, reason: `nothing is called "${want}"` };
  if (hits.length > 1) return { ok: false, reason: `${hits.length} elements are called "${want}"` };
  if (hits[0]!.states.disabled) return { ok: false, reason: `"${want}" is disabled` };
  return picked(hits[0]!);
}

/** The snapshot cut down to what open dialogs hold. */
export function inOpenDialog(snapshot: Snapshot): Snapshot {
  return { ...snapshot, elements: snapshot.elements.filter((e) => e.dialog !== undefined) };
}

/**
 * A quoted name that several elements share once case is ignored ("ok", "Ok", "OK"): quotes mean
 * "exactly this", so the one element whose text is exactly the quoted text, if only one is.
 */
export function resolveExactCase(
  target: TargetPhrase,
  ranked: readonly Candidate[],
  threshold: number,
): GenericPick | undefined {
  if (!target.quoted || target.ordinal !== undefined) return undefined;
  const want = target.phrase.trim();
  const close = ranked.filter((c) => c.base >= threshold);
  const exact = close.filter((c) => c.element.name.trim() === want || c.element.label?.trim() === want);
  if (exact.length !== 1 || close.length < 2) return undefined;
  const only = exact[0]!;
  if (only.element.states.disabled) return undefined;
  return { ok: true, cand: only, margin: 1 };
}
