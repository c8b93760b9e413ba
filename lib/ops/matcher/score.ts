/**
 * Scores snapshot elements against a target phrase: how well the phrase names one of the
 * element's texts (scale in text.ts), then role, verb and state factors multiply in (see
 * `scoreCandidates`).
 */
import type { SnapshotElement } from '../../perception/types.ts';
import type { MatchVerb, TargetPhrase } from './parse.ts';
import { hintFactor, verbAllows, verbFactor } from './roles.ts';
import { type Norm, QUALIFIED_CAP, qualifiedScore, textScore, toNorm } from './text.ts';

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
