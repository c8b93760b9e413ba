import type { PackedElement, RawCollect, RawLine } from './injected/payload.ts';
import type { FrameInfo, SnapshotElement } from './types.ts';

/** A line of the finished tree before selection: one element or one run of text. */
export interface TreeLine {
  depth: number;
  /** `role\0name` for element lines, plain text otherwise. */
  text: string;
  id: number;
  interactive: boolean;
  inViewport: boolean;
  /** Top edge in top-level document coordinates (for chunking). */
  top: number;
  parent: number;
}

export interface FrameCollect {
  raw: RawCollect;
  info: FrameInfo;
  /** Visible rectangle of this frame, in top-level viewport coordinates. */
  clip: { x: number; y: number; w: number; h: number };
  /** For child frames: which frame slot line of the parent they fill. */
  parentLine?: number;
}

const intersects = (b: { x: number; y: number; width: number; height: number }, c: FrameCollect['clip']) =>
  b.width * b.height > 0 && b.x < c.x + c.w && b.x + b.width > c.x && b.y < c.y + c.h && b.y + b.height > c.y;

/**
 * The element of `packed`, whose xpath is `xpath` (decoded by the caller) and whose line reads
 * `lineText` (`role\0name`, where flag 8 takes both from).
 */
function toElement(
  packed: PackedElement,
  frame: FrameCollect,
  prefix: string,
  id: number,
  xpath: string,
  lineText: string,
): SnapshotElement {
  // Indexed, not destructured: array destructuring runs the iterator protocol in code not yet
  // optimised, which is all of it on a process's first read.
  const packedRole = packed[1];
  const packedName = packed[2];
  const tag = packed[3];
  const flags = packed[5];
  const url = packed[6];
  const rawBox = packed[7];
  const extra = packed[8];
  let role = packedRole;
  let name = packedName;
  if (flags & 8) {
    const sep = lineText.indexOf('\u0000');
    role = lineText.slice(0, sep);
    name = lineText.slice(sep + 1);
  }
  const { x, y } = frame.info.offset;
  const box = rawBox
    ? { x: rawBox[0] + x, y: rawBox[1] + y, width: rawBox[2], height: rawBox[3] }
    : undefined;
  const el: SnapshotElement = {
    id,
    role,
    name,
    tag,
    frame: frame.info.index,
    locator: { xpath: prefix ? `${prefix} >> ${xpath}` : xpath, role, name },
    inViewport: box ? (flags & 1) === 1 && intersects(box, frame.clip) : false,
    interactive: (flags & 2) === 2,
    states: (extra ? (extra.states ?? {}) : {}) as SnapshotElement['states'],
  };
  if (box) el.box = box;
  if (url) el.url = url.startsWith('/') ? originOf(frame.raw.url) + url : url;
  if (flags & 4) el.scrollable = true;
  if (extra) {
    if (extra.value !== undefined) el.value = extra.value;
    if (extra.placeholder) el.placeholder = extra.placeholder;
    if (extra.label) el.label = extra.label;
    if (extra.inputType) el.inputType = extra.inputType;
    if (extra.dialog) el.dialog = extra.dialog;
    if (extra.options) el.options = extra.options;
    if (extra.facts) {
      const { group, ...rest } = extra.facts;
      // Group numbers are per frame document: keep frames' forms apart.
      el.facts = group ? { ...rest, form: frame.info.index * 100_000 + group } : rest;
    }
  }
  return el;
}

/** The frame's origin, parsed once per frame URL: a big page's links would each parse it again. */
let lastOrigin = { url: '', origin: '' };
const originOf = (url: string): string => {
  if (url === lastOrigin.url) return lastOrigin.origin;
  let origin = '';
  try {
    origin = new URL(url).origin;
  } catch {
    // no origin: links stay as the page wrote them
  }
  lastOrigin = { url, origin };
  return origin;
};

