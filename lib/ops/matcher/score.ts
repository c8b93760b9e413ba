import type { SnapshotElement } from '../../perception/types.ts';
import type { MatchVerb, RoleHint, TargetPhrase } from './parse.ts';

export interface Candidate {
  element: SnapshotElement;
  score: number;
}

const HINT_ROLES: Record<RoleHint, string[]> = {
  button: ['button'],
  link: ['link'],
  field: ['textbox', 'searchbox', 'combobox', 'spinbutton'],
  checkbox: ['checkbox', 'switch', 'menuitemcheckbox'],
  radio: ['radio', 'menuitemradio'],
  dropdown: ['combobox', 'listbox', 'button'],
  tab: ['tab'],
  menuitem: ['menuitem', 'menuitemcheckbox', 'menuitemradio'],
  option: ['option', 'radio'],
  switch: ['switch', 'checkbox'],
};

/** Which roles a verb can work on; undefined = anything interactive. */
function verbRoles(verb: MatchVerb, el: SnapshotElement): boolean {
  switch (verb) {
    case 'fill':
      return (
        el.role === 'textbox' ||
        el.role === 'searchbox' ||
        el.role === 'spinbutton' ||
        (el.role === 'combobox' && !el.options)
      );
    case 'select':
      // Only native selects: a custom dropdown needs two steps, which is the model's job.
      return (el.role === 'combobox' || el.role === 'listbox') && !!el.options;
    case 'check':
      return ['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio'].includes(el.role);
    case 'uncheck':
    case 'toggle':
      return ['checkbox', 'switch', 'menuitemcheckbox'].includes(el.role);
    case 'scroll':
      return true;
    default:
      return el.interactive;
  }
}

export const normalize = (s: string): string =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[’']/g, '')
    .replace(/[^\p{L}\p{N}%]+/gu, ' ')
    .trim();

const STOP = new Set(['the', 'a', 'an', 'to', 'of', 'for', 'and', 'my', 'your', 'this', 'that', 'on', 'in']);
const stem = (w: string) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);
export const tokens = (s: string): string[] =>
  normalize(s)
    .split(' ')
    .filter((w) => w && !STOP.has(w))
    .map(stem);

/**
 * How well a target phrase names a text, in [0, 1]: 1 for the same words, high when the phrase
 * is the whole of a short name, lower for partial overlaps, 0 when nothing is shared.
 */
export function textScore(phrase: string, text: string | undefined, exact: boolean): number {
  if (!text) return 0;
  const p = normalize(phrase);
  const t = normalize(text);
  if (!p || !t) return 0;
  if (p === t) return 1;
  if (exact) return 0;
  const pt = tokens(phrase);
  const tt = tokens(text);
  if (pt.length === 0 || tt.length === 0) return 0;
  if (pt.join(' ') === tt.join(' ')) return 0.97;
  const inText = pt.filter((w) => tt.includes(w)).length;
  if (inText === pt.length) {
    // Every word of the phrase is in the name: the closer the name's length, the surer.
    return 0.62 + 0.33 * (pt.length / tt.length);
  }
  const precision = inText / pt.length;
  const recall = inText / tt.length;
  return precision + recall === 0 ? 0 : 0.6 * ((2 * precision * recall) / (precision + recall));
}

/** Scores every element the verb can act on against the target phrase, best first. */
export function scoreCandidates(
  target: TargetPhrase,
  elements: SnapshotElement[],
  verb: MatchVerb,
): Candidate[] {
  const out: Candidate[] = [];
  const hinted = target.roleHint ? HINT_ROLES[target.roleHint] : undefined;
  for (const el of elements) {
    if (!verbRoles(verb, el)) continue;
    if (hinted && !hinted.includes(el.role)) continue;
    // "the deep button" should fully match a name that is literally "Deep button".
    const withRole = target.roleWords && !target.exact ? `${target.phrase} ${target.roleWords}` : undefined;
    const byName = Math.max(
      textScore(target.phrase, el.name, target.exact),
      withRole ? textScore(withRole, el.name, false) : 0,
    );
    const byLabel = textScore(target.phrase, el.label, target.exact);
    // Placeholders and button values are weaker evidence than a name or label.
    const byPlaceholder = 0.95 * textScore(target.phrase, el.placeholder, target.exact);
    let score = Math.max(byName, byLabel, byPlaceholder);
    if (score === 0) continue;
    if (el.states.disabled) score *= 0.5;
    if (!el.interactive && verb !== 'scroll') score *= 0.6;
    out.push({ element: el, score: Math.round(score * 1000) / 1000 });
  }
  return out.sort((a, b) => b.score - a.score);
}
