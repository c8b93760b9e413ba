/**
 * A deterministic extractor applied to served HTML, parsed in Node: the same fields, selectors and
 * types as `applyExtractor` reads from a rendered page (extractor-dom.ts), with no browser. Parsed by
 * cheerio on parse5, which builds the tree the HTML standard (and so Chromium) builds — implied
 * `<tbody>`, misnested tags — so selectors derived in the browser find the same elements; css-select
 * matches them. Text is read the way `innerText` reads it as far as HTML alone tells (no script,
 * style or hidden subtrees, block boundaries as spaces); whether that equals what the browser shows
 * on a given site is not assumed: the compile check compares both (static-read.ts).
 */
import { type CheerioAPI, loadBuffer } from 'cheerio';
import type { JsonObject } from '../store/ports.ts';
import { type Extractor, parseField } from './extractor.ts';

/** What a parsed node looks like to this file (domhandler's shape, structurally). */
interface DomNode {
  type: string;
  name?: string;
  data?: string;
  attribs?: Record<string, string>;
  children?: DomNode[];
}

const SKIP = new Set(['script', 'style', 'template', 'noscript', 'head']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'caption',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'option',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** An element's text as a reader sees it: hidden, script and style subtrees left out. */
export function textOf(root: DomNode): string {
  const parts: string[] = [];
  const walk = (n: DomNode) => {
    if (n.type === 'text') {
      parts.push(n.data ?? '');
      return;
    }
    if (n.type !== 'tag' && n.type !== 'script' && n.type !== 'style') return;
    const name = n.name ?? '';
    if (SKIP.has(name) || n.attribs?.hidden !== undefined) return;
    const block = BLOCK.has(name);
    if (block) parts.push(' ');
    for (const c of n.children ?? []) walk(c);
    if (block) parts.push(' ');
  };
  for (const c of root.children ?? []) walk(c);
  return squash(parts.join(''));
}

function absolute(raw: string | undefined, base: string): string | null {
  if (raw === undefined) return null;
  try {
    return new URL(raw.trim(), base).href;
  } catch {
    return raw;
  }
}

function read(el: DomNode | undefined, attr: string | undefined, base: string): string | null {
  if (!el) return null;
  const a = attr ?? 'text';
  const attribs = el.attribs ?? {};
  if (a === 'text') return textOf(el);
  if (a === 'href' || a === 'src') return absolute(attribs[a], base);
  if (a === 'value') return attribs.value ?? (el.name === 'textarea' ? textOf(el) : null);
  return attribs[a] ?? null;
}

/** A parsed page: the document and the URL its relative links resolve against. */
export interface ParsedPage {
  $: CheerioAPI;
  base: string;
}

/** Parses served bytes (the charset from the header, else sniffed as a browser does). */
export function parsePage(body: Buffer, url: string, contentType = ''): ParsedPage {
  const label = /charset=["']?([\w-]+)/i.exec(contentType)?.[1];
  const $ = loadBuffer(body, label ? { encoding: { transportLayerEncodingLabel: label } } : {});
  // A <base href> moves where relative links point, as in the browser.
  const baseHref = $('base[href]').first().attr('href');
  return { $, base: baseHref ? (absolute(baseHref, url) ?? url) : url };
}

function first($: CheerioAPI, root: DomNode | undefined, selector: string): DomNode | undefined {
  try {
    const found = root ? $(root as never).find(selector) : $(selector);
    return found.get(0) as DomNode | undefined;
  } catch {
    return undefined; // a selector css-select cannot read finds nothing, as in the page
  }
}

/** Raw field strings of the extractor on the parsed page: one record, or one per item. */
export function rawFields(
  page: ParsedPage,
  extractor: Extractor,
): { one: Record<string, string | null> } | { items: Record<string, string | null>[] } {
  const { $, base } = page;
  const fields = (root: DomNode | undefined) =>
    Object.fromEntries(
      Object.entries(extractor.fields).map(([k, f]) => {
        const el = f.selector === ':scope' ? root : first($, root, f.selector);
        return [k, read(el, f.attr, base)];
      }),
    );
  if (extractor.item) {
    let items: DomNode[] = [];
    try {
      items = $(extractor.item).toArray() as unknown as DomNode[];
    } catch {
      items = [];
    }
    return { items: items.map((el) => fields(el)) };
  }
  return { one: fields(undefined) };
}

/** `applyExtractor` on served HTML: `{ field: value }`, or `{ [list]: [...] }` with an item. */
export function readPage(page: ParsedPage, extractor: Extractor): JsonObject {
  const raw = rawFields(page, extractor);
  const typed = (rec: Record<string, string | null>): JsonObject =>
    Object.fromEntries(
      Object.entries(extractor.fields).map(([k, f]) => [k, parseField(rec[k] ?? null, f.type ?? 'string')]),
    );
  if ('items' in raw) return { [extractor.list ?? 'items']: raw.items.map(typed) };
  return typed(raw.one);
}

/**
 * Why a static read is not to be trusted as data, or undefined when every field has a value: a
 * field with nothing (a required one, or an optional one that script may have filled in) or a text
 * that does not read as its type, and a list with no items. Right or nothing: the browser reads it.
 */
export function staticMiss(page: ParsedPage, extractor: Extractor): string | undefined {
  const raw = rawFields(page, extractor);
  const check = (rec: Record<string, string | null>): string | undefined => {
    for (const [k, f] of Object.entries(extractor.fields)) {
      const v = rec[k] ?? null;
      if (v === null || v === '') return `${k} is empty in the served HTML`;
      if (parseField(v, f.type ?? 'string') === null) return `${k} does not read as a ${f.type}`;
    }
    return undefined;
  };
  if ('items' in raw) {
    if (raw.items.length === 0) return `no ${extractor.item} in the served HTML`;
    for (const rec of raw.items) {
      const why = check(rec);
      if (why) return why;
    }
    return undefined;
  }
  return check(raw.one);
}
