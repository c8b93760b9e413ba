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

/** What the user sees of an element: its name, label, placeholder and (for buttons) value. */
export interface SeenText {
  name: string;
  label?: string;
  placeholder?: string;
  value?: string;
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
  const text = fold([seen.name, seen.label, seen.placeholder, seen.value].filter(Boolean).join(' '));
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
