/**
 * What the raw-CDP driver knows about loading: the main frame's current document (its loader and
 * the lifecycle events it fired), the ordinary requests in flight (for settling), and watches for
 * a main-frame navigation an input may start. Fed with the page's CDP events by cdp-driver.ts.
 */
import type { NavigationWatch } from './page-driver.ts';

type P = Record<string, unknown>;
export interface Loader {
  id: string;
  events: Set<string>;
}

// Streams never finish by design (as in settle.ts): they do not make a page busy.
const LONG_LIVED = new Set(['WebSocket', 'EventSource', 'Manifest', 'Other', 'Ping', 'CSPViolationReport']);
const isLongPoll = (url: string) => /[?&](poll|longpoll|stream)=|\/(poll|stream|events|sse)\b/i.test(url);

export class CdpLoads {
  loader: Loader = { id: '', events: new Set() };
  #waiters = new Set<() => void>();
  #inflight = new Map<string, string>();
  #watchers = new Set<(e: P) => void>();

  /** The document found on attaching: taken as loaded. */
  start(loaderId: string): void {
    this.loader = { id: loaderId, events: new Set(['DOMContentLoaded', 'load']) };
  }

  /** `Page.lifecycleEvent` of the main frame. */
  lifecycle(p: P): void {
    if (p.name === 'init') {
      this.loader = { id: p.loaderId as string, events: new Set() };
      // Requests of the old document no longer hold the new one up.
      for (const [rid, loader] of this.#inflight) if (loader !== this.loader.id) this.#inflight.delete(rid);
    } else if (p.loaderId === this.loader.id) this.loader.events.add(p.name as string);
    for (const w of [...this.#waiters]) w();
  }

  /** Same-document moves of the main frame (history.pushState, a hash): no new loader. */
  withinDocument = 0;

  /** `Page.navigatedWithinDocument` of the main frame. */
  movedWithinDocument(): void {
    this.withinDocument++;
    for (const w of [...this.#waiters]) w();
  }

  requestSent(p: P): void {
    for (const l of this.#watchers) l(p);
    const url = (p.request as { url: string }).url;
    if (!LONG_LIVED.has(p.type as string) && !isLongPoll(url))
      this.#inflight.set(p.requestId as string, p.loaderId as string);
  }

  requestDone(p: P): void {
    this.#inflight.delete(p.requestId as string);
    for (const l of this.#watchers) l(p);
  }

  /** HTTP status of the main frame's current document (its last main-document response). */
  status: number | undefined;

  /** `Network.responseReceived`; `mainId` is the main frame's id. */
  responded(p: P, mainId: string): void {
    // The document request of a navigation is the one whose id is its loader's.
    if (p.type === 'Document' && p.frameId === mainId && p.requestId === p.loaderId)
      this.status = (p.response as { status: number }).status;
    for (const l of this.#watchers) l(p);
  }

  get inflight(): number {
    return this.#inflight.size;
  }

  /** Waits until the current document satisfies `until`; false on timeout. */
  waitFor(until: (l: Loader) => boolean, timeoutMs: number): Promise<boolean> {
    if (until(this.loader)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (until(this.loader)) finish(true);
      };
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve(ok);
      };
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.#waiters.add(check);
    });
  }

  /** A main-frame navigation request (`mainId()`'s), from now on; see NavigationWatch. */
  watchNavigation(mainId: () => string): NavigationWatch {
    let request: string | undefined;
    let target: string | undefined;
    let answered = false;
    let signal: () => void = () => undefined;
    let onAnswer: () => void = () => undefined;
    const seen = new Promise<void>((r) => {
      signal = r;
    });
    const listener = (p: P) => {
      if (!request) {
        if (p.type === 'Document' && p.frameId === mainId() && p.requestId === p.loaderId) {
          request = p.requestId as string;
          target = (p.request as { url: string }).url;
          signal();
        }
      } else if (p.requestId === request && !p.request) {
        answered = true;
        onAnswer();
      }
    };
    this.#watchers.add(listener);
    return {
      seen,
      started: () => request !== undefined,
      target: () => target,
      arrive: async (timeoutMs: number) => {
        if (!request) return;
        const loader = request;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const gotAnswer = await Promise.race([
          new Promise<boolean>((r) => {
            onAnswer = () => r(true);
            if (answered) r(true);
          }),
          new Promise<boolean>((r) => {
            timer = setTimeout(() => r(false), timeoutMs);
          }),
        ]).finally(() => clearTimeout(timer));
        if (!gotAnswer) return;
        await this.waitFor(
          (l) => l.id === loader && l.events.has('DOMContentLoaded'),
          Math.min(timeoutMs, 2000),
        );
      },
      stop: () => {
        this.#watchers.delete(listener);
      },
    };
  }
}
