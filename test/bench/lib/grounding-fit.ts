/**
 * bench:grounding's fixed user phrasings and which of them "fit" an element. The phrasings are what
 * a user writes without reading the page; whether one fits is judged from what the user would see
 * on the element (its visible words), with a word list of the bench's own, kept apart from the
 * matcher's so the benchmark does not grade the matcher with the matcher's own vocabulary.
 */

export type Label = 'username' | 'password' | 'next' | 'new' | 'confirm';
export const LABELS: Label[] = ['username', 'password', 'next', 'new', 'confirm'];

export interface Phrasing {
  /** Short key for tables ("email", "log in"). */
  key: string;
  instruction: string;
}

export const PHRASINGS: Record<Label, Phrasing[]> = {
  username: [
    { key: 'email', instruction: 'type "ada@example.com" into the email field' },
    { key: 'username', instruction: 'type "ada" into the username field' },
  ],
  password: [{ key: 'password', instruction: 'type %pw% into the password field' }],
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
  ],
  password: [
    { key: 'password box', instruction: 'enter %pw% in the password box' },
    { key: 'password input', instruction: 'type %pw% into the password input' },
    { key: 'click password', instruction: 'click the password field' },
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
  ],
  confirm: [
    { key: 'repeat', instruction: 'type %pw% into the repeat password field' },
    { key: 're-enter', instruction: 'type %pw% into the re-enter password field' },
    { key: 'confirmation', instruction: 'type %pw% into the password confirmation field' },
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

/** The keys of `label`'s phrasings that fit the element the user sees; empty when none does. */
export function fittingKeys(label: Label, seen: SeenText): string[] {
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
      return PHRASINGS[label].map((p) => p.key);
  }
}
