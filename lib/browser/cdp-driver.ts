/**
 * The raw-CDP page driver: one tab of any CDP browser (our own Chromium, Browserbase, Steel,
 * Cloudflare Browser Rendering) over a web-standard WebSocket. Frames come from the Page domain,
 * out-of-process iframes from auto-attached flat sessions, scripts run in each frame's main-world
 * context, input goes through `Input.dispatch*`, loads are followed by lifecycle events, and the
 * guard's hook sits on the Fetch domain. No Node or Playwright API.
 */
import { CdpElement, CdpFrame, type FrameHost } from './cdp-frame.ts';
import { CdpKeyboard, CdpMouse } from './cdp-input.ts';
import { answerPaused, pauseRequests, stopPausing } from './cdp-intercept.ts';
import { CdpLoads } from './cdp-loads.ts';
import { type CdpConnection, CdpSession } from './cdp-session.ts';
import { MUTATION_CLOCK, NAV_INTENT, pageHooks } from './init-scripts.ts';
import type { LoadState, NavigationWatch, PageChange, PageDriver, RequestHook } from './page-driver.ts';

type P = Record<string, unknown>;
interface FrameTree {
  frame: { id: string; parentId?: string; url: string; loaderId: string };
  childFrames?: FrameTree[];
}

const QUIET_FOR = `(() => { ${MUTATION_CLOCK}; return performance.now() - globalThis.__bfnLastMutation; })()`;
// The browser at the other end of a CDP link is never one we launched.
const INIT_SCRIPT = `${pageHooks(true)};\n${NAV_INTENT};`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function timeoutError(ms: number, what: string): Error {
  const err = new Error(`Timeout ${ms}ms exceeded: ${what}`);
  err.name = 'TimeoutError';
  return err;
}

export class CdpPageDriver implements PageDriver, FrameHost {
  readonly kind = 'cdp' as const;
  readonly keyboard: CdpKeyboard;
  readonly mouse: CdpMouse;
  #frames = new Map<string, CdpFrame>();
  #mainId = '';
  #sessions = new Map<string, CdpSession>();
  /** The main frame's current document: its loader and the lifecycle events it fired. */
  #loads = new CdpLoads();
  #listeners = new Set<(c: PageChange) => void>();
  #bindings = new Map<string, (payload: string) => void>();
  #hook: RequestHook | undefined;
  #closed = false;
  #viewport = { width: 1280, height: 800 };

  constructor(
    readonly connection: CdpConnection,
    readonly session: CdpSession,
  ) {
    this.keyboard = new CdpKeyboard(session);
    this.mouse = new CdpMouse(session, this.keyboard);
  }

