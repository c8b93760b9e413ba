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
import { type Norm, textScore, toNorm } from '../text.ts';
import { groundButton } from './buttons.ts';
import { type Field, type FormInfo, type PageForms, pageForms, STRENGTH } from './fields.ts';
import type { Concept } from './lexicon.ts';
import { type Grounded, type Limits, loginPasswords, ok, pick, type Scored, type Want } from './pick.ts';
import { lookAlikeForm, WANTED } from './twins.ts';
import { type FormScope, LOGIN_WANTS, wantOf } from './want.ts';

export type { Grounded, Limits, Scored, Want } from './pick.ts';
export { type FormScope, type Wanted, wantOf } from './want.ts';

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
  /** The caller named the login form ("the sign-in email"): a sign-up form beside it is not a rival. */
  named = false,
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
  // A form asking for the same things beside the login form (an identity field, then one
  // password: "New customers: create an account"): "the email" or "the password" of a task that
  // names neither form is either one's, whatever each field's words.
  const lookAlike = named ? undefined : lookAlikeForm(page, anchor, want, score, limits);
  if (lookAlike) return lookAlike;
  // A sign-up form beside the login form does not make "the password" ambiguous when the user can
  // read which of its passwords are new ("Create password", "Confirm"): a plain password of a
  // login task is then the login form's (measured: deferring on every sign-up form lost a tenth of
  // the corpus's right answers). But another form's password that only says "password" (its kind
  // known from its place or hidden attributes) reads exactly like the login one: which of the two
  // the task means is not written anywhere.
  if (want === 'password') {
    if (named) return ok({ ...score(anchor), why: 'the password field of the login form the task names' });
    const twin = fields.find(
      (f) =>
        f.usable &&
        (f.password === 'new' || f.password === 'confirm') &&
        f.form !== anchor.form &&
        !readsAsOtherKind(f),
    );
    if (twin)
      return {
        ok: false,
        reason: `two forms each have a field that reads as just 'password' ([${anchor.el.id}], [${twin.el.id}]): which one is meant is not said`,
        ranked: [score(anchor), score(twin)],
      };
    return ok({ ...score(anchor), why: 'the login form’s password field' });
  }
  const before = fields.find(
    (f) => f.beforePassword && f.usable && f.form === anchor.form && f.el.id < anchor.el.id,
  );
  if (!before) return undefined;
  const own = score(before);
  if (own.score >= STRENGTH.attrs) return ok({ ...own, why: `the login form’s field: ${own.why}` });
  // Its words say it among others ("Member Login Email Address", "My E-mail Address is"): the
  // phrase is not all of them, but the field, its form and its place all agree.
  const read = (WANTED[want] ?? []).some((c) => {
    const by = before.says.get(c);
    return by === 'seen' || by === 'nearby';
  });
  if (read)
    return ok({ el: before.el, score: STRENGTH.attrs, why: `the login form’s field: its words say ${want}` });
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

/** A password field whose visible words (or the text before it) say it is a new, confirm or current one. */
const readsAsOtherKind = (f: Field): boolean =>
  f.password !== undefined &&
  f.password !== 'plain' &&
  (f.passwordBy === 'seen' || f.passwordBy === 'nearby');

/**
 * A field of the form the caller names ("the sign-in email", "the sign-up password"): the same
 * decision, and the field it lands on must sit in a form of that kind, or nothing is done.
 */
function groundInForm(
  want: Want,
  scope: FormScope,
  phrase: Norm,
  elements: readonly SnapshotElement[],
  limits: Limits,
): Grounded {
  const page = pageForms(elements);
  const kindOf = (el: SnapshotElement) => page.forms.get(page.fields.get(el.id)?.form ?? 0)?.kind;
  let out: Grounded;
  if (scope === 'login') out = groundField(want, phrase, elements, limits, true);
  else {
    // A sign-up form's field only: the login form's identity field is not a candidate at all.
    const fields = [...page.fields.values()];
    const formOf = (el: SnapshotElement) => page.forms.get(page.fields.get(el.id)?.form ?? 0);
    const ranked = fields
      .filter((f) => f.usable && page.forms.get(f.form)?.kind === 'signup')
      .map((f) => fieldScore(f, want, formOf(f.el), phrase))
      .filter((s) => s.score > 0);
    const { ranked: kept, note } = byTaskForm(ranked, formOf, 'signup', limits.threshold);
    out =
      kept.length === 0
        ? { ok: false, reason: note || `no sign-up form's field is the ${want} field`, ranked }
        : pick(kept, `the ${want} field of the sign-up form`, limits);
  }
  if (!out.ok) return out;
  // A login form's first step holds no password (an e-mail, then "Next"), so for a named login
  // form only a form that sets a new password is the wrong one.
  const kind = kindOf(out.el);
  if (scope === 'login' ? kind === 'signup' : kind !== 'signup')
    return {
      ok: false,
      reason: `the ${want} field that fits ([${out.el.id}]) is ${scope === 'login' ? 'in a sign-up form' : 'not in a sign-up form'}`,
      ranked: out.ranked,
    };
  return out;
}

function groundField(
  want: Want,
  phrase: Norm,
  elements: readonly SnapshotElement[],
  limits: Limits,
  namedLogin = false,
): Grounded {
  const page = pageForms(elements);
  const formOf = (el: SnapshotElement) => (el.facts?.form ? page.forms.get(el.facts.form) : undefined);
  const fields = [...page.fields.values()];
  const score = (f: Field) => fieldScore(f, want, formOf(f.el), phrase);
  if (LOGIN_WANTS.has(want)) {
    const login = groundLogin(want, phrase, page, fields, score, limits, namedLogin);
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

/** The grounding model's decision, or undefined when the target is not one of its concepts. */
export function ground(
  target: TargetPhrase,
  verb: MatchVerb,
  elements: readonly SnapshotElement[],
  limits: Limits = { threshold: 0.75, margin: 0.15 },
): Grounded | undefined {
  const wanted = wantOf(target, verb);
  if (!wanted) return undefined;
  const { want, scope } = wanted;
  if (want === 'login' || want === 'continue' || want === 'submit')
    return groundButton(want, target, elements, limits);
  const phrase = toNorm(wanted.phrase);
  if (scope) return groundInForm(want, scope, phrase, elements, limits);
  return groundField(want, phrase, elements, limits);
}
