/**
 * Word variants of the few concepts sign-in and sign-up pages are made of, in English and the
 * languages real pages use most (de fr es it nl pt pl sv, a little da no fi cs). Text is rewritten
 * to one token per concept (`xlogin`, `xemail`, `xpassword`…) so "Log-In", "Sign in", "Anmelden"
 * and "Se connecter" compare equal, and "E-Mail-Adresse" equals "email address".
 *
 * Input is already normalised (lower case, no accents, punctuation as spaces; see `normalize`).
 * Each rule is a whole-word pattern; longer phrases come first so "user name" is one concept and
 * "sign up" never becomes half of "sign in".
 */

/** Concept tokens: all start with `x`, which no real word here does on its own. */
export type Concept =
  | 'xlogin'
  | 'xsignup'
  | 'xlogout'
  | 'xemail'
  | 'xusername'
  | 'xphone'
  | 'xpassword'
  | 'xnew'
  | 'xconfirm'
  | 'xcurrent'
  | 'xcontinue'
  | 'xsubmit'
  | 'xforgot'
  | 'xsearch';

export const isConcept = (t: string): t is Concept =>
  t.length > 1 && t.charCodeAt(0) === 120 && CONCEPTS.has(t);

const CONCEPTS = new Set<string>([
  'xlogin',
  'xsignup',
  'xlogout',
  'xemail',
  'xusername',
  'xphone',
  'xpassword',
  'xnew',
  'xconfirm',
  'xcurrent',
  'xcontinue',
  'xsubmit',
  'xforgot',
  'xsearch',
]);

const words = (list: string[]) => list.sort((a, b) => b.length - a.length).join('|');

/** [concept, alternatives]; applied in this order. */
const RULES: [Concept | string, string[]][] = [
  [
    'xforgot',
    [
      'forgot',
      'forgotten',
      'recovery',
      'recover',
      'forget',
      'lost',
      'reset',
      'vergessen',
      'oublie',
      'olvidado',
      'olvidaste',
      'dimenticato',
      'dimenticata',
      'vergeten',
      'esqueceu',
      'esqueci',
      'zapomniales',
      'zapomniane',
      'glomt',
      'glemt',
    ],
  ],
  [
    'xsignup',
    [
      'sign up',
      'signup',
      'register',
      'registration',
      'create account',
      'create an account',
      'create your account',
      'create new account',
      'create a new account',
      'new account',
      'open an account',
      'open account',
      'get started',
      'join',
      'join us',
      'neues konto',
      'konto anlegen',
      'creer mon compte',
      'creer votre compte',
      'crear mi cuenta',
      'crea il tuo account',
      'nieuw account',
      'criar uma conta',
      'zaloz konto',
      'join now',
      'registrieren',
      'registrierung',
      'konto erstellen',
      'sinscrire',
      'inscription',
      'creer un compte',
      'registrarse',
      'registrate',
      'crear cuenta',
      'crear una cuenta',
      'registrati',
      'registrazione',
      'crea account',
      'registreren',
      'aanmelden voor',
      'account aanmaken',
      'cadastre se',
      'cadastrar',
      'criar conta',
      'zarejestruj sie',
      'rejestracja',
      'registrera dig',
      'skapa konto',
    ],
  ],
  [
    'xlogout',
    [
      'log out',
      'logout',
      'sign out',
      'signout',
      'abmelden',
      'ausloggen',
      'se deconnecter',
      'deconnexion',
      'cerrar sesion',
      'esci',
      'uitloggen',
      'sair',
      'wyloguj',
      'logga ut',
    ],
  ],
  [
    'xusername',
    [
      'user name',
      'username',
      'user id',
      'userid',
      'user',
      'login id',
      'login name',
      'loginname',
      'benutzername',
      'benutzerkennung',
      'benutzer',
      'nom dutilisateur',
      'nom d utilisateur',
      'identifiant',
      'nombre de usuario',
      'usuario',
      'nome utente',
      'utente',
      'gebruikersnaam',
      'nome de usuario',
      'nome de utilizador',
      'utilizador',
      'nazwa uzytkownika',
      'login uzytkownika',
      'anvandarnamn',
      'brukernavn',
      'brugernavn',
      'kayttajatunnus',
      'uzivatelske jmeno',
    ],
  ],
  [
    'xemail',
    [
      'e mail address',
      'email address',
      'e mail adresse',
      'e mail adres',
      'e mail',
      'email',
      'adresse e mail',
      'adresse email',
      'adresse electronique',
      'courriel',
      'correo electronico',
      'correo',
      'indirizzo email',
      'indirizzo e mail',
      'e post',
      'epost',
      'mailadres',
      'mailadresse',
      'emailadres',
      'sahkoposti',
    ],
  ],
  [
    'xphone',
    [
      'phone number',
      'mobile number',
      'phone',
      'mobile',
      'telephone',
      'telefon',
      'telefono',
      'telefoon',
      'cell',
    ],
  ],
  [
    'xlogin',
    [
      'log in',
      'login',
      'log on',
      'logon',
      'sign in',
      'signin',
      'sign on',
      'anmelden',
      'einloggen',
      'se connecter',
      'connexion',
      'sidentifier',
      'iniciar sesion',
      'inicia sesion',
      'ingresar',
      'acceder',
      'accedi',
      'accedere',
      'inloggen',
      'aanmelden',
      'entrar',
      'iniciar sessao',
      'acessar',
      'zaloguj sie',
      'zaloguj',
      'logowanie',
      'logga in',
      'logg inn',
      'log ind',
      'kirjaudu',
      'prihlasit se',
      'prihlasit',
    ],
  ],
  [
    'xpassword',
    [
      'password',
      'passwort',
      'kennwort',
      'mot de passe',
      'contrasena',
      'clave',
      'wachtwoord',
      'senha',
      'haslo',
      'losenord',
      'passord',
      'adgangskode',
      'kodeord',
      'salasana',
      'heslo',
      'passwd',
      'pwd',
      'pass',
      'passcode',
      'pw',
    ],
  ],
  [
    'xconfirm',
    [
      'confirm',
      'confirmation',
      'confirmed',
      'repeat',
      're enter',
      'reenter',
      're type',
      'retype',
      'verify',
      'verification',
      'again',
      'once more',
      'bestatigen',
      'bestatigung',
      'wiederholen',
      'wiederholung',
      'erneut',
      'nochmal',
      'noch einmal',
      'confirmer',
      'repeter',
      'ressaisir',
      'retaper',
      'confirmar',
      'confirmacion',
      'repetir',
      'repite',
      'de nuevo',
      'otra vez',
      'conferma',
      'confermare',
      'ripeti',
      'ripetere',
      'bevestig',
      'bevestigen',
      'bevestiging',
      'herhaal',
      'herhalen',
      'opnieuw',
      'confirmacao',
      'repita',
      'novamente',
      'potwierdz',
      'potwierdzenie',
      'powtorz',
      'ponownie',
      'bekrafta',
      'upprepa',
      'igen',
      'gentag',
      'bekraeft',
      'gjenta',
      'znovu',
      'potvrzeni',
      'toista',
      'confirm2',
      'repeat2',
    ],
  ],
  [
    'xnew',
    [
      'new',
      'create',
      'creer',
      'choisir',
      'choisissez',
      'erstellen',
      'wahlen',
      'vergeben',
      'crear',
      'elige',
      'elegir',
      'crea',
      'scegli',
      'kies',
      'criar',
      'escolha',
      'utworz',
      'wybierz',
      'skapa',
      'valj',
      'create a',
      'create your',
      'choose',
      'choose a',
      'choose your',
      'set a',
      'neu',
      'neue',
      'neues',
      'neuen',
      'nouveau',
      'nouvelle',
      'nuevo',
      'nueva',
      'nuovo',
      'nuova',
      'nieuw',
      'nieuwe',
      'novo',
      'nova',
      'nowe',
      'nowy',
      'nytt',
      'nye',
    ],
  ],
  [
    'xcurrent',
    [
      'current',
      'old',
      'existing',
      'aktuelles',
      'aktuelle',
      'bisheriges',
      'altes',
      'actuel',
      'ancien',
      'actual',
      'anterior',
      'attuale',
      'vecchia',
      'huidig',
      'huidige',
      'oude',
      'atual',
      'antiga',
      'obecne',
      'aktualne',
      'nuvarande',
      'gamla',
    ],
  ],
  [
    'xcontinue',
    [
      'continue',
      'next',
      'proceed',
      'weiter',
      'continuer',
      'suivant',
      'continuar',
      'siguiente',
      'avanti',
      'continua',
      'prosegui',
      'doorgaan',
      'volgende',
      'verder',
      'proximo',
      'seguinte',
      'dalej',
      'nasta',
      'fortsatt',
      'fortsett',
      'neste',
      'videre',
      'jatka',
    ],
  ],
  [
    'xsubmit',
    ['submit', 'absenden', 'envoyer', 'valider', 'enviar', 'invia', 'verzenden', 'wyslij', 'skicka'],
  ],
  [
    'xsearch',
    [
      'search',
      'suche',
      'suchen',
      'rechercher',
      'recherche',
      'buscar',
      'cerca',
      'zoeken',
      'pesquisar',
      'szukaj',
      'sok',
    ],
  ],
];

