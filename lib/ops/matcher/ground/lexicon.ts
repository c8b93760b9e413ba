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
import { CONTINUE, FORGOT, LOGIN, LOGOUT, SEARCH, SIGNUP, SUBMIT } from './lexicon-actions.ts';
import { EMAIL, PASSWORD, PHONE, USERNAME } from './lexicon-fields.ts';
import { CONFIRM, CURRENT, NEW } from './lexicon-qualifiers.ts';

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
  FORGOT,
  SIGNUP,
  LOGOUT,
  USERNAME,
  EMAIL,
  PHONE,
  LOGIN,
  PASSWORD,
  CONFIRM,
  NEW,
  CURRENT,
  CONTINUE,
  SUBMIT,
  SEARCH,
];

const COMPILED: [string, RegExp][] = RULES.map(([concept, alts]) => [
  concept,
  new RegExp(`(?<![\\p{L}\\p{N}])(?:${words(alts)})(?![\\p{L}\\p{N}])`, 'gu'),
]);
/**
 * Chinese, Japanese and Korean write words without spaces, so their few words here match inside
 * text, as whole compounds only ("新密码" new password, "再次输入" enter again): a lone "新" is
 * in too many other words.
 */
const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]/;
const CJK_WORDS: [RegExp, string][] = [
  [/再次输入|再次輸入|重复输入|重複輸入|确认|確認|再入力|다시 입력|확인/g, ' xconfirm '],
  [/新密码|新密碼|设置密码|設置密碼|設定密碼|新しいパスワード|새 비밀번호/g, ' xnew xpassword '],
  [/旧密码|舊密碼|当前密码|當前密碼|原密码|現在のパスワード|현재 비밀번호/g, ' xcurrent xpassword '],
  [/密码|密碼|パスワード|비밀번호/g, ' xpassword '],
];

/** A cheap pre-check: most texts hold none of the first letters' words. */
const cache = new Map<string, string>();
const CACHE_MAX = 20_000;

/** Rewrites normalised text so each concept's variants become its one token. */
export function canon(normalised: string): string {
  if (!normalised) return normalised;
  const hit = cache.get(normalised);
  if (hit !== undefined) return hit;
  let t = normalised;
  if (CJK.test(t)) {
    for (const [re, token] of CJK_WORDS) t = t.replace(re, token);
    t = t.replace(/\s+/g, ' ').trim();
  }
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

/** Normalised text with one concept's word variants taken out ("sign in email" → "email"). */
export function without(normalised: string, concept: Concept): string {
  const re = COMPILED.find(([c]) => c === concept)?.[1];
  if (!re) return normalised;
  re.lastIndex = 0;
  return normalised.replace(re, ' ').replace(/\s+/g, ' ').trim();
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
