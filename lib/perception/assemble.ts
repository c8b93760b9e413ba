import type { PackedExtra } from './injected/payload.ts';
import type { FrameCollect, TreeLine } from './tree.ts';
import type { SnapshotElement } from './types.ts';

/**
 * Reads every frame's packed lines and elements (injected/wire.ts) straight into the tree's lines
 * and elements: one split per string, one pass over each frame's numbers, no tuples in between.
 * This runs cold on a process's first read, where every object made is also an object the young
 * generation copies: indexed loops, no destructuring, nothing built twice.
 */

/** The separator the page joins strings with (wire.ts). */
const SEP = '\x7f';

const intersects = (b: { x: number; y: number; width: number; height: number }, c: FrameCollect['clip']) =>
  b.width * b.height > 0 && b.x < c.x + c.w && b.x + b.width > c.x && b.y < c.y + c.h && b.y + b.height > c.y;

/**
 * The frame's origin as the page wrote it (`location.origin`: "file://" for a file: page, where
 * URL.origin says "null"), parsed once per frame URL: a big page's links would each parse it again.
 */
let lastOrigin = { url: '', origin: '' };
const originOf = (url: string): string => {
  if (url === lastOrigin.url) return lastOrigin.origin;
  let origin = '';
  try {
    const parsed = new URL(url);
    origin = parsed.protocol === 'file:' ? 'file://' : parsed.origin === 'null' ? '' : parsed.origin;
  } catch {
    // no origin: links stay as the page wrote them
  }
  lastOrigin = { url, origin };
  return origin;
};

function withExtra(el: SnapshotElement, extra: PackedExtra, frameIndex: number): void {
  if (extra.states) el.states = extra.states as SnapshotElement['states'];
  if (extra.value !== undefined) el.value = extra.value;
  if (extra.placeholder) el.placeholder = extra.placeholder;
  if (extra.label) el.label = extra.label;
  if (extra.inputType) el.inputType = extra.inputType;
  if (extra.dialog) el.dialog = extra.dialog;
  if (extra.options) el.options = extra.options;
  if (extra.facts) {
    const { group, ...rest } = extra.facts;
    // Group numbers are per frame document: keep frames' forms apart.
    el.facts = group ? { ...rest, form: frameIndex * 100_000 + group } : rest;
  }
}

/** Maps a frame's own element id to the page-wide one (allocating new ids in reading order). */
export type IdMapper = (frameIndex: number, localId: number) => number;

/**
 * Splices every frame's lines under its <iframe> line and converts coordinates to the top-level
 * page, so the result reads as one tree with one id space.
 */
