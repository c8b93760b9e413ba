/**
 * Scores snapshot elements against a target phrase. The scale is built so that only readings a
 * person would accept without a second look reach the default threshold (0.75):
 *
 *   1.00  the same text                         "sign in"        ~ "Sign in"
 *   0.97  the same words up to spelling or synonyms "Log-In" ~ "login" ~ "Sign in"
 *   0.96  the same words after stemming          "add to carts"   ~ "Add to cart"
 *   0.95  the same words in another order
 *   0.50 + 0.40·coverage  one side contains the other as a run of words, coverage = the share of
 *         the longer side's weight the shorter one accounts for: "email" ~ "Email address" 0.80,
 *         "save draft" ~ "Save draft now" 0.77, but "accept" ~ "Accept all" 0.70 and
 *         "cancel" ~ "Cancel subscription" 0.70 stay below: half a name is not a name.
 *   0.45 + 0.40·coverage  the same, words scattered
 *   < 0.60  partial overlap (token F1 × 0.6): never enough on its own
 *
 * Then role, verb and state factors multiply in (see `scoreCandidates`).
 */
import type { SnapshotElement } from '../../perception/types.ts';
import { canon } from './ground/lexicon.ts';
import type { MatchVerb, RoleHint, TargetPhrase } from './parse.ts';

/**
 * A snapshot element, plus the nearby text (row / card heading) perception may attach later.
 * `context` is not in `SnapshotElement` yet; it is read when present and is weak evidence only.
 */
export type MatchElement = SnapshotElement & { context?: string };

export type MatchedBy = 'name' | 'label' | 'placeholder' | 'value' | 'context' | 'name+context';

export interface Candidate {
  element: MatchElement;
  /** Final score in [0, 1]: text × role × verb × state factors. */
  score: number;
  /** Text × role × verb factors only: equal for look-alike elements, whatever their state. */
  base: number;
  /** Which of the element's texts matched best. */
  by: MatchedBy;
}

// ---------------------------------------------------------------------------------------------
// Normalising text

/**
 * Normalised text: `lit` is the lower-case words as written; `raw` the same with each concept's
 * word variants as one token ("log-in", "sign in" → `xlogin`; see ground/lexicon.ts); `stem` the
 * canonical words stemmed; `set` for lookups.
 */
export interface Norm {
  lit: string;
  raw: string;
  stem: string;
  tokens: string[];
  set: Set<string>;
  /** Summed weight of the distinct tokens. */
  weight: number;
  /** Tokens of full weight, in order: the words that carry the meaning. */
  sig: string[];
}

