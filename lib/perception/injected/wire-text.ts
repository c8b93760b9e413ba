/**
 * Runs INSIDE the page, like collect.ts (self-contained, serialised with toString): the read's
 * JSON text made pure ASCII for its trip out of the page. Node reads it back with readText
 * (perception/read-text.ts).
 *
 * A string with even one character past ASCII crosses the DevTools protocol as UTF-16, which the
 * browser turns into UTF-8 slowly (measured here: 255 kB in 13 ms against 3-4 ms for ASCII; 20 kB
 * in 1.4 against 0.9), and nearly every real page has one (a no-break space, an em dash, a name).
 * - A few such characters (at most one in eight) are written as JSON \u escapes (four hex digits).
 * - Text mostly in another script goes as base64 of its UTF-8 (six bytes a character as escapes
 *   would cost more than the slow path): 12 kB of half-Greek text in 0.9 ms against 1.2, 255 kB in
 *   13 against 20.
 * A sample of every 61st character tells which kind of text this is before any escaping is done.
 */
export function wireText(json: string): string {
  if (!/[\u0080-\uffff]/.test(json)) return json;
  let past = 0;
  let seen = 0;
  for (let i = 0; i < json.length; i += 61, seen++) if (json.charCodeAt(i) > 127) past++;
  if (past * 8 <= seen) {
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
      // The sample missed how many there are: base64 after all.
    }
  }
  const bytes = new TextEncoder().encode(json) as Uint8Array & { toBase64?: () => string };
  if (typeof bytes.toBase64 === 'function') return bytes.toBase64();
  let binary = '';
  for (let i = 0; i < bytes.length; i += 8192)
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
  return btoa(binary);
}
