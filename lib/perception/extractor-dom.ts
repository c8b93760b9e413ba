/**
 * The in-page half of deterministic extractors: reading fields by CSS (relative to a repeating item
 * for lists), and finding, for values a model read off a page, the elements that show them and
 * selectors that reach them again. Both run as one self-contained function in the page.
 */
import { asDriver, callExpression, type PageInput } from '../browser/page-driver.ts';

export interface ExtractorSpec {
  item?: string;
  fields: Record<string, { selector: string; attr?: string }>;
}

/** Raw field strings (null: nothing matched): one record, or one per item. */
export type RawExtraction =
  | { one: Record<string, string | null> }
  | { items: Record<string, string | null>[] };

/**
 * Runs an in-page function in the main frame with a JSON argument, as an expression (transpiler
 * helpers defined), so the page compiles the source as the Playwright path always did.
 */
function inPage<A, R>(page: PageInput, fn: (arg: A) => R, arg: A): Promise<R> {
  return asDriver(page)
    .mainFrame()
    .evaluate<R>(callExpression(fn as (...args: never[]) => unknown, arg));
}

function runInPage(spec: ExtractorSpec): RawExtraction {
  function textOf(el: Element): string {
    return ((el as HTMLElement).innerText ?? el.textContent ?? '').replace(/\s+/g, ' ').trim();
  }
  function read(el: Element | null, attr: string | undefined): string | null {
    if (!el) return null;
    const a = attr ?? 'text';
    if (a === 'text') return textOf(el);
    if (a === 'href') return (el as HTMLAnchorElement).href || el.getAttribute('href');
    if (a === 'src')
      return (el as HTMLImageElement).currentSrc || (el as HTMLImageElement).src || el.getAttribute('src');
    if (a === 'value') return (el as HTMLInputElement).value ?? el.getAttribute('value');
    return el.getAttribute(a);
  }
  function fields(root: Element | Document): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const [k, f] of Object.entries(spec.fields)) {
      let el: Element | null = null;
      try {
        el = f.selector === ':scope' ? (root as Element) : root.querySelector(f.selector);
      } catch {
        el = null;
      }
      out[k] = read(el, f.attr);
    }
    return out;
  }
  if (spec.item) return { items: [...document.querySelectorAll(spec.item)].map((el) => fields(el)) };
  return { one: fields(document) };
}

export async function readExtraction(page: PageInput, spec: ExtractorSpec): Promise<RawExtraction> {
  return inPage(page, runInPage, spec);
}

/** A value to find: how to compare it with what an element shows. */
export interface SoughtValue {
  key: string;
  kind: 'string' | 'number' | 'boolean' | 'url';
  value: string | number | boolean;
}

export interface FieldSuggestion {
  selector: string;
  attr?: string;
}

export type Suggestion =
  | { ok: true; item?: string; fields: Record<string, FieldSuggestion> }
  | { ok: false; reason: string };

/**
 * Finds selectors for the values: `single` — one record from the whole page; `items` — records of
 * a list (the repeating item is found from where two records' values sit).
 */
