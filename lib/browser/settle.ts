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
 * Pages whose current top document is known to have fired `load`, learnt from events: asking
 * Playwright each time costs a trip through its API layer on every read.
 *
 * `load`, not DOMContentLoaded: an <iframe>'s document is requested only after its element is
 * parsed, and the report of that request can come after DOMContentLoaded. A page judged still then
 * was read without the frames still loading (seen on a slow machine: a page read with none of its
 * two iframes). `load` waits for the first documents of the page's frames, and it costs nothing
 * more on most pages: `settle` waits for their subresources in flight anyway.
 */
const loaded = new WeakSet<Page>();

export function trackRequests(page: Page): Set<Request> {
  let inflight = trackers.get(page);
  if (inflight) return inflight;
  const set = new Set<Request>();
  inflight = set;
  trackers.set(page, set);
  page.on('load', () => loaded.add(page));
  page.on('request', (r) => {
    if (!LONG_LIVED.has(r.resourceType()) && !isLongPoll(r)) set.add(r);
  });
  const done = (r: Request) => set.delete(r);
  page.on('requestfinished', done);
  page.on('requestfailed', done);
  page.on('framenavigated', (f) => {
    if (f !== page.mainFrame()) return;
    for (const r of set) if (r.frame() !== f) set.delete(r);
    loaded.delete(page);
  });
  return set;
}

/**
 * True when the page has no ordinary request in flight and its first load is done: then only the
 * DOM's quiet time is left to check, which a snapshot can do in the same round trip. Waits only for
 * the page to be parsed: one still loading its frames or images is `settle`'s to wait for, within
 * its own cap (waiting here too would spend the cap twice on a page whose load never ends).
 */
export async function loadedAndIdle(page: Page, timeoutMs: number): Promise<boolean> {
  const inflight = trackRequests(page);
  if (!loaded.has(page)) {
    await page.waitForLoadState('domcontentloaded', { timeout: timeoutMs }).catch(() => undefined);
    // A page first seen after its load fires no event for it; Playwright knows without asking the
    // browser, and answers at once when it has loaded.
    if (
      await page.waitForLoadState('load', { timeout: 1 }).then(
        () => true,
        () => false,
      )
    )
      loaded.add(page);
  }
  return loaded.has(page) && inflight.size === 0;
}

/** The same answer without waiting: false unless the load is already known to be done. */
export function loadedAndIdleNow(page: Page): boolean {
  return loaded.has(page) && trackRequests(page).size === 0;
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
  if (!loaded.has(page))
    await page.waitForLoadState('load', { timeout: timeoutMs }).then(
      () => loaded.add(page),
      () => undefined,
    );
  for (;;) {
    const elapsed = performance.now() - started;
    const sinceMutation = (await page.evaluate(QUIET_FOR).catch(() => 0)) as number;
    // A load the cap cut short is still a page loading: never called still.
    const busy = inflight.size > 0 || !loaded.has(page);
    if (!busy && sinceMutation >= quietMs)
      return { ms: Math.round(elapsed), quiet: true, pendingRequests: 0 };
    if (elapsed >= timeoutMs)
      return { ms: Math.round(elapsed), quiet: false, pendingRequests: inflight.size };
    const wait = busy ? 25 : Math.max(10, quietMs - sinceMutation);
    await sleep(Math.min(wait, timeoutMs - elapsed));
  }
}
