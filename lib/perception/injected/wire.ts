import type { PackedExtra, PageElement, PageLine, WireParts } from './payload.ts';

/**
 * Runs INSIDE a page frame, like collect.ts (self-contained, no imports but types): packs the walk's
 * lines and elements into the compact form they travel in (WireParts in payload.ts; unpack.ts reads
 * it back in Node). Strings go out joined by DEL, numbers in flat arrays, each line's top and each
 * element's id as the difference from the one before, each xpath and url past the characters it
 * shares with the one before (elements come in document order, so neighbours share most of both).
 */
export function wire() {
  /** DEL: neither JSON nor the CDP message escapes it, and no text a page shows holds one. */
  const SEP = '\x7f';

  /**
   * `parts` joined by SEP. Should a page's text hold a DEL after all, the parts would not read back
   * as they went: each stray one becomes U+FFFD, which is what it shows as anyway (it prints nothing).
   */
  function joinParts(parts: string[]): string {
    // Two joins and a search, all native: a loop over the parts would run cold, in the
    // interpreter, on the first read of a page.
    if (!parts.join('').includes(SEP)) return parts.join(SEP);
    return parts.map((p) => p.split(SEP).join('\ufffd')).join(SEP);
  }

  /** How many leading characters `a` and `b` have in common. */
  function shared(a: string, b: string): number {
    const max = a.length < b.length ? a.length : b.length;
    let n = 0;
    while (n < max && a.charCodeAt(n) === b.charCodeAt(n)) n++;
    return n;
  }

  /**
   * `scrollY`: the frame's, when the walk read it; an element's box top travels as the difference
   * from its line's (document) top, which is nearly always 0.
   */
  function packWire(lines: PageLine[], elements: PageElement[], scrollY = 0): WireParts {
    const texts: string[] = [];
    const ln: number[] = [];
    const roles: string[] = [];
    const roleIndex = new Map<string, number>();
    // A text line sits at its block's top, an element line at its own: each kind's tops run apart.
    let textTop = 0;
    let elTop = 0;
    // The top of the line of each element, in step with the elements.
    const elementTops: number[] = [];
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i]!;
      const flags = l[3];
      const top = l[4];
      if (l[2]) elementTops.push(top);
      if (flags & 8) {
        let r = roleIndex.get(l[1]);
        if (r === undefined) {
          r = roles.length;
          roles.push(l[1]);
          roleIndex.set(l[1], r);
        }
        ln.push(l[0] * 32 + flags + (l[2] ? 16 : 0), top - elTop, r);
        elTop = top;
        texts.push(l[5]);
      } else {
        ln.push(l[0] * 32 + flags + (l[2] ? 16 : 0), top - textTop);
        textTop = top;
        texts.push(l[1]);
      }
    }
    const strings: string[] = [];
    const en: number[] = [];
    const ex: PackedExtra[] = [];
    let lastId = 0;
    let lastXpath = '';
    let lastUrl = '';
    const sy = Math.round(scrollY);
    let bx = 0;
    let bw = 0;
    let bh = 0;
    for (let i = 0; i < elements.length; i++) {
      const e = elements[i]!;
      const id = e[0];
      const xpath = e[4];
      const flags = e[5];
      const url = e[6];
      const box = e[7];
      const extra = e[8];
      const xs = shared(xpath, lastXpath);
      lastXpath = xpath;
      // Ids mostly run one after another: only a jump is sent (flag 128).
      const jump = id - lastId - 1;
      const wireFlags = flags | (extra ? 16 : 0) | (box ? 32 : 0) | (url ? 64 : 0) | (jump ? 128 : 0);
      if (jump) en.push(wireFlags, jump, xs);
      else en.push(wireFlags, xs);
      lastId = id;
      strings.push(e[3], xs ? xpath.slice(xs) : xpath);
      if (url) {
        const us = shared(url, lastUrl);
        lastUrl = url;
        en.push(us);
        strings.push(us ? url.slice(us) : url);
      }
      if (!(flags & 8)) strings.push(e[1], e[2]);
      if (box) {
        // x, width and height as the change from the box before (a list's items line up).
        en.push(box[0] - bx, box[1] - ((elementTops[i] ?? 0) - sy), box[2] - bw, box[3] - bh);
        bx = box[0];
        bw = box[2];
        bh = box[3];
      }
      if (extra) ex.push(extra);
    }
    return {
      lt: joinParts(texts),
      ln,
      rl: roles,
      et: joinParts(strings),
      en,
      ex,
    };
  }

  return { WIRE_SEP: SEP, packWire };
}

export type Wire = ReturnType<typeof wire>;
