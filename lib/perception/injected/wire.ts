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
   * Lines packed as the walk makes them: no tuple per line and no second pass over them, which on
   * a page's first read would run in the interpreter. Flags: 1 interactive, 2 in viewport.
   */
  function lineWriter() {
    const texts: string[] = [];
    const ln: number[] = [];
    const roles: string[] = [];
    const roleIndex = new Map<string, number>();
    // The top of the line of each element, in step with the elements.
    const elementTops: number[] = [];
    // A text line sits at its block's top, an element line at its own: each kind's tops run apart.
    let textTop = 0;
    let elTop = 0;
    let count = 0;
    let lastCode = -1;
    let lastDepth = -1;
    return {
      text(depth: number, text: string, flags: number, top: number): void {
        lastCode = ln.length;
        lastDepth = depth;
        ln.push(depth * 32 + flags, top - textTop);
        textTop = top;
        texts.push(text);
        count++;
      },
      element(depth: number, role: string, name: string, id: number, flags: number, top: number): void {
        let r = roleIndex.get(role);
        if (r === undefined) {
          r = roles.length;
          roles.push(role);
          roleIndex.set(role, r);
        }
        lastCode = ln.length;
        lastDepth = depth;
        ln.push(depth * 32 + flags + 8 + (id ? 16 : 0), top - elTop, r);
        elTop = top;
        if (id) elementTops.push(top);
        texts.push(name);
        count++;
      },
      /** The depth and text of the last line (a text line's, when the walk asks). */
      lastDepth: (): number => lastDepth,
      lastText: (): string => texts[texts.length - 1] ?? '',
      /** Adds inline text to the last line, a text line: it reads as one sentence. */
      joinText(more: string, inView: boolean): void {
        texts[texts.length - 1] = `${texts[texts.length - 1]} ${more}`;
        if (inView) ln[lastCode]! |= 2;
      },
      /** Marks the last line as the slot an iframe's content fills. */
      markFrame(): void {
        ln[lastCode]! |= 4;
      },
      count: (): number => count,
      done: () => ({ lt: joinParts(texts), ln, rl: roles, elementTops }),
    };
  }

  type LineWriter = ReturnType<typeof lineWriter>;

  /**
   * The lines and elements in their travelling form. `scrollY`: the frame's, when the walk read it;
   * an element's box top travels as the difference from its line's top, which is nearly always 0.
   */
  function finishWire(lines: LineWriter, elements: PageElement[], scrollY: number): WireParts {
    const { lt, ln, rl, elementTops } = lines.done();
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
      lt,
      ln,
      rl,
      et: joinParts(strings),
      en,
      ex,
    };
  }

  /** packWire of lines and elements kept as tuples (tests; the walk writes its lines as it goes). */
  function packWire(lines: PageLine[], elements: PageElement[], scrollY = 0): WireParts {
    const w = lineWriter();
    for (const l of lines) {
      if (l[3] & 8) w.element(l[0], l[1], l[5], l[2], l[3] & 7, l[4]);
      else w.text(l[0], l[1], l[3] & 7, l[4]);
    }
    return finishWire(w, elements, scrollY);
  }

  return { WIRE_SEP: SEP, lineWriter, finishWire, packWire };
}

export type Wire = ReturnType<typeof wire>;
