import type { PackedElement, PackedExtra, RawCollect, RawLine, WireCollect } from './injected/payload.ts';

/**
 * Reads the walk's lines and elements back from the compact form they travel in (injected/wire.ts
 * packs them): one split per string, one pass over each number array, into the shapes tree.ts
 * builds from. Indexed loops, no destructuring: this runs cold on a process's first read.
 */
const SEP = '\x7f';

function unpackElements(et: string, en: number[], ex: PackedExtra[]): PackedElement[] {
  const out: PackedElement[] = [];
  if (en.length === 0) return out;
  const parts = et.split(SEP);
  let p = 0;
  let x = 0;
  let extraAt = 0;
  let id = 0;
  let xpath = '';
  let url = '';
  while (x < en.length) {
    id += en[x]! + 1;
    const flags = en[x + 1]!;
    const xs = en[x + 2]!;
    x += 3;
    const tag = parts[p]!;
    xpath = xs ? xpath.slice(0, xs) + parts[p + 1]! : parts[p + 1]!;
    p += 2;
    let shownUrl: string | 0 = 0;
    if (flags & 64) {
      const us = en[x++]!;
      url = us ? url.slice(0, us) + parts[p]! : parts[p]!;
      p++;
      shownUrl = url;
    }
    let role = '';
    let name = '';
    if (!(flags & 8)) {
      role = parts[p]!;
      name = parts[p + 1]!;
      p += 2;
    }
    let box: [number, number, number, number] | 0 = 0;
    if (flags & 32) {
      box = [en[x]!, en[x + 1]!, en[x + 2]!, en[x + 3]!];
      x += 4;
    }
    const extra = flags & 16 ? ex[extraAt++]! : 0;
    out.push([id, role, name, tag, xpath, flags & 15, shownUrl, box, extra]);
  }
  return out;
}

function unpackLines(lt: string, ln: number[], roles: string[], elements: PackedElement[]): RawLine[] {
  const out: RawLine[] = [];
  if (ln.length === 0) return out;
  const parts = lt.split(SEP);
  let p = 0;
  let e = 0;
  let textTop = 0;
  let elTop = 0;
  for (let i = 0; i < ln.length; ) {
    const code = ln[i]!;
    const id = code & 16 ? elements[e++]![0] : 0;
    if (code & 8) {
      elTop += ln[i + 1]!;
      // tree.ts reads an element line as `role\0name`.
      out.push([code >> 5, `${roles[ln[i + 2]!]!}\u0000${parts[p++]!}`, id, code & 7, elTop]);
      i += 3;
    } else {
      textTop += ln[i + 1]!;
      out.push([code >> 5, parts[p++]!, id, code & 7, textTop]);
      i += 2;
    }
  }
  return out;
}

/** The RawCollect a WireCollect carries. */
export function unpack(wire: WireCollect): RawCollect {
  const elements = unpackElements(wire.et, wire.en, wire.ex);
  const raw: RawCollect = {
    url: wire.url,
    title: wire.title,
    lines: unpackLines(wire.lt, wire.ln, wire.rl, elements),
    elements,
    frames: wire.frames,
    fresh: wire.fresh,
    viewport: wire.viewport,
    counts: wire.counts,
  };
  if (wire.error !== undefined) raw.error = wire.error;
  if (wire.timing) raw.timing = wire.timing;
  if (wire.sentAt !== undefined) raw.sentAt = wire.sentAt;
  if (wire.watch !== undefined) raw.watch = wire.watch;
  return raw;
}