  frame(id: string): CdpFrame | undefined {
    return this.#frames.get(id);
  }
  childrenOf(id: string): CdpFrame[] {
    return [...this.#frames.values()].filter((f) => f.parentId === id && !f.detached);
  }

  async init(viewport?: { width: number; height: number }): Promise<void> {
    const c = this.connection;
    const mine = (sid: string | undefined) => !!sid && this.#sessions.has(sid);
    c.on('Page.frameAttached', (p, sid) => {
      if (!mine(sid)) return;
      const id = p.frameId as string;
      if (!this.#frames.has(id))
        this.#frames.set(
          id,
          new CdpFrame(id, this.#sessions.get(sid!)!, p.parentFrameId as string, '', this),
        );
      this.#emit('frame-attached');
    });
    c.on('Page.navigatedWithinDocument', (p, sid) => {
      if (!mine(sid)) return;
      // pushState or a hash: the same document at a new URL.
      const frame = this.#frames.get(p.frameId as string);
      if (frame) frame.frameUrl = p.url as string;
      if (p.frameId === this.#mainId) this.#loads.movedWithinDocument();
    });
    c.on('Page.frameNavigated', (p, sid) => {
      if (!mine(sid)) return;
      const f = p.frame as FrameTree['frame'];
      const frame = this.#ensureFrame(f, this.#sessions.get(sid!)!);
      frame.frameUrl = f.url;
      // A new document: the frames of the old one are gone (the browser sends no detach for them).
      this.#dropDescendants(f.id);
      if (f.id === this.#mainId) this.#emit('navigated');
    });
    c.on('Page.frameDetached', (p, sid) => {
      if (!mine(sid)) return;
      const frame = this.#frames.get(p.frameId as string);
      // 'swap': the frame moves to a process of its own and comes back on an attached session.
      if (!frame || p.reason === 'swap') return;
      frame.detached = true;
      this.#frames.delete(frame.id);
      this.#emit('frame-detached');
    });
    c.on('Page.lifecycleEvent', (p, sid) => {
      if (sid !== this.session.id || p.frameId !== this.#mainId) return;
      this.#loads.lifecycle(p);
    });
    c.on('Page.javascriptDialogOpening', (p, sid) => {
      if (!mine(sid)) return;
      this.#emit('dialog');
      // Nobody is there to answer a dialog: dismiss it (accept a beforeunload), as Playwright does.
      void this.#sessions
        .get(sid!)!
        .send('Page.handleJavaScriptDialog', { accept: p.type === 'beforeunload' })
        .catch(() => undefined);
    });
    c.on('Runtime.executionContextCreated', (p, sid) => {
      if (!mine(sid)) return;
      const ctx = p.context as { id: number; auxData?: { frameId?: string; isDefault?: boolean } };
      if (!ctx.auxData?.isDefault || !ctx.auxData.frameId) return;
      const frame = this.#frames.get(ctx.auxData.frameId);
      if (frame && frame.session.id === sid) frame.setContext(ctx.id);
    });
    c.on('Runtime.executionContextDestroyed', (p, sid) => {
      for (const f of this.#frames.values())
        if (f.session.id === sid && f.contextId === p.executionContextId) f.setContext(undefined);
    });
    c.on('Runtime.executionContextsCleared', (_p, sid) => {
      for (const f of this.#frames.values()) if (f.session.id === sid) f.setContext(undefined);
    });
    c.on('Runtime.bindingCalled', (p, sid) => {
      if (mine(sid)) this.#bindings.get(p.name as string)?.(p.payload as string);
    });
    c.on('Network.requestWillBeSent', (p, sid) => {
      if (!mine(sid)) return;
      this.#loads.requestSent(p);
    });
    const done = (p: P, sid: string | undefined) => {
      if (!mine(sid)) return;
      this.#loads.requestDone(p);
    };
    c.on('Network.loadingFinished', done);
    c.on('Network.loadingFailed', done);
    c.on('Network.responseReceived', (p, sid) => {
      if (mine(sid)) this.#loads.responded(p, this.#mainId);
    });
    c.on('Fetch.requestPaused', (p, sid) => {
      if (mine(sid)) void answerPaused(this.#sessions.get(sid!)!, p, this.#hook);
    });
    c.on('Target.attachedToTarget', (p, sid) => {
      if (!mine(sid)) return;
      const info = p.targetInfo as { type: string; targetId: string };
      const child = new CdpSession(c, p.sessionId as string);
      if (info.type === 'iframe') void this.#prepare(child, true).catch(() => undefined);
      else void this.#prepareWorker(child).catch(() => undefined);
    });
    c.on('Target.detachedFromTarget', (p, sid) => {
      if (p.sessionId === this.session.id) {
        this.#closed = true;
        this.#emit('closed');
      }
      if (!mine(sid)) return;
      const gone = this.#sessions.get(p.sessionId as string);
      if (!gone) return;
      this.#sessions.delete(gone.id);
      for (const f of this.#frames.values())
        if (f.session === gone) {
          f.detached = true;
          this.#frames.delete(f.id);
        }
    });
    c.on('__closed', () => {
      this.#closed = true;
      this.#emit('closed');
    });
    if (viewport) {
      this.#viewport = viewport;
      await this.session.send('Emulation.setDeviceMetricsOverride', {
        ...viewport,
        deviceScaleFactor: 1,
        mobile: false,
      });
    }
    await this.#prepare(this.session, false);
    if (!viewport) {
      this.#viewport = await this.mainFrame().evaluate<{ width: number; height: number }>(
        '({ width: innerWidth, height: innerHeight })',
      );
    }
  }

  /** Enables what a page or iframe session needs, then lets it run. */
  async #prepare(s: CdpSession, iframe: boolean): Promise<void> {
    this.#sessions.set(s.id, s);
    const sends: Promise<unknown>[] = [
      s.send('Page.enable'),
      s.send('Page.setLifecycleEventsEnabled', { enabled: true }),
      s.send('Network.enable'),
      s.send('Page.addScriptToEvaluateOnNewDocument', { source: INIT_SCRIPT, runImmediately: true }),
      s.send('Target.setAutoAttach', { autoAttach: true, waitForDebuggerOnStart: true, flatten: true }),
      ...[...this.#bindings.keys()].map((name) => s.send('Runtime.addBinding', { name })),
      ...(this.#hook ? [s.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] })] : []),
    ];
    const { frameTree } = await s.send<{ frameTree: FrameTree }>('Page.getFrameTree');
    const walk = (t: FrameTree) => {
      this.#ensureFrame(t.frame, s);
      for (const c of t.childFrames ?? []) walk(c);
    };
    walk(frameTree);
    if (!iframe) {
      this.#mainId = frameTree.frame.id;
      this.#loads.start(frameTree.frame.loaderId);
    }
    // Runtime.enable reports the contexts that exist now: the frames must be known first.
    sends.push(s.send('Runtime.enable'));
    await Promise.all(sends);
    if (iframe) await s.send('Runtime.runIfWaitingForDebugger');
    else
      await this.mainFrame()
        .evaluate(INIT_SCRIPT)
        .catch(() => undefined);
  }

  /**
   * A worker of the page: its requests leave from its own target, so the guard's hook is put on it
   * too before it runs a line. It has no frames and no page events.
   */
  async #prepareWorker(s: CdpSession): Promise<void> {
    this.#sessions.set(s.id, s);
    if (this.#hook) await s.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] }).catch(() => undefined);
    await s.send('Runtime.runIfWaitingForDebugger');
  }

  #ensureFrame(f: FrameTree['frame'], s: CdpSession): CdpFrame {
    let frame = this.#frames.get(f.id);
    if (!frame) {
      frame = new CdpFrame(f.id, s, f.parentId, f.url, this);
      this.#frames.set(f.id, frame);
    } else if (frame.session !== s) {
      // An iframe that moved to its own process: same frame, new session and context.
      frame.session = s;
      frame.setContext(undefined);
    }
    if (f.parentId) frame.parentId = f.parentId;
    return frame;
  }

  #dropDescendants(id: string): void {
    for (const child of this.childrenOf(id)) {
      this.#dropDescendants(child.id);
      child.detached = true;
      this.#frames.delete(child.id);
    }
  }

  #emit(change: PageChange): void {
    for (const l of [...this.#listeners]) l(change);
  }

  /** HTTP status of the main frame's document; undefined for one loaded before we attached. */
  documentStatus(): number | undefined {
    return this.#loads.status;
  }

  url(): string {
    return this.mainFrame().url();
  }
  title(): Promise<string> {
    return this.mainFrame().evaluate<string>('document.title');
  }
  viewport(): { width: number; height: number } {
    return this.#viewport;
  }
  mainFrame(): CdpFrame {
    return this.#frames.get(this.#mainId)!;
  }
  frames(): CdpFrame[] {
    const out: CdpFrame[] = [];
    const walk = (f: CdpFrame) => {
      out.push(f);
      for (const c of f.children()) walk(c);
    };
    walk(this.mainFrame());
    return out;
  }

  async goto(url: string, options: { timeoutMs: number; waitUntil?: LoadState }): Promise<void> {
    const event = options.waitUntil === 'load' ? 'load' : 'DOMContentLoaded';
    const res = await this.session.send<{ loaderId?: string; errorText?: string }>('Page.navigate', { url });
    if (res.errorText) throw new Error(`${res.errorText} at ${url}`);
    // No loader: a same-document navigation (a hash), already done.
    if (!res.loaderId) return;
    const loader = res.loaderId;
    const ok = await this.#loads.waitFor((l) => l.id === loader && l.events.has(event), options.timeoutMs);
    if (!ok) throw timeoutError(options.timeoutMs, `navigating to "${url}"`);
  }

  async history(move: 'back' | 'forward' | 'reload', options: { timeoutMs: number }): Promise<boolean> {
    const before = this.#loads.loader.id;
    const moves = this.#loads.withinDocument;
    if (move === 'reload') await this.session.send('Page.reload');
    else {
      const h = await this.session.send<{ currentIndex: number; entries: { id: number }[] }>(
        'Page.getNavigationHistory',
      );
      const entry = h.entries[h.currentIndex + (move === 'back' ? -1 : 1)];
      if (!entry) return false;
      await this.session.send('Page.navigateToHistoryEntry', { entryId: entry.id });
    }
    // A new document, or (back to a hash or a pushState entry) the same one at another URL.
    await this.#loads.waitFor(
      (l) => (l.id !== before && l.events.has('DOMContentLoaded')) || this.#loads.withinDocument !== moves,
      options.timeoutMs,
    );
    return true;
  }

  waitForLoad(state: LoadState, timeoutMs: number): Promise<boolean> {
    const event = state === 'load' ? 'load' : 'DOMContentLoaded';
    return this.#loads.waitFor((l) => l.events.has(event), timeoutMs);
  }

  watchNavigation(): NavigationWatch {
    return this.#loads.watchNavigation(() => this.#mainId);
  }

  async screenshot(): Promise<Uint8Array> {
    const { data } = await this.session.send<{ data: string }>('Page.captureScreenshot', { format: 'png' });
    const bin = atob(data);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }

  async loadedAndIdle(timeoutMs: number): Promise<boolean> {
    await this.waitForLoad('domcontentloaded', timeoutMs);
    return !this.#stillLoading() && this.#loads.inflight === 0;
  }

  loadedAndIdleNow(): boolean {
    return !this.#stillLoading() && this.#loads.inflight === 0;
  }

  /** As `stillLoading` in settle.ts: parsed, and while it has child frames, loaded. */
  #stillLoading(): boolean {
    const events = this.#loads.loader.events;
    return !events.has('DOMContentLoaded') || (!events.has('load') && this.frames().length > 1);
  }

  async settle(
    options: { timeoutMs?: number; quietMs?: number } = {},
  ): Promise<{ quiet: boolean; ms: number }> {
    const timeoutMs = options.timeoutMs ?? 3000;
    const quietMs = options.quietMs ?? 200;
    const started = performance.now();
    await this.waitForLoad('domcontentloaded', timeoutMs);
    for (;;) {
      const elapsed = performance.now() - started;
      const since = await this.mainFrame()
        .evaluate<number>(QUIET_FOR)
        .catch(() => 0);
      // A page the cap cut short while it loads is never called still.
      const busy = this.#loads.inflight > 0 || this.#stillLoading();
      if (!busy && since >= quietMs) return { quiet: true, ms: Math.round(elapsed) };
      if (elapsed >= timeoutMs) return { quiet: false, ms: Math.round(elapsed) };
      await sleep(Math.min(busy ? 25 : Math.max(10, quietMs - since), timeoutMs - elapsed));
    }
  }

  async addBinding(name: string, onCall: (payload: string) => void): Promise<void> {
    this.#bindings.set(name, onCall);
    await Promise.all(
      [...this.#sessions.values()].map((s) =>
        // A frame or worker going away meanwhile must not fail the page's own binding.
        s === this.session
          ? s.send('Runtime.addBinding', { name })
          : s.send('Runtime.addBinding', { name }).catch(() => undefined),
      ),
    );
  }

  onChange(listener: (change: PageChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async interceptRequests(hook: RequestHook): Promise<() => Promise<void>> {
    this.#hook = hook;
    await pauseRequests(this.#sessions.values(), this.session);
    return async () => {
      this.#hook = undefined;
      await stopPausing(this.#sessions.values());
    };
  }

  isClosed(): boolean {
    return this.#closed || this.connection.closed;
  }
}

export { CdpElement, CdpFrame };
