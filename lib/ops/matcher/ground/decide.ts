/**
 * The grounding model for the targets sign-in and sign-up pages are made of: "the email field",
 * "the username field", "the password field", "the new / confirm password field", "the log in /
 * sign in / continue button", in their word variants and languages. Instead of matching the words
 * against names only, it weighs everything the page says about each field (see fields.ts) and the
 * form it sits in: a login task's fields are the login form's, a new password's the sign-up or
 * change form's. It answers only when one element clearly wins, with the reason; otherwise it
 * defers with the closest candidates. Targets outside these concepts return undefined and go to
 * the general scorer.
 */
import type { SnapshotElement } from '../../../perception/types.ts';
import type { MatchVerb, TargetPhrase } from '../parse.ts';
import { type Norm, normalize, textScore, toNorm } from '../score.ts';
import { type Field, type FormInfo, type PageForms, pageForms, STRENGTH, usable } from './fields.ts';
import { type Concept, canon, conceptsOf } from './lexicon.ts';

export type Want =
  | 'email'
  | 'user'
  | 'identity'
  | 'password'
  | 'new'
  | 'confirm'
  | 'current'
  | 'login'
  | 'continue';

export interface Scored {
  el: SnapshotElement;
  score: number;
  why: string;
}

export type Grounded =
  | { ok: true; el: SnapshotElement; score: number; margin: number; why: string; ranked: Scored[] }
  | { ok: false; reason: string; ranked: Scored[] };

const GLUE = new Set(['the', 'a', 'an', 'your', 'my', 'field', 'address', 'box', 'input', 'button']);
/** The caller's bar: lowest score the chosen element needs and its lead over the runner-up. */
export interface Limits {
  threshold: number;
  margin: number;
}

/** Which concept the target names, when it names one of ours and nothing more. */
export function wantOf(target: TargetPhrase, verb: MatchVerb): Want | undefined {
  if (target.quoted || target.ordinal !== undefined || !target.phrase) return undefined;
  const canonical = canon(normalize(target.phrase));
  const tokens = canonical.split(' ').filter((t) => t && !GLUE.has(t));
  const concepts = conceptsOf(canonical);
  if (tokens.some((t) => !concepts.has(t as Concept) && t !== 'or')) return undefined;
  const has = (c: Concept) => concepts.has(c);
  const only = (...cs: Concept[]) => concepts.size === cs.length && cs.every(has);
  if (verb === 'fill' || verb === 'type') {
    if (target.roleHint && target.roleHint !== 'field') return undefined;
    if (only('xemail')) return 'email';
    if (only('xusername') || only('xlogin')) return 'user';
    if (only('xemail', 'xusername')) return 'identity';
    if (only('xpassword')) return 'password';
    if (only('xnew', 'xpassword')) return 'new';
    if (only('xconfirm', 'xpassword') || only('xconfirm', 'xnew', 'xpassword') || only('xconfirm'))
      return 'confirm';
    if (only('xcurrent', 'xpassword')) return 'current';
    return undefined;
  }
  if (verb === 'click') {
    if (target.roleHint && target.roleHint !== 'button') return undefined;
    if (only('xlogin')) return 'login';
    if (only('xcontinue')) return 'continue';
  }
  return undefined;
}

const strength = (f: Field, c: Concept): number => {
  const by = f.says.get(c);
  return by ? STRENGTH[by] : 0;
};

/** "Email or username", "E-Mail / Benutzername", "Email: required": each part can be the name. */
const ALTERNATIVES = /\s*(?:[/|:]|\b(?:or|oder|ou|o|eller|lub|of)\b)\s*/i;

/** How well the phrase names what a user reads on the field, each alternative on its own. */
function readScore(phrase: Norm, el: SnapshotElement): number {
  let best = 0;
  for (const text of [el.name, el.label, el.placeholder]) {
    if (!text) continue;
    best = Math.max(best, textScore(phrase, toNorm(text)));
    if (best >= 1) return best;
    for (const part of text.split(ALTERNATIVES))
      best = Math.max(best, 0.97 * textScore(phrase, toNorm(part)));
  }
  const near = el.facts?.nearby;
  if (near)
    for (const part of near.split(ALTERNATIVES))
      best = Math.max(best, STRENGTH.nearby * textScore(phrase, toNorm(part)));
  return best;
}

