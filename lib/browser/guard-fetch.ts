import type { BrowserContext, CDPSession, Page } from 'playwright-core';

/**
 * The remote guard's hold on requests Playwright's route never sees. Playwright answers a redirect
 * hop itself (and the next request of a `fetch()` that follows a redirect), so a route cannot stop
 * an image, a script, a frame or a worker's fetch sent on to a refused address. The Fetch domain
 * pauses those too: each page of the context gets a CDP session of our own that pauses every
 * request and lets it go only once the guard allows it. Several clients may pause the same request
 * (Playwright's own Fetch included); each answers in turn.
 *
 * A frame in another process (a cross-site iframe under site isolation) is a target of its own:
 * the page's session attaches to it as it starts, held until its requests are paused too. That
 * attachment goes through the page's session (`Target.sendMessageToTarget`): Playwright's session
 * object carries no other. A service worker whose scope holds the page is attached and held the
 * same way. Out of reach: WebSocket handshakes, which Fetch never pauses, and a service worker
 * running while no page of its scope is open.
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

type Params = Record<string, unknown>;

/** One target's CDP session: the page's own, or one reached through it. */
export interface Channel {
  send(method: string, params?: Params): Promise<unknown>;
  on(event: string, listener: (params: Params) => void): void;
}

interface PausedEvent {
  requestId: string;
  request: { url: string };
  resourceType: string;
  redirectedRequestId?: string;
}

interface TargetInfo {
  type: string;
}

interface AttachedEvent {
  sessionId: string;
  targetInfo: TargetInfo;
}

const pageChannel = (cdp: CDPSession): Channel => ({
  send: (method, params) => cdp.send(method as 'Fetch.enable', params as never),
  on: (event, listener) => cdp.on(event as 'Fetch.requestPaused', listener as never),
});

/**
 * The session of a target attached through `parent` (non-flat mode): its messages go out through
 * `Target.sendMessageToTarget` and come back in `Target.receivedMessageFromTarget`.
 */
export function tunnel(
  parent: Channel,
  sessionId: string,
  routes: Map<string, (message: string) => void>,
): Channel {
  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const listeners = new Map<string, ((params: Params) => void)[]>();
  routes.set(sessionId, (raw) => {
    const message = JSON.parse(raw) as {
      id?: number;
      method?: string;
      params?: Params;
      result?: unknown;
      error?: { message: string };
    };
    if (message.id !== undefined) {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiter?.reject(new Error(message.error.message));
      else waiter?.resolve(message.result);
    } else if (message.method) for (const l of listeners.get(message.method) ?? []) l(message.params ?? {});
  });
  return {
    send: (method, params = {}) =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        pending.set(id, { resolve, reject });
        parent
          .send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) })
          .catch((err: Error) => {
            pending.delete(id);
            reject(err);
          });
      }),
    on: (event, listener) => listeners.set(event, [...(listeners.get(event) ?? []), listener]),
  };
}

async function answer(ch: Channel, p: PausedEvent, check: RequestCheck): Promise<void> {
  const allowed = await check({
    url: p.request.url,
    resourceType: p.resourceType.toLowerCase(),
    hop: p.redirectedRequestId !== undefined,
  }).catch(() => false);
  // The target may be gone by now: nothing is left to answer for.
  if (allowed) await ch.send('Fetch.continueRequest', { requestId: p.requestId }).catch(() => undefined);
  else
    await ch
      .send('Fetch.failRequest', { requestId: p.requestId, errorReason: 'BlockedByClient' })
      .catch(() => undefined);
}

/**
 * Attaches to each target that starts under `ch` (held until released), pauses the requests of
 * those `keep` wants as `hold` does, and lets every one run whatever happens here: a target left
 * held would never load.
 */
function adoptTargets(ch: Channel, keep: (target: TargetInfo) => boolean, check: RequestCheck): void {
  const routes = new Map<string, (message: string) => void>();
  ch.on('Target.receivedMessageFromTarget', (p) => routes.get(p.sessionId as string)?.(p.message as string));
  ch.on('Target.detachedFromTarget', (p) => routes.delete(p.sessionId as string));
  ch.on('Target.attachedToTarget', (p) => {
    const { sessionId, targetInfo } = p as unknown as AttachedEvent;
    const child = tunnel(ch, sessionId, routes);
    const kept = keep(targetInfo);
    void (kept ? hold(child, check) : Promise.resolve())
      .catch(() => undefined)
      .finally(() => {
        void child.send('Runtime.runIfWaitingForDebugger').catch(() => undefined);
        if (!kept) void ch.send('Target.detachFromTarget', { sessionId }).catch(() => undefined);
      });
  });
}

/** Pauses every request of the target behind `ch`, and of each frame target that starts under it. */
async function hold(ch: Channel, check: RequestCheck): Promise<void> {
  ch.on('Fetch.requestPaused', (p) => void answer(ch, p as unknown as PausedEvent, check));
  // A dedicated worker's requests are paused with its page's already; a service worker's are not
  // (the page's session attaches to one whose scope holds the page).
  adoptTargets(ch, (target) => target.type === 'iframe' || target.type === 'service_worker', check);
  await ch.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
  // A browser that no longer takes non-flat attaching still has this target's pause; the frames of
  // other processes keep Playwright's route (every request but the hops).
  await ch
    .send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: false })
    .catch(() => undefined);
}

export function pausePageRequests(context: BrowserContext, check: RequestCheck): RequestPauser {
  const sessions = new Map<Page, Promise<CDPSession | undefined>>();
  const watch = (page: Page): Promise<CDPSession | undefined> => {
    const known = sessions.get(page);
    if (known) return known;
    const started = (async () => {
      const cdp = await context.newCDPSession(page);
      await hold(pageChannel(cdp), check);
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
