/**
 * The pure side of discovery: which links on a listing are samples, and when two spellings of a URL are
 * the same page. Kept free of the browser so the rules are unit-tested and cheap.
 */

/** Query parameters that only track where a visitor came from; they never change the page. */
const TRACKING = /^(utm_\w+|gclid|fbclid|mc_cid|mc_eid|ref|ref_src|_ga|yclid|msclkid)$/i;

/**
 * One spelling per page: lower-case scheme and host, no default port, no fragment, no tracking
 * parameters, the rest of the query sorted, and no trailing slash except on the root.
 * Returns undefined for anything that is not http(s).
 */
export function normalizeUrl(raw: string, base?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  const params = [...url.searchParams.entries()].filter(([k]) => !TRACKING.test(k));
  params.sort(([a, av], [b, bv]) => (a === b ? av.localeCompare(bv) : a.localeCompare(b)));
  url.search = new URLSearchParams(params).toString();
  if (url.pathname.length > 1 && url.pathname.endsWith('/')) url.pathname = url.pathname.replace(/\/+$/, '');
  return url.toString();
}

/** A user's URL pattern: a regular expression, or a glob with `*` (any run) when it has no regex syntax. */
export function compilePattern(pattern: string): RegExp {
  const looksLikeRegex = /[\\^$()[\]{}|+?]/.test(pattern);
  if (looksLikeRegex) return new RegExp(pattern);
  const escaped = pattern.replace(/[.*+?^${}()|[\]\\]/g, (c) => (c === '*' ? '.*' : `\\${c}`));
  return new RegExp(`^${escaped}$`);
}

export interface UrlFilter {
  /** Keep only URLs matching this (regex or `*` glob); absent keeps every link. */
  include?: string;
  /** Drop URLs matching this. */
  exclude?: string;
  /** Keep only links to the listing's own host (default true). */
  sameHost?: boolean;
}

export function makeUrlTest(filter: UrlFilter, listingUrl: string): (url: string) => boolean {
  const include = filter.include ? compilePattern(filter.include) : undefined;
  const exclude = filter.exclude ? compilePattern(filter.exclude) : undefined;
  const host = new URL(listingUrl).host;
  const sameHost = filter.sameHost ?? true;
  return (url) => {
    if (sameHost && new URL(url).host !== host) return false;
    if (include && !include.test(url)) return false;
    if (exclude?.test(url)) return false;
    return true;
  };
}

/** Ordered set of normalized URLs with a cap: `add` says how many were new. */
export class UrlSet {
  readonly urls: string[] = [];
  private readonly seen = new Set<string>();
  constructor(readonly cap: number) {}

  get full(): boolean {
    return this.urls.length >= this.cap;
  }

  add(urls: Iterable<string>): number {
    let added = 0;
    for (const url of urls) {
      if (this.full) break;
      if (this.seen.has(url)) continue;
      this.seen.add(url);
      this.urls.push(url);
      added++;
    }
    return added;
  }
}

export interface PagerLink {
  href: string;
  text: string;
  rel: string;
  label: string;
}

const NEXT_WORDS =
  /^(next|next page|more|older|load more|show more|weiter|suivant|siguiente|successivo|volgende|próxima|następna|nästa|›|»|>|→)$/i;

/**
 * The listing's next page: a `rel=next` link, a link whose text or label says "next", or the numbered
 * page after the current one. Pages already visited are never offered again, so loops end.
 */
export function nextPageUrl(
  links: PagerLink[],
  currentUrl: string,
  visited: ReadonlySet<string>,
  /** 1-based number of the page being read, for numbered pagers without a "next" link. */
  pageNumber = 1,
): string | undefined {
  const fresh = (l: PagerLink) => {
    const n = normalizeUrl(l.href, currentUrl);
    return n && !visited.has(n) ? n : undefined;
  };
  for (const l of links) if (/\bnext\b/i.test(l.rel)) return fresh(l) ?? undefined;
  for (const l of links) {
    const words = (l.text || l.label).trim().replace(/\s+/g, ' ');
    if (NEXT_WORDS.test(words) || /^next\b/i.test(l.label.trim())) {
      const n = fresh(l);
      if (n) return n;
    }
  }
  const numbered = links
    .map((l) => ({ n: Number(l.text.trim()), url: fresh(l) }))
    .filter(
      (x): x is { n: number; url: string } =>
        Number.isInteger(x.n) && x.n > pageNumber && x.url !== undefined,
    )
    .sort((a, b) => a.n - b.n);
  return numbered[0]?.url;
}