/** How well a field fits what is wanted, with the reason; 0 when it does not. */
function fieldScore(f: Field, want: Want, form: FormInfo | undefined, phrase: Norm): Scored {
  const el = f.el;
  const none = { el, score: 0, why: '' };
  const inLogin = form?.kind === 'login';
  if (want === 'email' || want === 'user' || want === 'identity') {
    if (f.kind !== 'identity') return none;
    const mine =
      want === 'email'
        ? ['xemail' as const]
        : want === 'user'
          ? ['xusername' as const]
          : (['xemail', 'xusername'] as const);
    // What a user reads counts as well as it names the phrase; the page's declarations (type,
    // autocomplete, name/id words) count at their fixed strength.
    const read = readScore(phrase, f.el);
    const declared = Math.max(
      ...mine.map((c) => {
        const by = f.declared.get(c);
        return by ? STRENGTH[by] : 0;
      }),
    );
    const what = want === 'user' ? 'a user name' : want;
    return {
      el,
      score: Math.max(read, declared),
      why:
        read >= declared ? `its text names ${what}` : `it is declared ${what} (type, autocomplete or name)`,
    };
  }
  if (f.kind !== 'password') return none;
  const by = f.passwordBy ? STRENGTH[f.passwordBy] : strength(f, 'xpassword');
  switch (want) {
    case 'password':
      if (f.password === 'plain' || f.password === 'current')
        return { el, score: Math.max(strength(f, 'xpassword'), 0.9), why: 'a password field' };
      if (f.password === 'new') return { el, score: 0.78, why: 'the new password (no other password field)' };
      return { el, score: 0.5, why: 'a confirmation field' };
    case 'new':
      if (f.password === 'new')
        return { el, score: Math.max(0.85, by), why: `the new password (${f.passwordBy})` };
      return { el, score: f.password === 'confirm' ? 0.4 : 0, why: '' };
    case 'confirm':
      if (f.password === 'confirm')
        return { el, score: Math.max(0.85, by), why: `the password confirmation (${f.passwordBy})` };
      return none;
    case 'current':
      if (f.password === 'current') return { el, score: Math.max(0.85, by), why: 'the current password' };
      if (f.password === 'plain' && inLogin) return { el, score: 0.8, why: 'the login form’s password' };
      return none;
    default:
      return none;
  }
}

/** Forms a request belongs to: log-in words to a login form, new passwords to a sign-up form. */
const taskKind = (want: Want) =>
  want === 'new' || want === 'confirm' || want === 'current' ? 'signup' : 'login';

