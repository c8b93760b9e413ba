/**
 * What the grounding model's parts share: what is wanted, scored candidates, the decision, and
 * the rule that turns a ranking into an answer (one clear winner, no look-alike) or a deferral.
 */
import type { SnapshotElement } from '../../../perception/types.ts';
import { normalize } from '../text.ts';
import type { Field, PageForms } from './fields.ts';
import { attrWords } from './lexicon.ts';

export type Want =
  | 'email'
  | 'user'
  | 'identity'
  | 'password'
  | 'new'
  | 'confirm'
  | 'current'
  | 'login'
  | 'continue'
  | 'submit';

export interface Scored {
  el: SnapshotElement;
  score: number;
  why: string;
}

export type Grounded =
  | { ok: true; el: SnapshotElement; score: number; margin: number; why: string; ranked: Scored[] }
  | { ok: false; reason: string; ranked: Scored[] };

/** The caller's bar: lowest score the chosen element needs and its lead over the runner-up. */
export interface Limits {
  threshold: number;
  margin: number;
}

export function pick(ranked: Scored[], what: string, { threshold, margin: need }: Limits): Grounded {
  ranked.sort((a, b) => b.score - a.score || a.el.id - b.el.id);
  const best = ranked[0];
  if (!best || best.score < threshold)
    return { ok: false, reason: `no field or button clearly is ${what}`, ranked };
  // Look-alikes (same role and words) that only a disabled state tells apart: which one is meant
  // is not written anywhere. Concealed ones were dropped before.
  // What a user reads on each: a shared description as the name ("The password must be…") with
  // placeholders "New Password" and "Confirm New Password" is two different fields.
  const key = (el: SnapshotElement) =>
    [el.role, el.name, el.label, el.placeholder].map((t) => normalize(t ?? '')).join('\u0001');
  const twins = best.el.name ? ranked.filter((s) => s !== best && key(s.el) === key(best.el)).length : 0;
  if (twins > 0)
    return {
      ok: false,
      reason: `${twins + 1} elements look the same (${best.el.role} '${best.el.name}')`,
      ranked,
    };
  const second = ranked[1];
  const margin = second ? best.score - second.score : best.score;
  if (margin < need)
    return {
      ok: false,
      reason: `too close to call ${what}: [${best.el.id}] ${best.why || best.el.name} vs [${second!.el.id}] ${second!.why || second!.el.name}`,
      ranked,
    };
  return { ok: true, el: best.el, score: best.score, margin, why: best.why, ranked };
}

/** Drops candidates a person cannot see when a visible one remains (a page's hidden twin form). */
export function usableFirst(ranked: Scored[], threshold: number): Scored[] {
  const live = ranked.filter((s) => s.el.facts?.concealed !== true);
  return live.some((s) => s.score >= threshold) ? live : ranked;
}

/**
 * Usable passwords that are not new ones, outside forms that set a new one (a change form's
 * current password is not a login): each is the heart of a login form.
 */
export function loginPasswords(page: PageForms): Field[] {
  const all = [...page.fields.values()].filter(
    (f) =>
      f.usable &&
      f.kind === 'password' &&
      (f.password === 'plain' || (f.password === 'current' && page.forms.get(f.form)?.kind !== 'signup')),
  );
  if (all.length < 2) return all;
  // A whole login form (a user name field, then the password) over lone password fields (a
  // protected page's box, a second step shown early).
  const whole = all.filter((p) =>
    page.forms.get(p.form)?.fields.some((f) => f.beforePassword && f.usable && f.el.id < p.el.id),
  );
  const forms = copiesOut(page, whole.length > 0 ? whole : all);
  // The page's own login form over a copy in its header, navigation, footer or sidebar (a
  // drop-down): the one outside the chrome, in the main landmark or in no landmark at all. A
  // login form in a dialog is a layer of its own (a sign-in pop-up marked as the header's), so
  // then nothing says which is meant.
  const main = forms.filter((p) => p.el.facts?.region === 'main');
  const chrome = forms.filter((p) => p.el.facts?.region === 'chrome');
  if (main.length > 0 && main.length + chrome.length === forms.length) return main;
  if (chrome.length === 0 || forms.some((p) => p.el.dialog !== undefined)) return forms;
  const own = forms.filter((p) => p.el.facts?.region !== 'chrome');
  return own.length > 0 ? own : forms;
}

/** Name/id words of a form's fields that mark it as a copy for a drop-down, pop-up or header bar. */
const COPY = /\b(?:drop ?down|pop ?up|fly ?out|header|nav|navbar|menu|modal|overlay|mini|sidebar|footer)\b/;

/**
 * Of several login forms, the page's own over its copies: a form inside a menu item (a drop-down's
 * content) or one whose fields' name/id say drop-down, pop-up or header ("passwordDropdownField",
 * "login_popup") is shown only on demand on the live page. Only when some, not all, are so marked,
 * and none sits in an open dialog (then the dialog is what the user sees).
 */
function copiesOut(page: PageForms, passwords: Field[]): Field[] {
  if (passwords.length < 2 || passwords.some((p) => p.el.dialog !== undefined)) return passwords;
  const marked = (p: Field) => {
    const mates = p.form === 0 ? [p] : (page.forms.get(p.form)?.fields ?? [p]);
    return mates.some(
      (f) => f.usable && (f.inMenu || (!!f.el.facts?.attrs && COPY.test(attrWords(f.el.facts.attrs)))),
    );
  };
  const own = passwords.filter((p) => !marked(p));
  return own.length > 0 && own.length < passwords.length ? own : passwords;
}

export const ok = (s: Scored, margin = s.score): Grounded => ({
  ok: true,
  el: s.el,
  score: s.score,
  margin,
  why: s.why,
  ranked: [s],
});
