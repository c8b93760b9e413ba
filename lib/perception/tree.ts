import type { RawCollect } from './injected/payload.ts';
import type { FrameInfo, SnapshotElement } from './types.ts';

export { assemble, type IdMapper } from './assemble.ts';

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

const STATE_WORDS: [keyof SnapshotElement['states'], string, string | undefined][] = [
  ['disabled', 'disabled', undefined],
  ['expanded', 'expanded', 'collapsed'],
  ['selected', 'selected', undefined],
  ['required', 'required', undefined],
  ['readonly', 'readonly', undefined],
];

const quote = (s: string) => `"${s.replace(/"/g, '\\"')}"`;

/** `[12] textbox: Email value="ada@example.com" required` — what a model reads for one element. */
/** Indents by depth, made once: a big page's lines repeat a handful of them thousands of times. */
const INDENTS: string[] = [];
const indentOf = (depth: number): string => (INDENTS[depth] ??= '  '.repeat(depth));

export function formatLine(line: TreeLine, el: SnapshotElement | undefined): string {
  const indent = indentOf(line.depth);
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