const EMPTY: Norm = { lit: '', raw: '', stem: '', tokens: [], set: new Set(), weight: 0, sig: [] };
const NON_ASCII = /[\u0080-\uffff]/;
const COMBINING = /[\u0300-\u036f]/g;
/** Letters NFKD leaves alone: "hasło", "bekræft", "størrelse", "straße". */
const STROKED = /[łøæßđœ]/g;
const UNSTROKED: Record<string, string> = { ł: 'l', ø: 'o', æ: 'ae', ß: 'ss', đ: 'd', œ: 'oe' };
const APOSTROPHE = /['’`]/g;
const AMPERSAND = /&/g;
const NON_WORD = /[^\p{L}\p{N}]+/gu;

/** Lower-case, no accents, no apostrophes, `&` as "and", anything else not a letter or digit a space. */
export function normalize(s: string): string {
  let t = s.toLowerCase();
  if (NON_ASCII.test(t))
    t = t
      .normalize('NFKD')
      .replace(COMBINING, '')
      .replace(STROKED, (c) => UNSTROKED[c] ?? c);
  return t.replace(APOSTROPHE, '').replace(AMPERSAND, ' and ').replace(NON_WORD, ' ').trim();
}

/** Words that glue a name together but do not tell two names apart. */
const LOW = new Set([
  'the',
  'a',
  'an',
  'to',
  'of',
  'for',
  'and',
  'or',
  'with',
  'by',
  'at',
  'from',
  'i',
  'me',
  'my',
  'your',
  'our',
  'this',
  'that',
  'is',
  'are',
  'be',
  'it',
  'its',
  'as',
  'required',
  'optional',
  'enter',
  'please',
  'here',
  'du',
  'ihre',
  'deine',
  'votre',
  'ton',
  'tu',
  'su',
  'il',
  'tuo',
  'la',
  'le',
  'je',
  'uw',
  'seu',
  'sua',
  'din',
  'ditt',
]);
/** Words people add to or drop from field names without changing which field they mean. */
const SOFT = new Set([
  'address',
  'number',
  'adresse',
  'adres',
  'direccion',
  'indirizzo',
  'endereco',
  'adresa',
]);
const LOW_WEIGHT = 0.3;
const SOFT_WEIGHT = 0.35;
const weightOf = (w: string): number => (LOW.has(w) ? LOW_WEIGHT : SOFT.has(w) ? SOFT_WEIGHT : 1);

/** Plural and third-person 's' only: enough for "carts"/"cart", too little to merge meanings. */
export function stem(w: string): string {
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes')) return w.slice(0, -2);
  if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

export function toNorm(s: string | undefined): Norm {
  if (!s) return EMPTY;
  const lit = normalize(s);
  if (!lit) return EMPTY;
  const raw = canon(lit);
  const tokens = raw.split(' ').map(stem);
  const set = new Set(tokens);
  let weight = 0;
  for (const t of set) weight += weightOf(t);
  const sig = tokens.filter((t) => !LOW.has(t) && !SOFT.has(t));
  return { lit, raw, stem: tokens.join(' '), tokens, set, weight, sig };
}

/** True when `inner` occurs in `outer` as consecutive words. */
function containsRun(outer: string[], inner: string[]): boolean {
  if (inner.length === 0) return false;
  scan: for (let i = 0; i + inner.length <= outer.length; i++) {
    for (let j = 0; j < inner.length; j++) if (outer[i + j] !== inner[j]) continue scan;
    return true;
  }
  return false;
}

/**
 * How well a phrase names a text, in [0, 1] (scale in the file comment). `quoted` phrases must
 * equal the text: quotes mean "exactly this".
 */
export function textScore(phrase: Norm, text: Norm, quoted = false): number {
  if (!phrase.raw || !text.raw) return 0;
  if (phrase.lit === text.lit) return 1;
  if (quoted) return 0;
  // Same words up to spelling variants ("Log-In" ~ "login") or one concept's synonyms ("sign in").
  if (phrase.raw === text.raw) return phrase.raw === phrase.lit && text.raw === text.lit ? 1 : 0.97;
  if (phrase.stem === text.stem) return 0.96;
  let shared = 0;
  let allPhraseIn = true;
  for (const t of phrase.set) {
    if (text.set.has(t)) shared += weightOf(t);
    else allPhraseIn = false;
  }
  if (shared === 0) return 0;
  let allTextIn = true;
  for (const t of text.set) {
    if (!phrase.set.has(t)) {
      allTextIn = false;
      break;
    }
  }
  if (allPhraseIn && allTextIn) return 0.95;
  // A phrase of glue words alone ("it", "me") says nothing about which element.
  if (phrase.sig.length === 0 || text.sig.length === 0) return 0;
  if (allPhraseIn) {
    const coverage = shared / text.weight;
    return (containsRun(text.sig, phrase.sig) ? 0.5 : 0.45) + 0.4 * coverage;
  }
  if (allTextIn) {
    const coverage = shared / phrase.weight;
    // The phrase says more than the name. Extra glue or field words ("email address" for
    // "Email") are fine; an extra meaningful word ("Sign in with Facebook" for "Sign in")
    // describes something else, so it stays in the partial-overlap band.
    for (const t of phrase.sig) if (!text.set.has(t)) return 0.6 * coverage;
    return (containsRun(phrase.sig, text.sig) ? 0.5 : 0.45) + 0.4 * coverage;
  }
  const precision = shared / phrase.weight;
  const recall = shared / text.weight;
  return 0.6 * ((2 * precision * recall) / (precision + recall));
}

/** Highest score a name + context reading reaches: below an exact name, above the threshold. */
const QUALIFIED_CAP = 0.9;

/**
 * "add to cart for the Rain Jacket": the name ("Add to cart") accounts for part of the phrase and
 * the element's context ("Rain Jacket") for every other meaningful word. That tells twelve
 * identical buttons apart; any meaningful word found in neither keeps the reading out.
 */
export function qualifiedScore(phrase: Norm, name: Norm, context: Norm): number {
  if (!phrase.raw || !name.raw || !context.raw || name.sig.length === 0) return 0;
  for (const t of name.set) if (!phrase.set.has(t)) return 0;
  let fromContext = false;
  for (const t of phrase.sig) {
    if (name.set.has(t)) continue;
    if (!context.set.has(t)) return 0;
    fromContext = true;
  }
  if (!fromContext) return 0;
  let covered = 0;
  for (const t of phrase.set) if (name.set.has(t) || context.set.has(t)) covered += weightOf(t);
  return Math.min(QUALIFIED_CAP, 0.5 + 0.4 * (covered / phrase.weight));
}

// ---------------------------------------------------------------------------------------------
// Per-element preparation, memoised on the element object

interface Prepared {
  source: string;
  name: Norm;
  label: Norm;
  placeholder: Norm;
  value: Norm;
  context: Norm;
}

const prepared = new WeakMap<MatchElement, Prepared>();
const SEP = '\u0001';

/**
 * Normalises an element's texts once. The same snapshot is often matched several times (observe,
 * then act, then a benchmark loop), so the result is kept on a WeakMap and reused while the
 * element's texts are unchanged.
 */
function prepare(el: MatchElement): Prepared {
  const buttonValue = el.role === 'button' ? (el.value ?? '') : '';
  const source = `${el.name}${SEP}${el.label ?? ''}${SEP}${el.placeholder ?? ''}${SEP}${buttonValue}${SEP}${el.context ?? ''}`;
  const hit = prepared.get(el);
  if (hit && hit.source === source) return hit;
  const p: Prepared = {
    source,
    name: toNorm(el.name),
    label: toNorm(el.label),
    placeholder: toNorm(el.placeholder),
    value: toNorm(buttonValue),
    context: toNorm(el.context),
  };
  prepared.set(el, p);
  return p;
}

/** Same role and the same name and label once normalised: nothing in the text tells them apart. */
export function sameLook(a: MatchElement, b: MatchElement): boolean {
  if (a.role !== b.role) return false;
  const pa = prepare(a);
  const pb = prepare(b);
  return pa.name.lit === pb.name.lit && pa.label.lit === pb.label.lit;
}

// ---------------------------------------------------------------------------------------------
// Roles and verbs

const EDITABLE = new Set(['textbox', 'searchbox', 'spinbutton']);
const CHECKABLE = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
const UNCHECKABLE = new Set(['checkbox', 'switch', 'menuitemcheckbox']);
/** Roles a click is meant for; other interactive ones (fields, sliders) are clicked less often. */
const CLICKABLE = new Set([
  'button',
  'link',
  'menuitem',
  'menuitemcheckbox',
  'menuitemradio',
  'tab',
  'option',
  'radio',
  'checkbox',
  'switch',
  'treeitem',
  'clickable',
  'combobox',
  'gridcell',
  'row',
  'cell',
]);

export const isEditable = (el: SnapshotElement): boolean =>
  EDITABLE.has(el.role) || (el.role === 'combobox' && el.tag !== 'select' && !el.options);
export const isNativeSelect = (el: SnapshotElement): boolean =>
  (el.role === 'combobox' || el.role === 'listbox') && Array.isArray(el.options);
/** A button that opens something (menu button): it exposes an expanded state. */
const isMenuButton = (el: SnapshotElement): boolean =>
  el.role === 'button' && el.states.expanded !== undefined;

/** Whether `verb` can act on the element at all. */
export function verbAllows(verb: MatchVerb, el: SnapshotElement): boolean {
  switch (verb) {
    case 'fill':
    case 'type':
      return isEditable(el);
    case 'select':
      // Native selects only: a custom dropdown takes two steps (open, pick), which is the model's job.
      return isNativeSelect(el);
    case 'check':
      return CHECKABLE.has(el.role);
    case 'uncheck':
    case 'toggle':
      return UNCHECKABLE.has(el.role);
    case 'press':
      return el.interactive;
    default:
      return true;
  }
}

/** How much the verb wants this kind of element, when no role word was given. */
function verbFactor(verb: MatchVerb, el: SnapshotElement, hinted: boolean): number {
  if (!el.interactive) {
    if (verb === 'scroll') return 1;
    if (verb === 'hover') return 0.8;
    // Text, images, headings: rarely what a click means when a control says the same.
    return 0.6;
  }
  if ((verb === 'click' || verb === 'dblclick') && !hinted && !CLICKABLE.has(el.role)) return 0.9;
  return 1;
}

/** Roles a role word names exactly, and roles it often loosely means (a link styled as a button). */
const HINT_ROLES: Record<RoleHint, { exact: string[]; near: string[] }> = {
  // Role words are hard constraints: "the log in button" never clicks a link that says "Log in".
  button: { exact: ['button'], near: [] },
  link: { exact: ['link'], near: [] },
  icon: { exact: ['button', 'link'], near: ['img', 'clickable'] },
  field: { exact: ['textbox', 'searchbox', 'spinbutton', 'combobox'], near: [] },
  checkbox: { exact: ['checkbox', 'switch', 'menuitemcheckbox'], near: [] },
  switch: { exact: ['switch', 'checkbox'], near: [] },
  radio: { exact: ['radio', 'menuitemradio'], near: [] },
  option: { exact: ['radio', 'option', 'menuitemradio'], near: [] },
  dropdown: { exact: ['combobox', 'listbox'], near: ['menuitem', 'button'] },
  tab: { exact: ['tab'], near: [] },
  menuitem: { exact: ['menuitem', 'menuitemcheckbox', 'menuitemradio'], near: [] },
  heading: { exact: ['heading'], near: ['region', 'group', 'article', 'banner', 'contentinfo'] },
};
const NEAR_FACTOR = 0.8;
const NATIVE_CONTROL_TAGS = new Set(['button', 'input', 'a', 'area', 'summary', 'select', 'option']);

/** 1 for a role the hint names, 0.8 for one it loosely means, 0 for anything else. */
export function hintFactor(hint: RoleHint, el: SnapshotElement): number {
  if (hint === 'field' && el.role === 'combobox') return isEditable(el) ? 1 : 0;
  // A <span>/<div> that only has a click handler was given "button" by us, not by its author: pages
  // style such things as links, so "the … link" may mean it (never a native <button> or <input>).
  if (hint === 'link' && el.role === 'button' && !NATIVE_CONTROL_TAGS.has(el.tag)) return NEAR_FACTOR;
  if (hint === 'dropdown' && isMenuButton(el)) return 1;
  const roles = HINT_ROLES[hint];
  if (roles.exact.includes(el.role)) return 1;
  return roles.near.includes(el.role) ? NEAR_FACTOR : 0;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
/** Off-screen elements lose a little: enough to order a list, never enough to decide. */
const OFFSCREEN = 0.97;
const DISABLED = 0.5;
const READONLY = 0.5;
const PLACEHOLDER = 0.95;
const BUTTON_VALUE = 0.95;
/** Nearby text alone never reaches the threshold: it can only rank, or qualify a name. */
const CONTEXT = 0.6;

/**
 * Scores every element the verb can act on against the target, best first (ties in document
 * order). Elements with no name, label or placeholder are never matched: text near an unnamed
 * element is not its name.
 */
export function scoreCandidates(
  target: TargetPhrase,
  elements: readonly MatchElement[],
  verb: MatchVerb,
): Candidate[] {
  const quoted = target.quoted === true;
  const phrase = toNorm(target.phrase);
  const full = target.full && !quoted ? toNorm(target.full) : undefined;
  const out: Candidate[] = [];
  if (!phrase.raw) return out;
  for (const el of elements) {
    if (!verbAllows(verb, el)) continue;
    const p = prepare(el);
    if (!p.name.raw && !p.label.raw && !p.placeholder.raw) continue;

    // The role words may be part of the name ("Deep button"): then they are not a hint.
    const byFull = full ? textScore(full, p.name) : 0;
    const hinted = target.roleHint !== undefined && byFull < 0.95;
    const roleFactor = hinted ? hintFactor(target.roleHint!, el) : 1;
    if (roleFactor === 0) continue;

    let text = Math.max(byFull, textScore(phrase, p.name, quoted));
    let by: MatchedBy = 'name';
    const pairs: [MatchedBy, Norm, number][] = [
      ['label', p.label, 1],
      ['placeholder', p.placeholder, PLACEHOLDER],
      ['value', p.value, BUTTON_VALUE],
      ['context', p.context, CONTEXT],
    ];
    for (const [kind, norm, factor] of pairs) {
      if (!norm.raw || text >= factor) continue;
      const s = factor * textScore(phrase, norm, quoted);
      if (s > text) {
        text = s;
        by = kind;
      }
    }
    if (text < QUALIFIED_CAP && p.context.raw && !quoted) {
      const q = qualifiedScore(phrase, p.name, p.context);
      if (q > text) {
        text = q;
        by = 'name+context';
      }
    }
    if (text === 0) continue;

    const base = text * roleFactor * verbFactor(verb, el, hinted);
    let score = base;
    if (el.states.disabled) score *= DISABLED;
    if (el.states.readonly && (verb === 'fill' || verb === 'type')) score *= READONLY;
    if (!el.inViewport && verb !== 'scroll') score *= OFFSCREEN;
    out.push({ element: el, score: round3(score), base: round3(base), by });
  }
  return out.sort((a, b) => b.score - a.score || a.element.id - b.element.id);
}
