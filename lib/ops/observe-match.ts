import type { ActionMethod } from '../actions/types.ts';
import type { Snapshot, SnapshotElement } from '../perception/types.ts';
import { matchInstruction } from './matcher/index.ts';
import type { CandidateSummary } from './matcher/summary.ts';
import { normalize } from './matcher/text.ts';

/**
 * Observe's zero-token tier: "the Sign in button" (one element, found as act would find it) and
 * "the sign-in form fields" (a kind of element, optionally in the one form the words point to).
 * Anything it cannot answer for sure goes back as `unsure`, so the caller says so instead of
 * returning an empty list that looks like "nothing there".
 */
export type ObserveMatch =
  | { kind: 'elements'; picks: { element: SnapshotElement; method?: ActionMethod; args?: string[] }[] }
  | { kind: 'unsure'; reason: string; candidates: CandidateSummary[] };

const FIELD_ROLES = new Set([
  'textbox',
  'searchbox',
  'spinbutton',
  'combobox',
  'listbox',
  'checkbox',
  'radio',
  'switch',
  'slider',
]);

/** Plural nouns that ask for every element of a kind. */
const KINDS: { words: RegExp; fits: (el: SnapshotElement) => boolean }[] = [
  { words: /\b(?:fields|inputs|text ?boxes|entries|controls)\b/g, fits: (e) => FIELD_ROLES.has(e.role) },
  { words: /\bbuttons\b/g, fits: (e) => e.role === 'button' },
  { words: /\blinks\b/g, fits: (e) => e.role === 'link' },
  { words: /\bcheck ?boxes\b/g, fits: (e) => e.role === 'checkbox' || e.role === 'switch' },
  { words: /\b(?:dropdowns|selects|combo ?boxes)\b/g, fits: (e) => e.role === 'combobox' },
  { words: /\b(?:radios|radio buttons)\b/g, fits: (e) => e.role === 'radio' },
];

/** Words that say nothing about which elements: articles, "all", "form", "page"… */
const FILLER = new Set([
  'the',
  'a',
  'an',
  'all',
  'every',
  'each',
  'of',
  'in',
  'on',
  'this',
  'that',
  'page',
  'form',
  'forms',
  'section',
  'any',
  'its',
  'list',
  'find',
  'show',
  'me',
  'get',
]);

/** The <form> an element sits in, as the XPath of that form (same frame, same shadow root). */
export function formOf(el: SnapshotElement): string | undefined {
  const m = /^(.*\/form(?:\[\d+\])?)(?:\/|$)/.exec(el.locator.xpath);
  return m?.[1];
}

const wordsOf = (s: string) => normalize(s).split(' ').filter(Boolean);

function texts(el: SnapshotElement): string[] {
  return [el.name, el.label ?? '', el.placeholder ?? ''].flatMap(wordsOf);
}

function byKind(text: string, snap: Snapshot): ObserveMatch | undefined {
  const lower = text.toLowerCase();
  const kind = KINDS.find((k) => new RegExp(k.words.source).test(lower));
  if (!kind) return undefined;
  const rest = wordsOf(lower.replace(kind.words, ' ')).filter((w) => !FILLER.has(w));
  const all = snap.elements.filter((e) => e.interactive && kind.fits(e));
  if (all.length === 0)
    return { kind: 'unsure', reason: 'no element of that kind on the page', candidates: [] };
  const pick = (els: SnapshotElement[]): ObserveMatch => ({
    kind: 'elements',
    picks: els.map((element) => ({ element })),
  });
  if (rest.length === 0) return pick(all);
  // Qualifying words ("sign-in", "newsletter") must point at one form: by what its elements say.
  const forms = new Map<string, SnapshotElement[]>();
  for (const e of snap.elements) {
    const f = formOf(e);
    if (f) forms.set(f, [...(forms.get(f) ?? []), e]);
  }
  const scored = [...forms.entries()]
    .map(([form, els]) => {
      const said = new Set(els.flatMap(texts));
      return { form, hits: rest.filter((w) => said.has(w)).length };
    })
    .filter((f) => f.hits > 0)
    .sort((a, b) => b.hits - a.hits);
  const best = scored[0];
  if (!best || (scored[1] && scored[1].hits === best.hits))
    return { kind: 'unsure', reason: `cannot tell which elements "${rest.join(' ')}" means`, candidates: [] };
  const inForm = all.filter((e) => formOf(e) === best.form);
  return inForm.length
    ? pick(inForm)
    : { kind: 'unsure', reason: 'no element of that kind there', candidates: [] };
}

/** One element, found by the act matcher; a bare description is read as "click …" for finding it. */
function single(text: string, snap: Snapshot): ObserveMatch {
  const direct = matchInstruction(text, snap);
  const asked = direct.kind === 'defer' && !direct.parsed ? matchInstruction(`click ${text}`, snap) : direct;
  if (asked.kind === 'action' && asked.elementId !== undefined) {
    const element = snap.elements.find((e) => e.id === asked.elementId);
    if (element) {
      // With a verb of its own ("type x into the email field") the action is what was asked.
      const own = asked === direct;
      return {
        kind: 'elements',
        picks: [own ? { element, method: asked.action.method, args: asked.action.args ?? [] } : { element }],
      };
    }
  }
  return {
    kind: 'unsure',
    reason: asked.kind === 'defer' ? asked.reason : 'no element fits',
    candidates: asked.kind === 'defer' ? asked.candidates : [],
  };
}

export function observeWithoutModel(instruction: string, snap: Snapshot): ObserveMatch {
  return byKind(instruction, snap) ?? single(instruction, snap);
}
