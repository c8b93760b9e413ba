/**
 * Normalised text, and how well a phrase names a text. The scale is built so that only readings a
 * person would accept without a second look reach the default threshold (0.75):
 *
 *   1.00  the same text                         "sign in"        ~ "Sign in"
 *   0.97  the same words up to spelling or synonyms "Log-In" ~ "login" ~ "Sign in"
 *   0.96  the same words after stemming          "add to carts"   ~ "Add to cart"
 *   0.95  the same words in another order
 *   0.50 + 0.40·coverage  one side contains the other as a run of words, coverage = the share of
 *         the longer side's weight the shorter one accounts for: "email" ~ "Email address" 0.80,
 *         "save draft" ~ "Save draft now" 0.77, but "accept" ~ "Accept all" 0.70 and
 *         "cancel" ~ "Cancel subscription" 0.70 stay below: half a name is not a name.
 *   0.45 + 0.40·coverage  the same, words scattered
 *   < 0.60  partial overlap (token F1 × 0.6): never enough on its own
 *
 * Then role, verb and state factors multiply in (see `scoreCandidates` in score.ts).
 */
import { canon } from './ground/lexicon.ts';

/**
 * Normalised text: `lit` is the lower-case words as written; `raw` the same with each concept's
 * word variants as one token ("log-in", "sign in" → `xlogin`; see ground/lexicon.ts); `stem` the
 * canonical words stemmed; `set` for lookups.
 */
export interface Norm {
  lit: string;
  raw: string;
  stem: string;
  tokens: string[];
  set: Set<string>;
  /** Summed weight of the distinct tokens. */
  weight: number;
  /** Tokens of full weight, in order: the words that carry the meaning. */
  sig: string[];
}

