/**
 * What each form field on a page is for — an identity field (email / user name / phone), a
 * password (current, new, or its confirmation), something else, or unknown — read from everything
 * the page says about it: its visible words, the text just before it, its input type, its
 * `autocomplete` token, its `name`/`id` words, and its place in its form (the text field just
 * before the password is the user name; of two new passwords the second is the confirmation).
 * Then what each form is: a login form holds exactly one password, a sign-up or change form new
 * ones.
 */
import type { SnapshotElement } from '../../../perception/types.ts';
import { normalize } from '../text.ts';
import { attrWords, autocompleteWords, type Concept, canon, conceptsOf } from './lexicon.ts';

export type PasswordKind = 'plain' | 'current' | 'new' | 'confirm';
export type FieldKind = 'identity' | 'password' | 'other' | 'unknown';

/** How strongly a source speaks for a concept: what a user reads counts most. */
export const STRENGTH = { seen: 1, nearby: 0.9, declared: 0.9, attrs: 0.8, place: 0.7 } as const;
type Source = keyof typeof STRENGTH;

export interface Field {
  el: SnapshotElement;
  kind: FieldKind;
  /** Evidence per concept: the strongest source that says it. */
  says: Map<Concept, Source>;
  /** The same from what the page declares only (type, autocomplete, name/id words). */
  declared: Map<Concept, Source>;
  /** The visible words hold more than one identity ("Email or username"). */
  either: boolean;
  password?: PasswordKind;
  /** Where the password kind came from. */
  passwordBy?: Source;
  /** The text field right before its form's first password. */
  beforePassword: boolean;
  /** Inside a menu item: a drop-down's content, shown on hover or click, not the page's own form. */
  inMenu: boolean;
  usable: boolean;
  form: number;
}

export type FormKind = 'login' | 'signup' | 'none';

export interface FormInfo {
  id: number;
  kind: FormKind;
  fields: Field[];
  /** Buttons (and submit inputs) of the form, usable or not. */
  buttons: SnapshotElement[];
}

export interface PageForms {
  fields: Map<number, Field>;
  forms: Map<number, FormInfo>;
}

const TEXTISH = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton']);
const IDENTITY: Concept[] = ['xemail', 'xusername', 'xphone'];

export const usable = (el: SnapshotElement): boolean =>
  !el.states.disabled && !el.states.readonly && el.facts?.concealed !== true;

const canonOf = (s: string | undefined): string => (s ? canon(normalize(s)) : '');

/** "user" alone in a name/id attribute is a table or model name ("user[age]"), not a user name. */
const BARE_USER = /(?:^| )user(?= |$)/g;

function evidence(el: SnapshotElement): {
  says: Map<Concept, Source>;
  declared: Map<Concept, Source>;
  either: boolean;
  seenWords: boolean;
} {
  const says = new Map<Concept, Source>();
  const declared = new Map<Concept, Source>();
  const put = (text: string, source: Source) => {
    for (const c of conceptsOf(text)) {
      const had = says.get(c);
      if (!had || STRENGTH[had] < STRENGTH[source]) says.set(c, source);
      if (source === 'declared' || source === 'attrs') {
        const was = declared.get(c);
        if (!was || STRENGTH[was] < STRENGTH[source]) declared.set(c, source);
      }
    }
  };
  // The name is often the label again: each distinct text once.
  let seen = canonOf([...new Set([el.name, el.label, el.placeholder].filter(Boolean))].join(' '));
  // One id shared by several forms' fields gives a field all their labels ("Password Create
  // Password Confirm Password"): then its words say nothing about which password it is.
  if (seen.split('xpassword').length > 2) seen = 'xpassword';
  put(seen, 'seen');
  const f = el.facts;
  if (f?.nearby) put(canonOf(f.nearby), 'nearby');
  if (f?.autocomplete) put(canon(autocompleteWords(f.autocomplete)), 'declared');
  if (el.inputType === 'password') put('xpassword', 'declared');
  if (el.inputType === 'email') put('xemail', 'declared');
  if (el.inputType === 'tel') put('xphone', 'declared');
  if (f?.attrs) put(canon(attrWords(f.attrs).replace(BARE_USER, ' ').trim()), 'attrs');
  const seenIds = IDENTITY.filter((c) => seen.includes(c)).length + (seen.includes('xlogin') ? 1 : 0);
  return { says, declared, either: seenIds > 1, seenWords: seen.length > 0 };
}

/** Words around a password's name that say nothing else ("Enter your password:", "Mot de passe *"). */
const PW_GLUE = new Set(['enter', 'your', 'my', 'the', 'type', 'here', 'please']);
const PW_KINDS = new Set(['xpassword', 'xnew', 'xconfirm', 'xcurrent']);

/**
 * The text just before a nameless text box reads as a password's label and nothing more
 * ("Password:", "New password"): the box is where a person types it, whatever its type says
 * (pages that switch the type by script were saved as text). "Password hint" is not.
 */