function pick(ranked: Scored[], what: string, { threshold, margin: need }: Limits): Grounded {
  ranked.sort((a, b) => b.score - a.score || a.el.id - b.el.id);
  const best = ranked[0];
  if (!best || best.score < threshold)
    return { ok: false, reason: `no field or button clearly is ${what}`, ranked };
  // Look-alikes (same role and words) that only a disabled state tells apart: which one is meant
  // is not written anywhere. Concealed ones were dropped before.
  const key = (el: SnapshotElement) => `${el.role}\u0001${normalize(el.name)}`;
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

/**
 * Keeps the candidates of the one form the task belongs to. Another form's candidate that fits
 * better than the task form's best makes the choice a guess: then nothing is kept.
 */
function byTaskForm(
  ranked: Scored[],
  formOf: (el: SnapshotElement) => FormInfo | undefined,
  kind: string,
  threshold: number,
) {
  const good = ranked.filter((s) => s.score >= threshold);
  const taskForms = new Set(good.map((s) => formOf(s.el)).filter((f) => f?.kind === kind));
  // Two login (or two sign-up) forms that both fit: which one the task means is not written.
  if (taskForms.size > 1) return { ranked: [], note: `${taskForms.size} ${kind} forms fit` };
  if (taskForms.size === 0) return { ranked, note: '' };
  const form = [...taskForms][0]!;
  const inside = ranked.filter((s) => formOf(s.el) === form);
  const bestInside = Math.max(...inside.map((s) => s.score));
  // The task form's field itself says the concept (words, type, autocomplete, name): it is the
  // one. Known only by its place, it is, unless another form's field says the concept better.
  const outside = good.filter((s) => formOf(s.el) !== form && s.score > bestInside + 0.01);
  if (outside.length > 0 && bestInside < STRENGTH.attrs)
    return { ranked: [], note: `another form's field fits better than the ${kind} form's` };
  return { ranked: inside, note: '' };
}

/** Drops candidates a person cannot see when a visible one remains (a page's hidden twin form). */
function usableFirst(ranked: Scored[], threshold: number): Scored[] {
  const live = ranked.filter((s) => s.el.facts?.concealed !== true);
  return live.some((s) => s.score >= threshold) ? live : ranked;
}

/**
 * Usable passwords that are not new ones, outside forms that set a new one (a change form's
 * current password is not a login): each is the heart of a login form.
 */
function loginPasswords(page: PageForms): Field[] {
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
  const forms = whole.length > 0 ? whole : all;
  // The login form in the page's main landmark over a copy in its header, navigation or footer
  // (a drop-down). Without a main landmark nothing says which is the page's own.
  const main = forms.filter((p) => p.el.facts?.region === 'main');
  const chrome = forms.filter((p) => p.el.facts?.region === 'chrome');
  return main.length > 0 && main.length + chrome.length === forms.length ? main : forms;
}

const ok = (s: Scored, margin = s.score): Grounded => ({
  ok: true,
  el: s.el,
  score: s.score,
  margin,
  why: s.why,
  ranked: [s],
});

/**
 * A login task's fields: the login password, and the field just before it. When that field
 * itself says the concept (words, type, autocomplete, name) it is the one, whatever other forms
 * hold; when only its place says so, it is, unless some other field says the concept.
 */
function groundLogin(
  want: Want,
  phrase: Norm,
  page: PageForms,
  fields: Field[],
  score: (f: Field) => Scored,
  limits: Limits,
): Grounded | undefined {
  const anchors = loginPasswords(page);
  const ranked = () =>
    fields
      .filter((f) => f.usable)
      .map(score)
      .filter((s) => s.score > 0)
      .sort((a, b) => b.score - a.score);
  if (anchors.length > 1)
    return {
      ok: false,
      reason: `${anchors.length} login password fields: which form is meant is not said`,
      ranked: ranked(),
    };
  const anchor = anchors[0];
  if (!anchor) {
    if (want !== 'password') return undefined;
    const pws = fields.filter((f) => f.usable && f.kind === 'password');
    if (pws.length === 1)
      return ok({ el: pws[0]!.el, score: 0.9, why: 'the only password field on the page' });
    // Only new passwords (a sign-up page): the one whose words say just "password", if one does.
    const byWords = pws.map((f) => ({
      el: f.el,
      score: readScore(phrase, f.el),
      why: 'its text names password',
    }));
    return pick(byWords, 'the password field', limits);
  }
  // A sign-up form beside the login form does not make "the password" ambiguous: a plain
  // password (not "new", not "create") of a login task is the login form's (measured: deferring
  // here lost a tenth of the corpus's right answers and avoided one mislabelled page).
  if (want === 'password') return ok({ ...score(anchor), why: 'the login form’s password field' });
  const before = fields.find(
    (f) => f.beforePassword && f.usable && f.form === anchor.form && f.el.id < anchor.el.id,
  );
  if (!before) return undefined;
  const own = score(before);
  if (own.score >= STRENGTH.attrs) return ok({ ...own, why: `the login form’s field: ${own.why}` });
  const others = ranked().filter((s) => s.el !== before.el && s.score >= limits.threshold);
  if (others.length > 0)
    return {
      ok: false,
      reason: `the login form's field does not say '${want}', another field does`,
      ranked: [own, ...others],
    };
  return ok({
    el: before.el,
    score: STRENGTH.place + 0.06,
    why: 'the login form’s user name field (just before its password)',
  });
}

const LOGIN_WANTS = new Set<Want>(['email', 'user', 'identity', 'password']);

function groundField(
  want: Want,
  target: TargetPhrase,
  elements: readonly SnapshotElement[],
  limits: Limits,
): Grounded {
  const phrase = toNorm(target.phrase);
  const page = pageForms(elements);
  const formOf = (el: SnapshotElement) => (el.facts?.form ? page.forms.get(el.facts.form) : undefined);
  const fields = [...page.fields.values()];
  const score = (f: Field) => fieldScore(f, want, formOf(f.el), phrase);
  if (LOGIN_WANTS.has(want)) {
    const login = groundLogin(want, phrase, page, fields, score, limits);
    if (login) return login;
    // A sign-up form (passwords, none a login one) with several identity fields: "the username"
    // of a task may be the account's identifier (its e-mail) or the field called so.
    const signup = fields.some((f) => f.usable && f.kind === 'password');
    if (signup && want === 'user') {
      const best = fields
        .filter((f) => f.usable)
        .map(score)
        .sort((a, b) => b.score - a.score)[0];
      const form = best ? page.fields.get(best.el.id)?.form : undefined;
      const ids = fields.filter((f) => f.usable && f.kind === 'identity' && f.form === form);
      if (best && best.score >= limits.threshold && ids.length > 1)
        return {
          ok: false,
          reason: `a sign-up form with ${ids.length} identity fields: which one the task means is not said`,
          ranked: [best],
        };
    }
  }
  // A disabled, read-only or concealed field cannot take the text: never a candidate.
  const ranked: Scored[] = [];
  for (const f of fields) {
    if (!f.usable) continue;
    const s = score(f);
    if (s.score > 0) ranked.push(s);
  }
  if (want === 'new' && !ranked.some((s) => s.score >= limits.threshold)) {
    // One password field on the whole page and the task sets a new one: it can only be that one.
    const pws = fields.filter((f) => f.usable && f.kind === 'password');
    if (pws.length === 1 && pws[0]!.password === 'plain')
      return ok({ el: pws[0]!.el, score: 0.8, why: 'the only password field on the page' });
  }
  const { ranked: kept, note } = byTaskForm(ranked, formOf, taskKind(want), limits.threshold);
  if (kept.length === 0) return { ok: false, reason: note || `no usable field is the ${want} field`, ranked };
  const out = pick(kept, `the ${want} field`, limits);
  if (!out.ok && note) return { ...out, reason: `${out.reason} (${note})` };
  return out;
}

const BUTTONISH = new Set(['button']);

/**
 * The buttons that submit a login form: usable buttons after its password (or, on a first step
 * with no password, after its one identity field) in reading order, up to the next text field.
 */
/** A submit button that holds the words among others reads as them at this score. */
const CONTAINS = 0.85;
/** …unless it also names another concept or a provider ("Sign in with Google", "Sign up"). */
const OTHER_THING =
  /\bx(?:signup|forgot|logout|email|username|password|search)\b|\b(?:with|google|facebook|apple|microsoft|twitter|linkedin|amazon|github|sso|mit|avec|con|met|com|med|z)\b/;

/** Buttons beside a password that show or hide it, and nameless ones: never the submit. */
const TOGGLE =
  /^$|^(?:go back|back|return|zuruck|retour|volver|indietro|terug|voltar|wstecz|tillbaka|show|hide|toggle|view|reveal|eye|anzeigen|verbergen|afficher|masquer|mostrar|ocultar|mostra|nascondi|tonen|verbergen|pokaz|ukryj|visa|dolj)\b/;

function submitRun(page: ReturnType<typeof pageForms>, elements: readonly SnapshotElement[]) {
  const fields = [...page.fields.values()];
  const anchors = loginPasswords(page);
  let anchor = anchors[0];
  if (anchors.length > 1) return { anchors: anchors.length, run: [] as SnapshotElement[] };
  if (!anchor) {
    const ids = fields.filter(
      (f) => f.usable && f.kind === 'identity' && (f.says.has('xemail') || f.says.has('xusername')),
    );
    if (ids.length !== 1) return { anchors: ids.length > 1 ? ids.length : 0, run: [] };
    if (fields.some((f) => f.usable && f.kind === 'password')) return { anchors: 0, run: [] };
    anchor = ids[0];
  }
  const run: SnapshotElement[] = [];
  const at = elements.indexOf(anchor!.el);
  for (let i = at + 1; i < elements.length && run.length < 8; i++) {
    const el = elements[i]!;
    const field = page.fields.get(el.id);
    if (field?.usable && field.kind !== 'password') break;
    // A disabled submit is still the form's button: it waits for the fields to be filled.
    if (el.role === 'button' && el.facts?.concealed !== true && !TOGGLE.test(normalize(el.name)))
      run.push(el);
  }
  // The form's submit is its first submit button after the password, else the first button;
  // later ones belong to what follows ("Continue" of a guest checkout, "Register").
  const submit = run.find((el) => el.facts?.submit);
  return { anchors: 1, run: submit ? [submit] : run.slice(0, 1) };
}

function groundButton(
  want: Want,
  target: TargetPhrase,
  elements: readonly SnapshotElement[],
  limits: Limits,
): Grounded {
  const { threshold } = limits;
  const page = pageForms(elements);
  const phrase = toNorm(target.phrase);
  const concept = want === 'login' ? 'xlogin' : want === 'continue' ? 'xcontinue' : undefined;
  const roles = target.roleHint === 'button' ? BUTTONISH : new Set(['button', 'link']);
  /** How well a button's words name the phrase; a disabled one counts half, unless it is the
   * login form's own submit (which waits for the fields to be filled). */
  const scoreOf = (el: SnapshotElement, submitOfForm = false): Scored => {
    const s = Math.max(
      textScore(phrase, toNorm(el.name)),
      el.role === 'button' ? textScore(phrase, toNorm(el.value)) * 0.95 : 0,
    );
    const why = `it says '${el.name}'${el.states.disabled ? ' (disabled until the form is filled)' : ''}`;
    return { el, score: el.states.disabled && !submitOfForm ? s * 0.5 : s, why };
  };

  let ranked: Scored[] = [];
  for (const el of elements) {
    if (!el.interactive || !roles.has(el.role)) continue;
    const s = scoreOf(el);
    if (s.score > 0) ranked.push(s);
  }
  ranked = usableFirst(ranked, threshold);
  // A login form decides: its own submit button must say the words. A header link or button
  // with them is not what the task presses, and a form button saying something else
  // ("Continue" for "sign in") means the words point elsewhere, so defer.
  const { anchors, run } = submitRun(page, elements);
  if (anchors > 1 && ranked.some((s) => s.score >= threshold))
    return { ok: false, reason: `${anchors} login forms: which one's button is meant is not said`, ranked };
  if (anchors === 1) {
    // The login form's own submit button needs only to hold the words ("Log in to my account",
    // "Secure sign in"), not to be nothing else, unless it names another thing too.
    const inside = run
      .map((el) => {
        const s = scoreOf(el, true);
        const words = canon(normalize(el.name));
        const holds = concept !== undefined && words.split(' ').includes(concept) && !OTHER_THING.test(words);
        return holds && s.score < CONTAINS ? { ...s, score: CONTAINS } : s;
      })
      .filter((s) => s.score > 0);
    if (inside.some((s) => s.score >= threshold)) {
      const out = pick(inside, `the ${want} button`, limits);
      return out.ok ? { ...out, why: `the login form’s button: ${out.why}` } : out;
    }
    return {
      ok: false,
      reason: `the login form's button does not say '${target.phrase}'${run[0] ? ` (it says '${run[0].name}')` : ''}`,
      ranked,
    };
  }
  return pick(ranked, `the ${want} button`, limits);
}

/** The grounding model's decision, or undefined when the target is not one of its concepts. */
export function ground(
  target: TargetPhrase,
  verb: MatchVerb,
  elements: readonly SnapshotElement[],
  limits: Limits = { threshold: 0.75, margin: 0.15 },
): Grounded | undefined {
  const want = wantOf(target, verb);
  if (!want) return undefined;
  if (want === 'login' || want === 'continue') return groundButton(want, target, elements, limits);
  return groundField(want, target, elements, limits);
}