const EMPTY: Norm = { lit: '', raw: '', stem: '', tokens: [], set: new Set(), weight: 0, sig: [] };
const NON_ASCII = /[\u0080-\uffff]/;
const COMBINING = /[\u0300-\u036f]/g;
/** Letters NFKD leaves alone: "hasło", "bekræft", "størrelse", "straße". */
const STROKED = /[łøæßđœ]/g;
const UNSTROKED: Record<string, string> = { ł: 'l', ø: 'o', æ: 'ae', ß: 'ss', đ: 'd', œ: 'oe' };
const APOSTROPHE = /['’`]/g;
const AMPERSAND = /&/g;
const NON_WORD = /[^\p{L}\p{N}]+/gu;

/** Lower-case, no accents, no apostrophes, `&` as "and", anything else not a letter or digit a space. */
export function normalize(s: string): string {
  let t = s.toLowerCase();
  if (NON_ASCII.test(t))
    t = t
      .normalize('NFKD')
      .replace(COMBINING, '')
      .replace(STROKED, (c) => UNSTROKED[c] ?? c)
      // Put back what NFKD took apart beyond Latin accents: kana voicing marks ("パスワード"
      // would read as "ハ スワート"), Hangul syllables.
      .normalize('NFC');
  return t.replace(APOSTROPHE, '').replace(AMPERSAND, ' and ').replace(NON_WORD, ' ').trim();
}

/** Words that glue a name together but do not tell two names apart. */
const LOW = new Set([
  'the',
  'a',
  'an',
  'to',
  'of',
  'for',
  'and',
  'or',
  'with',
  'by',
  'at',
  'from',
  'i',
  'me',
  'my',
  'your',
  'our',
  'this',
  'that',
  'is',
  'are',
  'be',
  'it',
  'its',
  'as',
  'required',
  'optional',
  'enter',
  'please',
  'here',
  'du',
  'ihre',
  'deine',
  'votre',
  'ton',
  'tu',
  'su',
  'il',
  'tuo',
  'la',
  'le',
  'je',
  'uw',
  'seu',
  'sua',
  'din',
  'ditt',
]);
/** Words people add to or drop from field names without changing which field they mean. */
const SOFT = new Set([
  'address',
  'number',
  'adresse',
  'adres',
  'direccion',
  'indirizzo',
  'endereco',
  'adresa',
]);
const LOW_WEIGHT = 0.3;
const SOFT_WEIGHT = 0.35;
const weightOf = (w: string): number => (LOW.has(w) ? LOW_WEIGHT : SOFT.has(w) ? SOFT_WEIGHT : 1);

/** Plural and third-person 's' only: enough for "carts"/"cart", too little to merge meanings. */
export function stem(w: string): string {
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) return `${w.slice(0, -3)}y`;
  if (w.endsWith('sses')) return w.slice(0, -2);
  if (w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes')) return w.slice(0, -2);
  if (w.endsWith('ss') || w.endsWith('us') || w.endsWith('is')) return w;
  if (w.endsWith('s')) return w.slice(0, -1);
  return w;
}

export function toNorm(s: string | undefined): Norm {
  if (!s) return EMPTY;
  const lit = normalize(s);
  if (!lit) return EMPTY;
  const raw = canon(lit);
  const tokens = raw.split(' ').map(stem);
  const set = new Set(tokens);
  let weight = 0;
  for (const t of set) weight += weightOf(t);
  const sig = tokens.filter((t) => !LOW.has(t) && !SOFT.has(t));
  return { lit, raw, stem: tokens.join(' '), tokens, set, weight, sig };
}

/** True when `inner` occurs in `outer` as consecutive words. */
function containsRun(outer: string[], inner: string[]): boolean {
  if (inner.length === 0) return false;
  scan: for (let i = 0; i + inner.length <= outer.length; i++) {
    for (let j = 0; j < inner.length; j++) if (outer[i + j] !== inner[j]) continue scan;
    return true;
  }
  return false;
}

/**
 * How well a phrase names a text, in [0, 1] (scale in the file comment). `quoted` phrases must
 * equal the text: quotes mean "exactly this".
 */
export function textScore(phrase: Norm, text: Norm, quoted = false): number {
  if (!phrase.raw || !text.raw) return 0;
  if (phrase.lit === text.lit) return 1;
  if (quoted) return 0;
  // Same words up to spelling variants ("Log-In" ~ "login") or one concept's synonyms ("sign in").
  if (phrase.raw === text.raw) return phrase.raw === phrase.lit && text.raw === text.lit ? 1 : 0.97;
  if (phrase.stem === text.stem) return 0.96;
  let shared = 0;
  let allPhraseIn = true;
  for (const t of phrase.set) {
    if (text.set.has(t)) shared += weightOf(t);
    else allPhraseIn = false;
  }
  if (shared === 0) return 0;
  let allTextIn = true;
  for (const t of text.set) {
    if (!phrase.set.has(t)) {
      allTextIn = false;
      break;
    }
  }
  if (allPhraseIn && allTextIn) return 0.95;
  // A phrase of glue words alone ("it", "me") says nothing about which element.
  if (phrase.sig.length === 0 || text.sig.length === 0) return 0;
  if (allPhraseIn) {
    const coverage = shared / text.weight;
    return (containsRun(text.sig, phrase.sig) ? 0.5 : 0.45) + 0.4 * coverage;
  }
  if (allTextIn) {
    const coverage = shared / phrase.weight;
    // The phrase says more than the name. Extra glue or field words ("email address" for
    // "Email") are fine; an extra meaningful word ("Sign in with Facebook" for "Sign in")
    // describes something else, so it stays in the partial-overlap band.
    for (const t of phrase.sig) if (!text.set.has(t)) return 0.6 * coverage;
    return (containsRun(phrase.sig, text.sig) ? 0.5 : 0.45) + 0.4 * coverage;
  }
  const precision = shared / phrase.weight;
  const recall = shared / text.weight;
  return 0.6 * ((2 * precision * recall) / (precision + recall));
}

/** Highest score a name + context reading reaches: below an exact name, above the threshold. */
export const QUALIFIED_CAP = 0.9;

/**
 * "add to cart for the Rain Jacket": the name ("Add to cart") accounts for part of the phrase and
 * the element's context ("Rain Jacket") for every other meaningful word. That tells twelve
 * identical buttons apart; any meaningful word found in neither keeps the reading out.
 */
export function qualifiedScore(phrase: Norm, name: Norm, context: Norm): number {
  if (!phrase.raw || !name.raw || !context.raw || name.sig.length === 0) return 0;
  for (const t of name.set) if (!phrase.set.has(t)) return 0;
  let fromContext = false;
  for (const t of phrase.sig) {
    if (name.set.has(t)) continue;
    if (!context.set.has(t)) return 0;
    fromContext = true;
  }
  if (!fromContext) return 0;
  let covered = 0;
  for (const t of phrase.set) if (name.set.has(t) || context.set.has(t)) covered += weightOf(t);
  return Math.min(QUALIFIED_CAP, 0.5 + 0.4 * (covered / phrase.weight));
}