function nearbyIsPassword(nearby: string | undefined): boolean {
  const tokens = canonOf(nearby)
    .split(' ')
    .filter((t) => t && !PW_GLUE.has(t));
  return tokens.includes('xpassword') && tokens.every((t) => PW_KINDS.has(t));
}

function classify(el: SnapshotElement): Field {
  const { says, declared, either, seenWords } = evidence(el);
  const field: Field = {
    el,
    kind: 'unknown',
    says,
    declared,
    either,
    beforePassword: false,
    inMenu: false,
    usable: usable(el),
    form: el.facts?.form ?? 0,
  };
  const pw = says.get('xpassword');
  // "Login" says user name only when nothing says password: `vb_login_password_hint` is the
  // text box that stands in for a login form's password until it is focused.
  const identity = IDENTITY.some((c) => says.has(c)) || (says.has('xlogin') && !pw);
  const seenPw =
    (pw === 'seen' && !says.has('xforgot') && !IDENTITY.some((c) => says.get(c) === 'seen')) ||
    (pw === 'nearby' && !seenWords && nearbyIsPassword(el.facts?.nearby));
  // `autocomplete="new-password"` is put on every field of a form to stop the browser's autofill:
  // a text field whose own words say what it is ("Insira seu nome", "Email") is no password.
  const byAutocomplete =
    !!el.facts?.autocomplete?.includes('password') && (!seenWords || says.get('xpassword') === 'seen');
  if (el.inputType === 'password' || seenPw || byAutocomplete) {
    field.kind = 'password';
    // What a user reads outranks what the page hides ("Current password" whose autocomplete says
    // new-password is the current one); otherwise confirm before new before current.
    const read = (by: Source | undefined) => by === 'seen' || by === 'nearby';
    for (const [kind, concept] of [
      ['confirm', 'xconfirm'],
      ['new', 'xnew'],
      ['current', 'xcurrent'],
    ] as const) {
      const by = says.get(concept);
      if (by && (!field.passwordBy || (read(by) && !read(field.passwordBy)))) {
        field.password = kind;
        field.passwordBy = by;
      }
    }
    field.password ??= 'plain';
  } else if (identity) {
    field.kind = 'identity';
    // "Login" on a text field is its user name ("Login", "Login ID").
    if (says.has('xlogin') && !says.has('xusername')) says.set('xusername', says.get('xlogin')!);
    if (declared.has('xlogin') && !declared.has('xusername'))
      declared.set('xusername', declared.get('xlogin')!);
  } else if (seenWords || el.facts?.nearby) field.kind = 'other';
  return field;
}

/**
 * A person's name ("First Name", "Nachname", `customer[last_name]`): a form that asks for it
 * beside a password makes an account; no login form asks who you are by name.
 */
const PERSON_NAME =
  /\b(?:first|last|full|given|family|middle|sur) ?name\b|\b(?:firstname|lastname|fullname|surname|forename|vorname|nachname|prenom|apellidos?|cognome|achternaam|voornaam|sobrenome|nazwisko|imie)\b/;

const asksName = (f: Field): boolean => {
  const facts = f.el.facts;
  const words = [f.el.name, f.el.label, f.el.placeholder, facts?.nearby]
    .filter(Boolean)
    .map((t) => normalize(t!))
    .join(' ');
  const attrs = facts?.attrs ? attrWords(facts.attrs) : '';
  return PERSON_NAME.test(words) || PERSON_NAME.test(attrs);
};