const COMPILED: [string, RegExp][] = RULES.map(([concept, alts]) => [
  concept,
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${words(alts)})(?![\\p{L}\\p{N}])`, 'gu'),
]);
/** A cheap pre-check: most texts hold none of the first letters' words. */
const cache = new Map<string, string>();
const CACHE_MAX = 20_000;

/** Rewrites normalised text so each concept's variants become its one token. */
export function canon(normalised: string): string {
  if (!normalised) return normalised;
  const hit = cache.get(normalised);
  if (hit !== undefined) return hit;
  let t = normalised;
  for (const [concept, re] of COMPILED) {
    re.lastIndex = 0;
    t = t.replace(re, concept);
  }
  // "xnew xnew" from "create a new": one is enough.
  t = t.replace(/\b(x[a-z]+)(?: \1\b)+/g, '$1');
  if (cache.size > CACHE_MAX) cache.clear();
  cache.set(normalised, t);
  return t;
}

/** The concept tokens a text holds. */
export function conceptsOf(canonical: string): Set<Concept> {
  const out = new Set<Concept>();
  for (const t of canonical.split(' ')) if (isConcept(t)) out.add(t);
  return out;
}

/**
 * Splits `name`/`id` attribute values into words: "loginEmail" → "login email", "user[pass]" →
 * "user pass", "txtUserName2" → "txt user name".
 */
export function attrWords(attrs: string): string {
  return attrs
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .replace(/[^a-z]+/g, ' ')
    .trim();
}

/** What an `autocomplete` token says, in words the lexicon reads. */
export function autocompleteWords(ac: string): string {
  const out: string[] = [];
  for (const t of ac.split(/\s+/)) {
    if (t === 'username') out.push('username');
    else if (t === 'email') out.push('email');
    else if (t === 'current-password') out.push('current password');
    else if (t === 'new-password') out.push('new password');
    else if (t === 'tel' || t.startsWith('tel-')) out.push('phone');
    else if (t === 'one-time-code') out.push('code');
  }
  return out.join(' ');
}
