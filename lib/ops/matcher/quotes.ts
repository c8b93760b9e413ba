/**
 * Quoted values and `%variables%` in an instruction, lifted out so the sentence can be read with
 * regular expressions; each is replaced by a private-use marker holding its index.
 */
export const MARK = '\uE000';
export const MARKER = /^\uE000(\d+)\uE000$/;
export const HAS_MARKER = /\uE000/;
export const VARIABLE = /%[A-Za-z_][\w.-]*%/g;

/** Opening quote → the characters that may close it. */
const CLOSERS: Record<string, string> = {
  '"': '"',
  '“': '”"',
  '”': '”',
  '„': '“”',
  '«': '»',
  '‹': '›',
  '`': '`',
  '‘': '’',
  "'": "'",
};
/** Quotes that double as apostrophes: they only open at a word's start and close at its end. */
const APOSTROPHES = new Set(["'", '‘', '’']);
const OPENS_AFTER = /[\s([{:,]/;
const CLOSES_BEFORE = /[\s.,!?;:)\]}]/;

/**
 * Replaces quoted text and `%variables%` with `\uE000N\uE000` markers, keeping what they held in
 * `values`. Quotes are read left to right so a quote inside another stays part of the value; a
 * quote that never closes stays in the text (and the sentence then matches no shape).
 */
export function lift(text: string): { text: string; values: string[] } {
  const values: string[] = [];
  let out = '';
  let plain = '';
  const flush = () => {
    out += plain.replace(VARIABLE, (v) => {
      values.push(v);
      return `${MARK}${values.length - 1}${MARK}`;
    });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const closers = CLOSERS[c];
    const prev = i === 0 ? ' ' : text[i - 1]!;
    if (!closers || (APOSTROPHES.has(c) && !OPENS_AFTER.test(prev))) {
      plain += c;
      i++;
      continue;
    }
    let end = -1;
    for (let j = i + 1; j < text.length; j++) {
      if (!closers.includes(text[j]!)) continue;
      const next = j + 1 < text.length ? text[j + 1]! : ' ';
      if (APOSTROPHES.has(text[j]!) && !CLOSES_BEFORE.test(next)) continue;
      end = j;
      break;
    }
    if (end < 0) {
      plain += c;
      i++;
      continue;
    }
    flush();
    values.push(text.slice(i + 1, end).trim());
    out += `${MARK}${values.length - 1}${MARK}`;
    i = end + 1;
  }
  flush();
  return { text: out, values };
}
