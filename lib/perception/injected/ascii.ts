/**
 * Runs INSIDE the page, like collect.ts (self-contained, serialised with toString): the read's
 * JSON text with its characters past ASCII written as \uXXXX escapes, when they are few.
 *
 * A string with even one character past ASCII crosses the DevTools protocol as UTF-16, about four
 * times slower than pure ASCII (measured here: 255 kB in 13 ms against 3-4 ms; 20 kB in 1.4
 * against 0.9), and nearly every real page has one (a no-break space, an em dash, a name). Text
 * mostly in another script is left as it is: at six bytes a character, escaping it costs more than
 * the slow path does. A sample of every 61st character tells which kind of page this is before any
 * escaping is done; past one character in eight, the text goes as it is.
 */
export function asciiJson(json: string): string {
  if (!/[\u0080-\uffff]/.test(json)) return json;
  let past = 0;
  let seen = 0;
  for (let i = 0; i < json.length; i += 61, seen++) if (json.charCodeAt(i) > 127) past++;
  if (past * 8 > seen) return json;
  const most = json.length >> 3;
  let n = 0;
  try {
    // Each UTF-16 unit on its own: a surrogate pair becomes two escapes, which JSON reads back as one.
    return json.replace(/[\u0080-\uffff]/g, (c) => {
      if (++n > most) throw n;
      const hex = c.charCodeAt(0).toString(16);
      return `\\u${'0000'.slice(hex.length)}${hex}`;
    });
  } catch {
    // The sample missed how many there are: sent as it is.
    return json;
  }
}
