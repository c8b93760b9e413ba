import type { BrowserContext, CDPSession, Page } from 'playwright-core';

/**
 * The remote guard's hold on requests Playwright's route never sees. Playwright answers a redirect
 * hop itself (and the next request of a `fetch()` that follows a redirect), so a route cannot stop
 * an image, a script, a frame or a worker's fetch sent on to a refused address. The Fetch domain
 * pauses those too: each page of the context gets a CDP session of our own that pauses every
 * request and lets it go only once the guard allows it. Several clients may pause the same request
 * (Playwright's own Fetch included); each answers in turn.
 *
 * Out of reach here: frames in another process (a cross-site iframe under site isolation) and
 * service workers, which are targets of their own; WebSocket handshakes, which Fetch never pauses.
 */
export interface PausedRequest {
  url: string;
  resourceType: string;
  /** A redirect hop of an earlier request. */
  hop: boolean;
}

/** True lets the request go. A check that throws blocks it: what could not be checked never leaves. */
export type RequestCheck = (request: PausedRequest) => Promise<boolean>;

export interface RequestPauser {
  /** Resolves once `page`'s requests are paused: navigate it only then. */
  ready(page: Page): Promise<void>;
  dispose(): Promise<void>;
}

interface PausedEvent {
  requestId: string;
  request: { url: string };
  resourceType: string;
  redirectedRequestId?: string;
}

async function answer(cdp: CDPSession, p: PausedEvent, check: RequestCheck): Promise<void> {
  const allowed = await check({
    url: p.request.url,
    resourceType: p.resourceType.toLowerCase(),
    hop: p.redirectedRequestId !== undefined,
  }).catch(() => false);
  // The page or its session may be gone by now: nothing is left to answer for.
  if (allowed) await cdp.send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => undefined);
  else
    await cdp
      .send('Fetch.failRequest', { requestId: p.requestId, errorReason: 'BlockedByClient' })
      .catch(() => undefined);
}

export function pausePageRequests(context: BrowserContext, check: RequestCheck): RequestPauser {
  const sessions = new Map<Page, Promise<CDPSession | undefined>>();
  const watch = (page: Page): Promise<CDPSession | undefined> => {
    const known = sessions.get(page);
    if (known) return known;
    const started = (async () => {
      const cdp = await context.newCDPSession(page);
      cdp.on('Fetch.requestPaused', (p) => void answer(cdp, p as PausedEvent, check));
      await cdp.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
      return cdp;
    })().catch(() => undefined);
    sessions.set(page, started);
    return started;
  };
  const onPage = (page: Page) => void watch(page);
  context.on('page', onPage);
  for (const page of context.pages()) void watch(page);
  return {
    ready: async (page) => {
      // A page whose session could not be made (closed already) has nothing left to load.
      if (!(await watch(page)) && !page.isClosed())
        throw new Error('the guard could not pause the requests of a page of a remote browser');
    },
    dispose: async () => {
      context.off('page', onPage);
      const all = await Promise.all(sessions.values());
      sessions.clear();
      await Promise.all(all.map((cdp) => cdp?.detach().catch(() => undefined)));
    },
  };
}