/** Fills in password kinds and identity fields from their place in the form. */
function byPlace(form: FormInfo) {
  const live = form.fields.filter((f) => f.usable);
  const pws = live.filter((f) => f.kind === 'password');
  const first = pws[0];
  if (first) {
    const at = live.indexOf(first);
    const prev = live[at - 1];
    // Right before the password, whatever it is called ("Member ID", "Card number"), is how the
    // form knows the user; a search box never is.
    if (
      prev &&
      prev.kind !== 'password' &&
      TEXTISH.has(prev.el.role) &&
      prev.el.role !== 'searchbox' &&
      !prev.says.has('xsearch')
    ) {
      prev.beforePassword = true;
      if (prev.kind === 'unknown' || prev.kind === 'other') prev.kind = 'identity';
    }
  }
  const hasIdentity = live.some((f) => f.kind === 'identity');
  const saysNew = pws.some((f) => f.password === 'new' || f.password === 'confirm');
  // What the form's buttons say, in words or in their name/id ("register-submit").
  const buttonSays = (c: Concept) =>
    form.buttons.some(
      (b) => canonOf(b.name).includes(c) || (!!b.facts?.attrs && canon(attrWords(b.facts.attrs)).includes(c)),
    );
  const signupButton = buttonSays('xsignup');
  const loginButton = buttonSays('xlogin');
  const setPlace = (f: Field | undefined, kind: PasswordKind) => {
    if (f && f.password === 'plain') {
      f.password = kind;
      f.passwordBy = 'place';
    }
  };
  // A password right before its confirmation is the new one, however many the form holds.
  for (let i = 0; i + 1 < pws.length; i++) if (pws[i + 1]!.password === 'confirm') setPlace(pws[i], 'new');
  if (pws.length === 2) {
    if (pws[0]!.password === 'current') setPlace(pws[1], 'new');
    // The confirmation first in the markup ("re-type pass", then "pass" laid out to its right):
    // the other one is the new password.
    else if (pws[0]!.password === 'confirm') setPlace(pws[1], 'new');
    else if (hasIdentity || saysNew || signupButton) {
      setPlace(pws[0], 'new');
      setPlace(pws[1], 'confirm');
    }
  } else if (pws.length === 3) {
    setPlace(pws[0], 'current');
    setPlace(pws[1], 'new');
    setPlace(pws[2], 'confirm');
  } else if (pws.length === 1 && signupButton && !loginButton) setPlace(pws[0], 'new');
  else if (
    pws.length === 1 &&
    !loginButton &&
    // A person's name, or a field that reads as making an account ("Email for New Account").
    live.some((f) => f.kind !== 'password' && (asksName(f) || f.says.get('xsignup') === 'seen'))
  )
    setPlace(pws[0], 'new');
  const kinds = pws.map((f) => f.password);
  if (kinds.includes('new') || kinds.includes('confirm')) form.kind = 'signup';
  else if (pws.length === 1) form.kind = 'login';
  else form.kind = 'none';
}

/**
 * A password right before its confirmation is the new one even when the page wraps each field in
 * a group of its own (so no one form holds both): the next usable text field of the page is it.
 */
function acrossGroups(page: PageForms) {
  const live = [...page.fields.values()].filter((f) => f.usable);
  for (let i = 0; i + 1 < live.length; i++) {
    const [f, next] = [live[i]!, live[i + 1]!];
    if (f.form === next.form) continue;
    // The same for a current password right before a new one: a change form, not a login.
    if (f.password === 'current' && next.password === 'new') {
      const form = page.forms.get(f.form);
      if (form?.kind === 'login') form.kind = 'signup';
      continue;
    }
    if (f.password !== 'plain' || next.password !== 'confirm') continue;
    f.password = 'new';
    f.passwordBy = 'place';
    const form = page.forms.get(f.form);
    if (form?.kind === 'login') form.kind = 'signup';
  }
}

/**
 * A text box right beside a password box of the same form with the same words is the copy a
 * "show password" switch swaps in (`passwordPlain` next to `password`): one field, not two, so
 * it is no second password (which would read the pair as a new password and its confirmation).
 */
function plainCopies(form: FormInfo) {
  const live = form.fields.filter((f) => f.usable);
  const words = (f: Field) => normalize([f.el.name, f.el.label, f.el.placeholder].filter(Boolean).join(' '));
  for (let i = 0; i + 1 < live.length; i++) {
    const [a, b] = [live[i]!, live[i + 1]!];
    const [plain, secret] = a.el.inputType === 'password' ? [b, a] : [a, b];
    if (plain.kind !== 'password' || plain.el.inputType !== 'text' || secret.el.inputType !== 'password')
      continue;
    if (words(plain) && words(plain) === words(secret)) plain.usable = false;
  }
}

const forms = new WeakMap<readonly SnapshotElement[], PageForms>();

/** Every field of the page classified, and its forms; computed once per snapshot. */
export function pageForms(elements: readonly SnapshotElement[]): PageForms {
  const hit = forms.get(elements);
  if (hit) return hit;
  const out: PageForms = { fields: new Map(), forms: new Map() };
  const formOf = (id: number): FormInfo => {
    let f = out.forms.get(id);
    if (!f) {
      f = { id, kind: 'none', fields: [], buttons: [] };
      out.forms.set(id, f);
    }
    return f;
  };
  const menus = elements
    .filter((el) => el.role === 'menuitem' || el.role === 'menu')
    .map((el) => `${el.locator.xpath}/`);
  for (const el of elements) {
    if (!el.interactive) continue;
    if (TEXTISH.has(el.role) && !el.options) {
      const field = classify(el);
      field.inMenu = menus.some((m) => el.locator.xpath.startsWith(m));
      out.fields.set(el.id, field);
      // Controls in no form or group count as one group of their own (form 0).
      formOf(field.form).fields.push(field);
    } else if (el.role === 'button') formOf(el.facts?.form ?? 0).buttons.push(el);
  }
  for (const form of out.forms.values()) {
    plainCopies(form);
    byPlace(form);
  }
  acrossGroups(out);
  forms.set(elements, out);
  return out;
}