/** Every element of a frame by id, with its xpath decoded. */
function decodeAll(packedList: PackedElement[]): Map<number, [PackedElement, string]> {
  const out = new Map<number, [PackedElement, string]>();
  let last = '';
  for (const packed of packedList) {
    const x = packed[4];
    last = typeof x === 'string' ? x : last.slice(0, x[0]) + x[1];
    out.set(packed[0], [packed, last]);
  }
  return out;
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
    const prefix = frame.info.parent === undefined ? '' : frame.info.xpath;
    const packedList = frame.raw.elements;
    // The walk sends an element right before the line carrying its id, so the two lists run in
    // step; each xpath is decoded from the one before it in that order.
    let next = 0;
    let lastXpath = '';
    let byId: Map<number, [PackedElement, string]> | undefined;
    const kids = childrenOf.get(frame.info.index) ?? [];
    const stack: number[] = [];
    frame.raw.lines.forEach((raw: RawLine, i) => {
      const depth = raw[0];
      const text = raw[1];
      const id = raw[2];
      const flags = raw[3];
      const top = raw[4];
      const d = baseDepth + depth;
      while (stack.length > 0 && (lines[stack[stack.length - 1]!]?.depth ?? -1) >= d) stack.pop();
      let el: SnapshotElement | undefined;
      if (id) {
        let packed = packedList[next];
        let xpath: string | undefined;
        if (packed && packed[0] === id) {
          next++;
          const x = packed[4];
          xpath = lastXpath = typeof x === 'string' ? x : lastXpath.slice(0, x[0]) + x[1];
        } else {
          // Not in step (no walk of ours sends that): look it up.
          byId ??= decodeAll(packedList);
          [packed, xpath] = byId.get(id) ?? [undefined, undefined];
        }
        if (packed && xpath !== undefined)
          el = toElement(packed, frame, prefix, idFor(frame.info.index, id), xpath, text);
      }
      const docTop =
        frame.info.parent === undefined
          ? top
          : frame.info.offset.y + topScroll + (top - frame.raw.viewport.scrollY);
      lines.push({
        depth: d,
        text,
        id: el ? el.id : 0,
        interactive: (flags & 1) === 1,
        inViewport: el ? el.inViewport : (flags & 2) === 2 && frame.clip.w > 0,
        top: docTop,
        parent: stack.length > 0 ? stack[stack.length - 1]! : -1,
      });
      lineElements.push(el);
      const index = lines.length - 1;
      stack.push(index);
      // Elements are listed in reading order, frames included, so "the second X" means what it says.
      if (el) elements.push(el);
      if (flags & 4) for (const kid of kids.filter((k) => k.parentLine === i)) emit(kid, d + 1);
    });
  };
  emit(main, 0);
  return { lines, elements, lineElements };
}

const STATE_WORDS: [keyof SnapshotElement['states'], string, string | undefined][] = [
  ['disabled', 'disabled', undefined],
  ['expanded', 'expanded', 'collapsed'],
  ['selected', 'selected', undefined],
  ['required', 'required', undefined],
  ['readonly', 'readonly', undefined],
];

const quote = (s: string) => `"${s.replace(/"/g, '\\"')}"`;

/** `[12] textbox: Email value="ada@example.com" required` — what a model reads for one element. */
export function formatLine(line: TreeLine, el: SnapshotElement | undefined): string {
  const indent = '  '.repeat(line.depth);
  const sep = line.text.indexOf('\u0000');
  if (sep < 0) return indent + line.text;
  const role = line.text.slice(0, sep);
  const name = line.text.slice(sep + 1);
  let out = `${indent}${line.id ? `[${line.id}] ` : ''}${role}${name ? `: ${name}` : ''}`;
  if (!el) return out;
  if (el.value !== undefined && el.value !== name) out += ` value=${quote(el.value)}`;
  if (el.placeholder && el.placeholder !== name) out += ` placeholder=${quote(el.placeholder)}`;
  const checked = el.states.checked;
  if (checked !== undefined) out += checked === 'mixed' ? ' mixed' : checked ? ' checked' : ' unchecked';
  for (const words of STATE_WORDS) {
    const v = el.states[words[0]];
    if (v === true) out += ` ${words[1]}`;
    else if (v === false && words[2]) out += ` ${words[2]}`;
  }
  if (el.options && el.options.length > 0) {
    const shown = el.options.slice(0, 15);
    const more = el.options.length - shown.length;
    out += ` options=[${shown.join(' | ')}${more > 0 ? ` | +${more} more` : ''}]`;
  }
  if (el.scrollable && role !== 'scrollable') out += ' scrollable';
  return out;
}

/** Tokens a model will count (o200k-like); outlines tokenize at about 3 chars a token (numbers, ids, indents). */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 3);

export interface Selection {
  keep: boolean[];
  omitted: number;
  omittedInteractive: number;
}

