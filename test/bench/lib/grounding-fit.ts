/**
 * bench:grounding's fixed user phrasings and which of them "fit" an element. The phrasings are what
 * a user writes without reading the page; whether one fits is judged from what the user would see
 * on the element (its visible words), with a word list of the bench's own, kept apart from the
 * matcher's so the benchmark does not grade the matcher with the matcher's own vocabulary.
 */
import type { SnapshotElement } from '../../../lib/perception/types.ts';

export type Label = 'username' | 'password' | 'next' | 'new' | 'confirm';
export const LABELS: Label[] = ['username', 'password', 'next', 'new', 'confirm'];

export interface Phrasing {
  /** Short key for tables ("email", "log in"). */
  key: string;
  instruction: string;
  /**
   * The form the phrasing names ("the sign-in email"): a way to say the target only when the user
   * does not read the target's form as the other kind (see `formApplies`).
   */
  form?: 'login' | 'signup';
}

export const PHRASINGS: Record<Label, Phrasing[]> = {
  username: [
    { key: 'email', instruction: 'type "ada@example.com" into the email field' },
    { key: 'username', instruction: 'type "ada" into the username field' },
    // A page with a login form and a sign-up form asks for an email and a password in both; a
    // caller who logs in can say which form (issue 27: the fitting phrasings that name it).
    {
      key: 'sign-in email',
      instruction: 'type "ada@example.com" into the sign-in email field',
      form: 'login',
    },
    { key: 'sign-in username', instruction: 'type "ada" into the sign-in username field', form: 'login' },
  ],
  password: [
    { key: 'password', instruction: 'type %pw% into the password field' },
    { key: 'login password', instruction: 'type %pw% into the login password field', form: 'login' },
  ],
  next: [
    { key: 'log in', instruction: 'click the log in button' },
    { key: 'sign in', instruction: 'click the sign in button' },
    { key: 'continue', instruction: 'click the continue button' },
  ],
  new: [{ key: 'new password', instruction: 'type %pw% into the new password field' }],
  confirm: [{ key: 'confirm', instruction: 'type %pw% into the confirm password field' }],
};

/**
 * More ways people say the same (`BENCH_VARIANTS=1`): never counted as fitting, only checked for
 * wrong actions, since a phrasing the bench did not plan for must defer rather than guess.
 */
export const VARIANTS: Record<Label, Phrasing[]> = {
  username: [
    { key: 'e-mail', instruction: 'type "ada@example.com" into the e-mail field' },
    { key: 'email address', instruction: 'enter "ada@example.com" in the email address box' },
    { key: 'user name', instruction: 'type "ada" into the user name field' },
    { key: 'login', instruction: 'type "ada" into the login field' },
    { key: 'click email', instruction: 'click the email field' },
    {
      key: 'email of login form',
      instruction: 'enter "ada@example.com" in the email field of the login form',
      form: 'login',
    },
  ],
  password: [
    { key: 'password box', instruction: 'enter %pw% in the password box' },
    { key: 'password input', instruction: 'type %pw% into the password input' },
    { key: 'click password', instruction: 'click the password field' },
    {
      key: 'password of sign-in form',
      instruction: 'type %pw% into the password field of the sign-in form',
      form: 'login',
    },
  ],
  next: [
    { key: 'login button', instruction: 'click the login button' },
    { key: 'sign-in', instruction: 'press the sign-in button' },
    { key: 'log in (no role)', instruction: 'click log in' },
    { key: 'next', instruction: 'click the next button' },
    { key: 'submit', instruction: 'click the submit button' },
  ],
  new: [
    { key: 'create password', instruction: 'type %pw% into the create password field' },
    { key: 'choose password', instruction: 'type %pw% into the choose a password field' },
    { key: 'password', instruction: 'type %pw% into the password field' },
    { key: 'sign-up password', instruction: 'type %pw% into the sign-up password field', form: 'signup' },
    {
      key: 'password of create-account form',
      instruction: 'type %pw% into the password field of the create account form',
      form: 'signup',
    },
  ],
  confirm: [
    { key: 'repeat', instruction: 'type %pw% into the repeat password field' },
    { key: 're-enter', instruction: 'type %pw% into the re-enter password field' },
    { key: 'confirmation', instruction: 'type %pw% into the password confirmation field' },
    {
      key: 'sign-up confirm',
      instruction: 'type %pw% into the sign-up confirm password field',
      form: 'signup',
    },
  ],
};