function suggestInPage(arg: {
  single?: SoughtValue[];
  keys?: string[];
  items?: (SoughtValue | null)[][];
}): Suggestion {
  const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
  function textOf(el: Element): string {
    return norm((el as HTMLElement).innerText ?? el.textContent ?? '');
  }
  function num(s: string): number | undefined {
    const m = /-?\d[\d,]*(?:\.\d+)?/.exec(s);
    return m ? Number(m[0].replace(/,/g, '')) : undefined;
  }
  function bool(s: string): boolean | undefined {
    const t = s.toLowerCase();
    if (/^(true|yes|y|1|in stock|available|on|enabled|active)$/.test(t)) return true;
    if (/^(false|no|n|0|out of stock|sold out|unavailable|off|disabled|inactive)$/.test(t)) return false;
    return undefined;
  }
  /** Which attribute of `el` shows the value, if any. */
  function shows(el: Element, v: SoughtValue): string | undefined {
    if (v.kind === 'url') {
      if ((el as HTMLAnchorElement).href === v.value) return 'href';
      if ((el as HTMLImageElement).src === v.value) return 'src';
      return undefined;
    }
    const t = textOf(el);
    if (t.length > 300) return undefined;
    if (v.kind === 'number')
      return num(t) === v.value && t.replace(/[^\d]/g, '').length <= 24 ? 'text' : undefined;
    if (v.kind === 'boolean') return bool(t) === v.value ? 'text' : undefined;
    if (t === norm(String(v.value))) return 'text';
    if ((el as HTMLInputElement).value === v.value) return 'value';
    for (const a of ['content', 'title', 'alt', 'datetime']) if (el.getAttribute(a) === v.value) return a;
    return undefined;
  }
  /** The innermost elements under `root` that show the value. */
  function holders(root: Element, v: SoughtValue): { el: Element; attr: string }[] {
    const out: { el: Element; attr: string }[] = [];
    for (const el of [root, ...root.querySelectorAll('*')]) {
      if (/^(script|style|noscript|template)$/.test(el.localName)) continue;
      const attr = shows(el, v);
      if (!attr) continue;
      if (attr === 'text' && [...el.children].some((c) => shows(c, v) === 'text')) continue;
      out.push({ el, attr });
    }
    return out;
  }
  const generated = (s: string) => /\d{3,}|[a-f\d]{6,}|^(css|sc|jsx)-/i.test(s);
  function step(el: Element): string {
    const classes = [...el.classList].filter((c) => !generated(c)).slice(0, 2);
    return `${el.localName}${classes.map((c) => `.${CSS.escape(c)}`).join('')}`;
  }
  /** A selector whose first match under `root` is `el`. */
  function selectorFor(root: Element | Document, el: Element): string | undefined {
    if (el === root) return ':scope';
    const first = (s: string) => {
      try {
        return root.querySelector(s) === el;
      } catch {
        return false;
      }
    };
    if (root instanceof Document && el.id && !generated(el.id) && first(`#${CSS.escape(el.id)}`))
      return `#${CSS.escape(el.id)}`;
    const prop = el.getAttribute('itemprop');
    if (prop && first(`[itemprop="${prop}"]`)) return `[itemprop="${prop}"]`;
    for (const c of [...el.classList].filter((c) => !generated(c))) {
      const s = `${el.localName}.${CSS.escape(c)}`;
      if (first(s)) return s;
    }
    if (first(step(el))) return step(el);
    // A chain of steps upwards until its first match is the element.
    const chain: string[] = [];
    for (let n: Element | null = el; n && n !== root && n !== document.documentElement; n = n.parentElement) {
      const same = n.parentElement
        ? [...n.parentElement.children].filter((c) => c.localName === n!.localName)
        : [];
      chain.unshift(same.length > 1 ? `${step(n)}:nth-of-type(${same.indexOf(n) + 1})` : step(n));
      if (first(chain.join(' > '))) return chain.join(' > ');
    }
    return undefined;
  }
  const body = document.body;
  if (arg.single) {
    const fields: Record<string, FieldSuggestion> = {};
    for (const v of arg.single) {
      const found = holders(body, v);
      if (found.length === 0)
        return { ok: false, reason: `"${v.value}" (${v.key}) is not shown on the page` };
      // Several places show it (a title in <title> and <h1>): the first one the page shows.
      const h = found[0]!;
      const selector = selectorFor(document, h.el);
      if (!selector) return { ok: false, reason: `no selector reaches ${v.key}` };
      fields[v.key] = { selector, ...(h.attr !== 'text' ? { attr: h.attr } : {}) };
    }
    return { ok: true, fields };
  }
  const items = arg.items ?? [];
  const keys = arg.keys ?? [];
  const key = items[0]?.[0];
  if (!key) return { ok: false, reason: 'the list is empty or its first field is missing' };
  // The repeating item: where the first field's values of two records part ways.
  const first = holders(body, key).map((h) => h.el);
  let itemEls: Element[] = [];
  if (items.length === 1) itemEls = first.slice(0, 1).map((el) => el.parentElement ?? el);
  else {
    const other = items[1]![0];
    if (!other) return { ok: false, reason: 'the second record lacks the first field' };
    const second = holders(body, other).map((h) => h.el);
    let best: { depth: number; a: Element; b: Element } | undefined;
    for (const a of first)
      for (const b of second) {
        let lca: Element | null = a;
        while (lca && !lca.contains(b)) lca = lca.parentElement;
        if (!lca || lca === a || lca === b) continue;
        let ia: Element = a;
        while (ia.parentElement !== lca) ia = ia.parentElement!;
        let ib: Element = b;
        while (ib.parentElement !== lca) ib = ib.parentElement!;
        if (ia.localName !== ib.localName) continue;
        let depth = 0;
        for (let n: Element | null = lca; n; n = n.parentElement) depth++;
        if (!best || depth > best.depth) best = { depth, a: ia, b: ib };
      }
    if (!best) return { ok: false, reason: 'could not find the repeating element of the list' };
    itemEls = [best.a, best.b];
  }
  const proto = itemEls[0]!;
  const shared = [...proto.classList].filter(
    (c) => !generated(c) && itemEls.every((e) => e.classList.contains(c)),
  );
  const parent = proto.parentElement!;
  const parentSel = parent.id && !generated(parent.id) ? `#${CSS.escape(parent.id)}` : step(parent);
  const item = `${parentSel} > ${proto.localName}${shared
    .slice(0, 2)
    .map((c) => `.${CSS.escape(c)}`)
    .join('')}`;
  const fields: Record<string, FieldSuggestion> = {};
  for (const [i, name] of keys.entries()) {
    // The first record that has this field and whose item element we know.
    let done = false;
    for (const [r, rec] of items.entries()) {
      const v = rec[i];
      const root = itemEls[r];
      if (!v || !root) continue;
      const h = holders(root, v)[0];
      if (!h) continue;
      const selector = selectorFor(root, h.el);
      if (!selector) break;
      fields[name] = { selector, ...(h.attr !== 'text' ? { attr: h.attr } : {}) };
      done = true;
      break;
    }
    if (!done) return { ok: false, reason: `no selector inside the item reaches ${name}` };
  }
  return { ok: true, item, fields };
}

export async function suggestSelectors(
  page: PageInput,
  sought: { single?: SoughtValue[]; keys?: string[]; items?: (SoughtValue | null)[][] },
): Promise<Suggestion> {
  return inPage(page, suggestInPage, sought);
}
