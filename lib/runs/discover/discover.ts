/**
 * Discovery: from listing pages to sample URLs. Zero tokens when links are picked by a CSS selector or a
 * URL pattern; one `extract` call per listing page when the caller gives an instruction instead.
 * Follows next links, numbered pagers and infinite scroll up to a cap, and keeps one spelling per page.
 */
import type { Page } from 'playwright-core';
import { guardedGoto } from '../../browser/navigate.ts';
import { settle } from '../../browser/settle.ts';
import type { LlmClient } from '../../llm/types.ts';
import { extract } from '../../ops/extract.ts';
import { makeUrlTest, nextPageUrl, normalizeUrl, type PagerLink, type UrlFilter, UrlSet } from './urls.ts';

export interface DiscoverySpec extends UrlFilter {
  /** Listing pages to start from. */
  listings: string[];
  /** CSS selector of the sample links (default: every `a[href]`). */
  linkSelector?: string;
  /** Ask the model for the sample links instead (costs tokens; for listings without clean links). */
  instruction?: string;
  /** Most URLs to collect over all listings (default 10,000). */
  maxUrls?: number;
  /** Most listing pages to read per listing, pagination and scroll rounds included (default 200). */
  maxPages?: number;
  /** Keep scrolling while new links appear (default true). */
  infiniteScroll?: boolean;
}

export interface DiscoveryDeps {
  /** A guarded page; discovery reuses it for every listing page. */
  page: Page;
  checkNavigation: (url: string) => Promise<void>;
  llm?: LlmClient;
  log?: (event: { msg: string; [k: string]: unknown }) => void;
}

export interface DiscoveryResult {
  urls: string[];
  listingPages: number;
  /** Links seen before dedupe and filtering. */
  linksSeen: number;
  truncated: boolean;
  ms: number;
  tokens: number;
}

interface PageLinks {
  samples: string[];
  pager: PagerLink[];
  height: number;
}

/** Runs in the page: the candidate sample links and the pager links, in document order. */
function readLinks(selector: string): PageLinks {
  const anchors = Array.from(document.querySelectorAll<HTMLAnchorElement>(selector));
  const pagerScope = Array.from(document.querySelectorAll<HTMLAnchorElement>('a[href]'));
  return {
    samples: anchors.map((a) => a.href).filter(Boolean),
    pager: pagerScope.map((a) => ({
      href: a.href,
      text: (a.textContent ?? '').trim().slice(0, 40),
      rel: a.rel ?? '',
      label: a.getAttribute('aria-label') ?? a.title ?? '',
    })),
    height: document.documentElement.scrollHeight,
  };
}

const URL_LIST_SCHEMA = {
  type: 'object',
  properties: { urls: { type: 'array', items: { type: 'string', description: 'absolute URL of one item' } } },
  required: ['urls'],
};

/**
 * Scrolls to the bottom and waits two rendering frames: feeds load more from an
 * IntersectionObserver, whose callback runs only after the next frame. Settling before it has
 * run would see a still page and stop too soon (on a busy machine, frames come late).
 */
const scrollToEnd = () =>
  new Promise<void>((resolve) => {
    window.scrollTo(0, document.documentElement.scrollHeight);
    const done = () => resolve();
    setTimeout(done, 500);
    requestAnimationFrame(() => requestAnimationFrame(done));
  });

export async function discover(spec: DiscoverySpec, deps: DiscoveryDeps): Promise<DiscoveryResult> {
  const started = performance.now();
  if (spec.listings.length === 0) throw new Error('discovery needs at least one listing URL');
  if (spec.instruction && !deps.llm) throw new Error('discovery by instruction needs a model; configure one');
  const found = new UrlSet(spec.maxUrls ?? 10_000);
  const maxPages = spec.maxPages ?? 200;
  const selector = spec.linkSelector ?? 'a[href]';
  const visited = new Set<string>();
  let listingPages = 0;
  let linksSeen = 0;
  let tokens = 0;
  let truncated = false;

  for (const listing of spec.listings) {
    const keep = makeUrlTest(spec, listing);
    let next: string | undefined = normalizeUrl(listing);
    let pagesHere = 0;
    while (next && !found.full) {
      if (pagesHere >= maxPages) {
        truncated = true;
        break;
      }
      const current: string = next;
      visited.add(current);
      await deps.checkNavigation(current);
      await guardedGoto(deps.page, current);
      await settle(deps.page);
      pagesHere++;
      listingPages++;
      let links = await deps.page.evaluate(readLinks, selector);
      const take = async (hrefs: string[]) => {
        linksSeen += hrefs.length;
        const normalized = hrefs
          .map((h) => normalizeUrl(h, current))
          .filter((u): u is string => u !== undefined && !visited.has(u) && keep(u));
        return found.add(normalized);
      };
      if (spec.instruction && deps.llm) {
        const answer = await extract({ page: deps.page, llm: deps.llm }, spec.instruction, URL_LIST_SCHEMA);
        tokens += answer.usage.promptTokens + answer.usage.completionTokens;
        await take(((answer.data as { urls?: unknown }).urls as string[] | undefined) ?? []);
      } else {
        await take(links.samples);
      }
      next = nextPageUrl(links.pager, current, visited, pagesHere);
      // Infinite scroll, on listings without a pager: scroll while the page grows and yields new links.
      if (!next && spec.infiniteScroll !== false && !spec.instruction) {
        let quiet = 0;
        while (!found.full && quiet < 2 && pagesHere < maxPages) {
          await deps.page.evaluate(scrollToEnd);
          await settle(deps.page, { timeoutMs: 1500 });
          const after = await deps.page.evaluate(readLinks, selector);
          const added = await take(after.samples.slice(links.samples.length));
          const grew = after.height > links.height || after.samples.length > links.samples.length;
          links = after;
          if (added === 0 && !grew) quiet++;
          else {
            quiet = 0;
            pagesHere++;
          }
        }
      }
      deps.log?.({ msg: 'discovery page read', url: current, total: found.urls.length });
    }
    if (found.full) truncated = true;
  }
  return {
    urls: found.urls,
    listingPages,
    linksSeen,
    truncated,
    ms: Math.round(performance.now() - started),
    tokens,
  };
}