/** What the user sees of an element: its name, label, placeholder and (for buttons) value. */
export interface SeenText {
  name: string;
  label?: string;
  placeholder?: string;
  value?: string;
  /** The text just before an unnamed field ("Username:" in a table cell): what the user reads for it. */
  facts?: { nearby?: string };
}

const fold = (s: string) =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '');

const EMAIL = /e-?mail|courriel|correo|e-post|epost|sahkoposti|posta elettronica|mail/;
const USER =
  /user|benutzer|nutzer|usuario|utilisateur|identifiant|utente|gebruiker|anvandar|brukernavn|login|kennung|konto|account|member|customer|client|id\b|nickname|nick\b/;
const LOG_IN = /\blog\s*-?\s*(?:in|on)\b|\blogin\b|\blogon\b/;
const SIGN_IN = /\bsign\s*-?\s*(?:in|on)\b|\bsignin\b/;
/** Log-in words of other languages: there "log in" and "sign in" are one word, so both fit. */
const LOGIN_OTHER =
  /anmelden|einloggen|login|connexion|se connecter|connecter|identifier|iniciar sesion|ingresar|entrar|acceder|accedi|accedere|inloggen|aanmelden|zaloguj|logga in|entrar|acessar|prihlasit|bejelentkez|kirjaudu|logg inn|log ind|giris|войти|вход|ログイン|登录|登入|로그인/;
const CONTINUE =
  /\bcontinue\b|\bnext\b|\bproceed\b|weiter|continuer|suivant|continuar|siguiente|avanti|continua|prosegui|doorgaan|volgende|verder|proximo|seguinte|dalej|nasta|fortsatt|fortsett|neste|videre|jatka|dalsi|pokracovat/;

/** Words a user reads on a field of a form that makes an account or sets a new password. */
const MAKES_ACCOUNT =
  /creat|\bnew\b|regist|\bsign\s*-?\s*up\b|\bjoin\b|confirm|repeat|re-?enter|re-?type|choose|inscri|\bneu|nouveau|nuevo|nuovo|wiederhol|bestatig|crea|kies/;

/**
 * Whether a phrasing that names a form is a way to say this target: "the sign-in password" is not
 * what anyone calls a field whose form reads "Create password" (some labels mark a create-account
 * box as the login fields). `formText` is what the user reads on the fields of the target's form.
 */
export function formApplies(p: Phrasing, formText: string): boolean {
  if (p.form !== 'login') return true;
  return !MAKES_ACCOUNT.test(fold(formText));
}

/** What a user reads on the text fields of `el`'s form (its own words when it has no form). */
export function formWords(elements: readonly SnapshotElement[], el: SnapshotElement): string {
  const form = el.facts?.form;
  const mates = form === undefined ? [el] : elements.filter((e) => e.facts?.form === form);
  return mates
    .filter((e) => e.role === 'textbox')
    .map((e) => [e.name, e.label, e.placeholder, e.facts?.nearby].filter(Boolean).join(' '))
    .join(' ');
}

/** The keys of `label`'s phrasings that fit the element the user sees; empty when none does. */
export function fittingKeys(label: Label, seen: SeenText, formText = ''): string[] {
  const keys = plainKeys(label, seen);
  // "The sign-in email" fits where "the email" does, on a form the user reads as a login form.
  for (const p of PHRASINGS[label]) {
    if (!p.form || !formApplies(p, formText)) continue;
    const base = p.key.replace(/^(?:sign-in|login) /, '');
    if (keys.includes(base)) keys.push(p.key);
  }
  return keys;
}

function plainKeys(label: Label, seen: SeenText): string[] {
  const own = [seen.name, seen.label, seen.placeholder, seen.value].filter(Boolean).join(' ');
  // A field with no words of its own is read by the text just before it, as the user reads it.
  const text = fold(own.trim() ? own : (seen.facts?.nearby ?? ''));
  switch (label) {
    case 'username': {
      if (!text.trim()) return ['email', 'username'];
      const keys: string[] = [];
      if (EMAIL.test(text)) keys.push('email');
      if (USER.test(text)) keys.push('username');
      return keys;
    }
    case 'next': {
      const keys: string[] = [];
      const log = LOG_IN.test(text);
      const sign = SIGN_IN.test(text);
      if (log) keys.push('log in');
      if (sign) keys.push('sign in');
      if (!log && !sign && LOGIN_OTHER.test(text)) keys.push('log in', 'sign in');
      if (CONTINUE.test(text)) keys.push('continue');
      return keys;
    }
    default:
      return PHRASINGS[label].filter((p) => !p.form).map((p) => p.key);
  }
}
