/**
 * Locator candidates: several independent ways to find one element again on a later visit (a
 * compiled workflow step), and finding them on a live page. Read only when asked for one element,
 * never during a snapshot, so perception's hot path is untouched.
 *
 * A candidate says where to look; it never says "this is it". The caller checks that what a
 * candidate hit is the only match and still has the role and name it had when it was recorded.
 */
import { asDriver, type PageInput } from '../browser/page-driver.ts';
import { xpaths } from './injected/xpath.ts';
import { findElementByXPath } from './locate.ts';
import type { DurableLocator, Snapshot } from './types.ts';

/** Same shape as the workflow document's `LocatorCandidate` (perception cannot import stage 9). */
export type PageCandidate =
  | { kind: 'xpath'; value: string }
  | { kind: 'role'; role: string; name: string }
  | { kind: 'text'; text: string; tag?: string }
  | { kind: 'css'; value: string };

/** What the page says about one element, beyond role and name. */
export interface ElementAttributes {
  tag: string;
  id?: string;
  name?: string;
  /** `data-testid` / `data-test` / `data-qa`, whichever is present first. */
  testId?: { attr: string; value: string };
  ariaLabel?: string;
  /** Its own visible text, when short enough to find it by. */
  text?: string;
  /** CSS selectors (built from the above) that match only this element in its document. */
  unique: string[];
  /** The text matches only this element of its tag. */
  uniqueText: boolean;
}

/**
 * Ids that a framework or build made up (React's `:r1:`, `ember123`, hashes, counters) change on
 * the next deploy or page load; a candidate on one would point nowhere, or somewhere else.
 */
export function looksGenerated(id: string): boolean {
  if (id.length > 40 || /\s/.test(id)) return true;
  if (/^:|^(?:ember|ext-gen|mui-|radix-|headlessui-|react-|rc-|yui_|gwt-|j_id)/i.test(id)) return true;
  if (/\d{3,}/.test(id)) return true;
  // A run of hex with digits in it ("btn-8f3a1c", "a1b2c3d4") is a hash, not a word.
  return /(?=[a-f\d]*\d)(?=[a-f\d]*[a-f])[a-f\d]{5,}/i.test(id);
}

const cssString = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;
const cssIdent = (s: string) => (/^[A-Za-z_][\w-]*$/.test(s) ? `#${s}` : `[id=${cssString(s)}]`);

/** The CSS selectors an element's stable attributes give, most durable first. */
export function attributeSelectors(a: RawAttributes): string[] {
  const out: string[] = [];
  if (a.testId) out.push(`[${a.testId.attr}=${cssString(a.testId.value)}]`);
  if (a.id && !looksGenerated(a.id)) out.push(cssIdent(a.id));
  if (a.name) out.push(`${a.tag}[name=${cssString(a.name)}]`);
  if (a.ariaLabel) out.push(`${a.tag}[aria-label=${cssString(a.ariaLabel)}]`);
  return out;
}

/**
 * An element's candidates in the order a replay tries them: stable attributes (what a site's own
 * tests rely on), role + accessible name, visible text, and last the positional XPath chain, the
 * first thing a redesign breaks. Inside an iframe or shadow root only the chain can reach it.
 */
export function candidatesFrom(locator: DurableLocator, attrs?: ElementAttributes): PageCandidate[] {
  const out: PageCandidate[] = [];
  const nested = locator.xpath.includes(' >> ');
  if (attrs && !nested) for (const value of attrs.unique) out.push({ kind: 'css', value });
  if (!nested && locator.role && locator.name.trim())
    out.push({ kind: 'role', role: locator.role, name: locator.name });
  if (attrs?.text && attrs.uniqueText && !nested && attrs.text !== locator.name)
    out.push({ kind: 'text', text: attrs.text, tag: attrs.tag });
  out.push({ kind: 'xpath', value: locator.xpath });
  return out;
}

type RawAttributes = Omit<ElementAttributes, 'unique' | 'uniqueText'>;

/** Runs in the page on the element itself (self-contained: no named inner functions). */
function readInPage(el: Element): RawAttributes {
  const tag = el.localName;
  const get = (n: string) => el.getAttribute(n)?.trim() || undefined;
  const testAttr = ['data-testid', 'data-test', 'data-qa', 'data-test-id'].find((n) => get(n));
  const raw = ((el as HTMLElement).innerText ?? el.textContent ?? '').replace(/\s+/g, ' ').trim();
  const text = raw && raw.length <= 80 && !/^(input|select|textarea)$/.test(tag) ? raw : undefined;
  return {
    tag,
    ...(get('id') ? { id: get('id') } : {}),
    ...(get('name') ? { name: get('name') } : {}),
    ...(testAttr ? { testId: { attr: testAttr, value: get(testAttr)! } } : {}),
    ...(get('aria-label') ? { ariaLabel: get('aria-label') } : {}),
    ...(text ? { text } : {}),
  };
}

/** Runs in the page: which selectors match only this element in its document, and is its text unique. */
function uniquenessInPage(
  el: Element,
  arg: { selectors: string[]; text?: string },
): { unique: string[]; uniqueText: boolean } {
  const root = el.getRootNode() as Document | ShadowRoot;
  const unique = arg.selectors.filter((s) => {
    try {
      const all = root.querySelectorAll(s);
      return all.length === 1 && all[0] === el;
    } catch {
      return false;
    }
  });
  // innerText lays out each element: on a page with thousands of links, give the text candidate up.
  const peers = arg.text ? root.querySelectorAll(el.localName) : [];
  const same =
    arg.text && peers.length <= 1500
      ? [...peers].filter(
          (o) => ((o as HTMLElement).innerText ?? '').replace(/\s+/g, ' ').trim() === arg.text,
        ).length
      : 0;
  return { unique, uniqueText: same === 1 };
}

