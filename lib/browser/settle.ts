import type { Page, Request } from 'playwright-core';
import { MUTATION_CLOCK } from './init-scripts.ts';

export interface SettleOptions {
  /** Hard cap on waiting (default 3 s): a busy page is snapshotted as it is, not waited on forever. */
  timeoutMs?: number;
  /** How long DOM and network must stay quiet (default 200 ms). */
  quietMs?: number;
}

export interface SettleResult {
  ms: number;
  /** False when the cap was hit before the page went quiet. */
  quiet: boolean;
  pendingRequests: number;
}

const QUIET_FOR = `(() => {
  ${MUTATION_CLOCK};
  return performance.now() - globalThis.__bfnLastMutation;
})()`;

// Streams never finish by design; counting them would make every chat or live page "busy".
const LONG_LIVED = new Set(['websocket', 'eventsource', 'manifest', 'other']);
const isLongPoll = (r: Request) => /[?&](poll|longpoll|stream)=|\/(poll|stream|events|sse)\b/i.test(r.url());

/** How long the DOM must stay still before a page counts as settled, unless the caller says. */
export const QUIET_MS = 200;

/** Requests in flight per page, tracked from the moment we first see the page. */
const trackers = new WeakMap<Page, Set<Request>>();
/**
 * Pages whose current top document is known to have fired DOMContentLoaded, and `load`, learnt
 * from events: asking Playwright each time costs a trip through its API layer on every read.
 */
const parsed = new WeakSet<Page>();
const loaded = new WeakSet<Page>();

/**
 * Whether a read now would miss what the page is still loading. It must be parsed. And while it
 * has child frames, it must have fired `load`: an <iframe>'s document is requested only once its
 * element is parsed, and the report of that request can come after DOMContentLoaded, so a page
 * judged still then was read without its frames (seen on a slow machine: a page read with neither
 * of its two iframes). `load` waits for the frames' first documents. A page without frames is not
 * held for its images as well: a caller would wait for them on most pages, for nothing a read shows.
 */
function stillLoading(page: Page): boolean {
  return !parsed.has(page) || (!loaded.has(page) && page.frames().length > 1);
}

/** For a page first seen after it loaded (no event told us): Playwright knows without asking the browser. */
async function learnLoadState(page: Page, timeoutMs: number): Promise<void> {
  const reached = (state: 'domcontentloaded' | 'load', timeout: number) =>
    page.waitForLoadState(state, { timeout }).then(
      () => true,
      () => false,
    );
  if (!parsed.has(page) && (await reached('domcontentloaded', timeoutMs))) parsed.add(page);
  // Answered at once when it has loaded; no waiting for a load that may never end (`settle` does, capped).
  if (!loaded.has(page) && (await reached('load', 1))) loaded.add(page);
}

/** A popup's first navigation is issued before its frame exists, and Playwright's `frame()` throws for it. */
const frameOf = (r: Request) => {
  try {
    return r.frame();
  } catch {
    return undefined;
  }
};

export function trackRequests(page: Page): Set<Request> {
  let inflight = trackers.get(page);
  if (inflight) return inflight;
  const set = new Set<Request>();
  inflight = set;
  trackers.set(page, set);
  page.on('domcontentloaded', () => parsed.add(page));
  page.on('load', () => loaded.add(page));
  page.on('request', (r) => {
    if (!LONG_LIVED.has(r.resourceType()) && !isLongPoll(r)) set.add(r);
  });
  const done = (r: Request) => set.delete(r);
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  page.on('framenavigated', (f) => {
    if (f !== page.mainFrame()) return;
    for (const r of set) if (frameOf(r) !== f) set.delete(r);
    parsed.delete(page);
    loaded.delete(page);
  });
  return set;
}

/**
 * True when the page has no ordinary request in flight and is not still loading (`stillLoading`):
 * then only the DOM's quiet time is left to check, which a snapshot can do in the same round trip.
 */
export async function loadedAndIdle(page: Page, timeoutMs: number): Promise<boolean> {
  const inflight = trackRequests(page);
  await learnLoadState(page, timeoutMs);
  return !stillLoading(page) && inflight.size === 0;
}

/** The same answer without waiting: false unless the load is already known to be done. */
export function loadedAndIdleNow(page: Page): boolean {
  return !stillLoading(page) && trackRequests(page).size === 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the DOM stops mutating and no ordinary request is in flight, capped. Ignores
 * websockets, event streams and long polls, which never go quiet. Returns at once on a page that
 * is already quiet.
 */
export async function settle(page: Page, options: SettleOptions = {}): Promise<SettleResult> {
  const timeoutMs = options.timeoutMs ?? 3000;
  const quietMs = options.quietMs ?? QUIET_MS;
  const started = performance.now();
  const inflight = trackRequests(page);
  await learnLoadState(page, timeoutMs);
  for (;;) {
    const elapsed = performance.now() - started;
    const sinceMutation = (await page.evaluate(QUIET_FOR).catch(() => 0)) as number;
    // A same-document move (history.pushState) forgets what we knew, and fires no load event again.
    if (stillLoading(page)) await learnLoadState(page, 1);
    // A page the cap cut short while it loads is never called still.
    const busy = inflight.size > 0 || stillLoading(page);
    if (!busy && sinceMutation >= quietMs)
      return { ms: Math.round(elapsed), quiet: true, pendingRequests: 0 };
    if (elapsed >= timeoutMs)
      return { ms: Math.round(elapsed), quiet: false, pendingRequests: inflight.size };
    const wait = busy ? 25 : Math.max(10, quietMs - sinceMutation);
    await sleep(Math.min(wait, timeoutMs - elapsed));
  }
}