export function assemble(
  frames: FrameCollect[],
  idFor: IdMapper = (_f, local) => local,
): { lines: TreeLine[]; elements: SnapshotElement[]; lineElements: (SnapshotElement | undefined)[] } {
  const elements: SnapshotElement[] = [];
  /** The element of each line (undefined for text and unaddressed lines): formatLine's input. */
  const lineElements: (SnapshotElement | undefined)[] = [];
  const childrenOf = new Map<number, FrameCollect[]>();
  for (const f of frames) {
    if (f.info.parent === undefined) continue;
    const list = childrenOf.get(f.info.parent) ?? [];
    list.push(f);
    childrenOf.set(f.info.parent, list);
  }
  const lines: TreeLine[] = [];
  const main = frames.find((f) => f.info.parent === undefined);
  if (!main) return { lines, elements, lineElements };
  const topScroll = main.raw.viewport.scrollY;

  const emit = (frame: FrameCollect, baseDepth: number) => {
    const raw = frame.raw;
    const info = frame.info;
    const frameIndex = info.index;
    const isMain = info.parent === undefined;
    const prefix = isMain ? '' : info.xpath;
    const ox = info.offset.x;
    const oy = info.offset.y;
    const clip = frame.clip;
    const kids = childrenOf.get(frameIndex);
    const texts = raw.lt.split(SEP);
    const strs = raw.et.split(SEP);
    const ln = raw.ln;
    const en = raw.en;
    const roles = raw.rl;
    const extras = raw.ex;
    // Cursors: into the texts, the element strings, the element numbers, the extras.
    let p = 0;
    let q = 0;
    let x = 0;
    let extraAt = 0;
    // Running values each entry is sent as the difference from.
    let localId = 0;
    let xpath = '';
    let url = '';
    let textTop = 0;
    let elTop = 0;
    let bx = 0;
    let bw = 0;
    let bh = 0;
    const sy = Math.round(raw.viewport.scrollY);
    const stack: number[] = [];
    for (let i = 0, lineIndex = 0; i < ln.length; lineIndex++) {
      const code = ln[i]!;
      let text: string;
      let top: number;
      let role = '';
      let name = '';
      if (code & 8) {
        elTop += ln[i + 1]!;
        top = elTop;
        role = roles[ln[i + 2]!]!;
        name = texts[p++]!;
        // An element line reads `role\0name` until formatLine lays it out.
        text = `${role}\u0000${name}`;
        i += 3;
      } else {
        textTop += ln[i + 1]!;
        top = textTop;
        text = texts[p++]!;
        i += 2;
      }
      const d = baseDepth + (code >> 5);
      while (stack.length > 0 && lines[stack[stack.length - 1]!]!.depth >= d) stack.pop();
      let el: SnapshotElement | undefined;
      if (code & 16) {
        // The walk sends an element right before the line carrying its id: the two run in step.
        const flags = en[x++]!;
        localId += flags & 128 ? en[x++]! + 1 : 1;
        const xs = en[x++]!;
        const tag = strs[q]!;
        xpath = xs ? xpath.slice(0, xs) + strs[q + 1]! : strs[q + 1]!;
        q += 2;
        let elUrl = '';
        if (flags & 64) {
          const us = en[x++]!;
          url = us ? url.slice(0, us) + strs[q]! : strs[q]!;
          q++;
          elUrl = url;
        }
        let elRole = role;
        let elName = name;
        if (!(flags & 8)) {
          elRole = strs[q]!;
          elName = strs[q + 1]!;
          q += 2;
        }
        let box: SnapshotElement['box'];
        if (flags & 32) {
          bx += en[x]!;
          bw += en[x + 2]!;
          bh += en[x + 3]!;
          box = { x: bx + ox, y: en[x + 1]! + top - sy + oy, width: bw, height: bh };
          x += 4;
        }
        el = {
          id: idFor(frameIndex, localId),
          role: elRole,
          name: elName,
          tag,
          frame: frameIndex,
          locator: { xpath: prefix ? `${prefix} >> ${xpath}` : xpath, role: elRole, name: elName },
          inViewport: box ? (flags & 1) === 1 && intersects(box, clip) : false,
          interactive: (flags & 2) === 2,
          states: {},
        };
        if (box) el.box = box;
        if (elUrl) el.url = elUrl.charCodeAt(0) === 47 ? originOf(raw.url) + elUrl : elUrl;
        if (flags & 4) el.scrollable = true;
        if (flags & 16) withExtra(el, extras[extraAt++]!, frameIndex);
      }
      const flags = code & 7;
      lines.push({
        depth: d,
        text,
        id: el ? el.id : 0,
        interactive: (flags & 1) === 1,
        inViewport: el ? el.inViewport : (flags & 2) === 2 && clip.w > 0,
        top: isMain ? top : oy + topScroll + (top - raw.viewport.scrollY),
        parent: stack.length > 0 ? stack[stack.length - 1]! : -1,
      });
      lineElements.push(el);
      stack.push(lines.length - 1);
      // Elements are listed in reading order, frames included, so "the second X" means what it says.
      if (el) elements.push(el);
      if (flags & 4 && kids) for (const kid of kids) if (kid.parentLine === lineIndex) emit(kid, d + 1);
    }
  };
  emit(main, 0);
  return { lines, elements, lineElements };
}