/** The candidates of the element a durable locator points at on the live page. */
export async function readCandidates(page: PageInput, locator: DurableLocator): Promise<PageCandidate[]> {
  if (locator.xpath.includes(' >> ')) return candidatesFrom(locator);
  const found = await findElementByXPath(page, locator.xpath);
  if ('error' in found) return candidatesFrom(locator);
  try {
    const raw = await found.element.call(readInPage);
    const checked = await found.element.call(uniquenessInPage, {
      selectors: attributeSelectors(raw),
      ...(raw.text ? { text: raw.text } : {}),
    });
    return candidatesFrom(locator, { ...raw, ...checked });
  } catch {
    return candidatesFrom(locator);
  } finally {
    await found.element.dispose();
  }
}

// ── Finding a candidate again ─────────────────────────────────────────────────────────────────

export interface CandidateHit {
  /** How many elements the candidate matches (only 1 is usable). */
  count: number;
  /** The element's durable locator with the role and name it has now, when count is 1. */
  locator?: DurableLocator;
}

type QueryCandidate = Exclude<PageCandidate, { kind: 'role' }>;

/**
 * Runs in the page's main document: how many elements a css / text / xpath candidate matches and,
 * for one, its XPath chain written as perception writes it (`chain`). CSS and text reach into open
 * shadow roots (as the Playwright locators this replaces did); an XPath stays in the document.
 */
function queryInPage(c: QueryCandidate, chain: (el: Element) => string): { count: number; xpath?: string } {
  let hits: Element[] = [];
  if (c.kind === 'xpath') {
    const r = document.evaluate(c.value, document, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
    for (let i = 0; i < r.snapshotLength; i++) {
      const n = r.snapshotItem(i);
      if (n instanceof Element) hits.push(n);
    }
  } else {
    const roots: (Document | ShadowRoot)[] = [document];
    for (let i = 0; i < roots.length; i++)
      for (const el of roots[i]!.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
    const selector = c.kind === 'css' ? c.value : (c.tag ?? '*');
    for (const root of roots) hits.push(...root.querySelectorAll(selector));
    if (c.kind === 'text') {
      const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
      const want = norm(c.text);
      hits = hits.filter(
        (el) => !/^(script|style|head|title)$/.test(el.localName) && norm(el.textContent ?? '') === want,
      );
    }
  }
  return hits.length === 1 ? { count: 1, xpath: chain(hits[0]!) } : { count: hits.length };
}

const queryExpression = (c: QueryCandidate) =>
  `(() => { const __name = (f) => f; const x = (${xpaths.toString()})(); return (${queryInPage.toString()})(${JSON.stringify(c)}, x.xpathChain); })()`;

/**
 * Role and name as perception reads them (the words the candidates were recorded with): elements
 * of the main frame, shadow roots included; a fresh read, so nothing stale is counted.
 */
async function mainFrameRead(page: PageInput): Promise<Snapshot['elements']> {
  const { snapshot } = await import('./snapshot.ts');
  const read = await snapshot(page, { text: false, frames: false });
  return read.elements.filter((e) => e.frame === 0);
}

/**
 * What one candidate hits on the page now. Chains across iframes / shadow roots are walked by
 * perception's resolver; role candidates are counted on a fresh read; the rest are queried in the
 * page. Errors (a selector the page's CSS engine rejects) count as no match.
 */
export async function resolveCandidate(input: PageInput, c: PageCandidate): Promise<CandidateHit> {
  const page = asDriver(input);
  try {
    if (c.kind === 'xpath' && c.value.includes(' >> ')) {
      const found = await findElementByXPath(page, c.value);
      if ('error' in found) return { count: 0 };
      await found.element.dispose();
      // Identity of a nested element is read by the caller's snapshot; positional hits are single.
      return { count: 1, locator: { xpath: c.value, role: '', name: '' } };
    }
    if (c.kind === 'role') {
      const same = (await mainFrameRead(page)).filter((e) => e.role === c.role && e.name === c.name);
      if (same.length !== 1) return { count: same.length };
      // A role candidate matched its exact role and name: that is who the element is.
      return { count: 1, locator: { xpath: same[0]!.locator.xpath, role: c.role, name: c.name } };
    }
    const hit = await page.mainFrame().evaluate<{ count: number; xpath?: string }>(queryExpression(c));
    if (hit.count !== 1 || !hit.xpath) return { count: hit.count };
    const seen = (await mainFrameRead(page)).find((e) => e.locator.xpath === hit.xpath);
    return { count: 1, locator: { xpath: hit.xpath, role: seen?.role ?? '', name: seen?.name ?? '' } };
  } catch {
    return { count: 0 };
  }
}

/** How many elements on the page have this role and exactly this name (twins make positions unsafe). */
export async function countByRole(page: PageInput, role: string, name: string): Promise<number> {
  if (!role || !name.trim()) return 0;
  return (await mainFrameRead(page).catch(() => [])).filter((e) => e.role === role && e.name === name).length;
}