/** Keeps every line whose top lies in the chunk's band of the page, plus their ancestors. */
export function selectChunk(lines: TreeLine[], chunk: number, viewportHeight: number): Selection {
  const lo = chunk * viewportHeight;
  const hi = lo + viewportHeight;
  const keep = lines.map((l) => l.top >= lo && l.top < hi);
  return withAncestors(lines, keep);
}

/**
 * Instruction words that say nothing about which line matters: they (and the fragments of an
 * address, like "com") occur in most lines of a big page and would crowd out the controls the
 * task is about.
 */
const NOISE = new Set([
  'the',
  'and',
  'into',
  'onto',
  'from',
  'with',
  'for',
  'then',
  'your',
  'this',
  'that',
  'field',
  'button',
  'box',
  'input',
  'link',
  'page',
  'click',
  'type',
  'enter',
  'press',
  'fill',
  'select',
  'choose',
  'tap',
  'com',
  'www',
  'net',
  'org',
  'http',
  'https',
]);
/** Controls a task types into or sets: few on any page, and what act is most often after. */
const FORM_ROLES = new Set([
  'textbox',
  'searchbox',
  'combobox',
  'spinbutton',
  'checkbox',
  'radio',
  'switch',
  'slider',
  'listbox',
]);
const roleOfLine = (l: TreeLine): string => {
  const sep = l.text.indexOf('\u0000');
  return sep < 0 ? '' : l.text.slice(0, sep);
};

/**
 * Fits the tree into a token budget, most useful lines first: keyword matches, then interactive
 * elements in the viewport, then form controls and buttons anywhere, then other interactive ones, then visible
 * text, then the rest. A kept line always brings its ancestors so the indentation still means
 * something, and an unnamed form control brings the text line just before it (its visible label:
 * a bare "[518] textbox" tells a model nothing).
 */
export function selectBudget(
  lines: TreeLine[],
  rendered: string[],
  budget: number,
  keywords: string[] = [],
): Selection {
  const words = keywords.map((k) => k.toLowerCase()).filter((k) => k.length > 2 && !NOISE.has(k));
  const priority = (l: TreeLine): number => {
    let p = 0;
    const lower = l.text.toLowerCase();
    if (words.some((w) => lower.includes(w))) p += 8;
    if (l.interactive) p += 4;
    if (l.inViewport) p += 3;
    const role = roleOfLine(l);
    if (l.interactive && FORM_ROLES.has(role)) p += 2;
    else if (l.interactive && role === 'button') p += 1;
    if (role === 'heading' || /^h[1-6]$/.test(role)) p += 2;
    return p;
  };
  const order = lines.map((l, i) => [priority(l), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  const keep = new Array<boolean>(lines.length).fill(false);
  let used = 0;
  for (const [, i] of order) {
    if (keep[i]) continue;
    // Cost of this line plus any ancestors not yet kept.
    let cost = 0;
    const chain: number[] = [];
    const add = (from: number) => {
      for (let j = from; j >= 0 && !keep[j] && !chain.includes(j); j = lines[j]!.parent) {
        chain.push(j);
        cost += estimateTokens(rendered[j]!) + 0.25;
      }
    };
    add(i);
    const line = lines[i]!;
    const prev = lines[i - 1];
    if (line.interactive && prev && !keep[i - 1] && FORM_ROLES.has(roleOfLine(line))) {
      const unnamed = line.text.endsWith('\u0000');
      if (unnamed && !prev.text.includes('\u0000')) add(i - 1);
    }
    if (used + cost > budget) continue;
    used += cost;
    for (const j of chain) keep[j] = true;
  }
  return count(lines, keep);
}

function withAncestors(lines: TreeLine[], keep: boolean[]): Selection {
  for (let i = 0; i < lines.length; i++) {
    if (!keep[i]) continue;
    for (let j = lines[i]!.parent; j >= 0 && !keep[j]; j = lines[j]!.parent) keep[j] = true;
  }
  return count(lines, keep);
}

function count(lines: TreeLine[], keep: boolean[]): Selection {
  let omitted = 0;
  let omittedInteractive = 0;
  lines.forEach((l, i) => {
    if (keep[i]) return;
    omitted++;
    if (l.interactive) omittedInteractive++;
  });
  return { keep, omitted, omittedInteractive };
}
