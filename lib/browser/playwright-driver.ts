/**
 * The Playwright adapter of the page-driver port (Node). Each call goes straight to the Playwright
 * method the code used before the port existed, so behaviour and speed are unchanged: the patient
 * element operations keep Playwright's waiting and its error texts, loads go through guardedGoto,
 * settling through settle.ts. One driver per Page and one frame wrapper per Frame (WeakMaps), so
 * what perception keys by driver or frame lives exactly as long as the page or frame.
 */
import type { ElementHandle, Frame, Page, Request } from 'playwright-core';
import { guardedGoto } from './navigate.ts';
import {
  brandDriver,
  type DriverElement,
  type DriverFrame,
  type ForeignPage,
  type LoadState,
  type NavigationWatch,
  type PageChange,
  type PageDriver,
  type RequestHook,
  registerPageAdapter,
} from './page-driver.ts';
import { isRefused } from './refused-frames.ts';
import { loadedAndIdle, loadedAndIdleNow, settle } from './settle.ts';
import { carries } from './start-scripts.ts';

const frames = new WeakMap<Frame, PlaywrightFrame>();
const drivers = new WeakMap<Page, PlaywrightDriver>();

export function frameOf(frame: Frame): PlaywrightFrame {
  let f = frames.get(frame);
  if (!f) {
    f = new PlaywrightFrame(frame);
    frames.set(frame, f);
  }
  return f;
}

let frameSeq = 0;

class PlaywrightFrame implements DriverFrame {
  /** Playwright keeps the browser's frame id to itself: a number of ours, stable for the wrapper's life. */
  readonly id = `pw-${++frameSeq}`;
  constructor(readonly native: Frame) {}
  parent(): DriverFrame | undefined {
    const p = this.native.parentFrame();
    return p ? frameOf(p) : undefined;
  }
  children(): DriverFrame[] {
    return this.native.childFrames().map(frameOf);
  }
  isDetached(): boolean {
    return this.native.isDetached();
  }
  url(): string {
    return this.native.url();
  }
  evaluate<R = unknown>(expression: string): Promise<R> {
    return this.native.evaluate(expression) as Promise<R>;
  }
  /**
   * In the main frame, over the driver's own CDP session (PlaywrightDriver.evaluateText); in a
   * child frame, whose context a bare Runtime.evaluate cannot name, through Playwright.
   */
  evaluateText(expression: string): Promise<string | undefined> {
    const page = this.native.page();
    if (this.native === page.mainFrame())
      return (playwrightDriver(page) as PlaywrightDriver).evaluateText(expression);
    return this.native.evaluate(expression) as Promise<string | undefined>;
  }
  call<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>> {
    return this.native.evaluate(fn as (arg: unknown) => R, arg) as Promise<Awaited<R>>;
  }
  async element<A = undefined>(
    script: string | ((arg: A) => Element | null | undefined),
    arg?: A,
  ): Promise<DriverElement | undefined> {
    const h =
      typeof script === 'string'
        ? await this.native.evaluateHandle(script)
        : await this.native.evaluateHandle(script as (arg: unknown) => Element | null | undefined, arg);
    const el = h.asElement() as ElementHandle<Element> | null;
    if (!el) {
      await h.dispose();
      return undefined;
    }
    return new PlaywrightElement(el, this);
  }
  async owner(): Promise<DriverElement | undefined> {
    const p = this.native.parentFrame();
    if (!p) return undefined;
    return new PlaywrightElement((await this.native.frameElement()) as ElementHandle<Element>, frameOf(p));
  }
}

export class PlaywrightElement implements DriverElement {
  constructor(
    readonly handle: ElementHandle<Element>,
    readonly frame: PlaywrightFrame,
  ) {}
  call<R, A = undefined>(fn: (el: Element, arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>> {
    return this.handle.evaluate(fn as (el: Element, arg: unknown) => R, arg) as Promise<Awaited<R>>;
  }
  async box() {
    return (await this.handle.boundingBox()) ?? undefined;
  }
  async contentFrame(): Promise<DriverFrame | undefined> {
    const f = await this.handle.contentFrame();
    return f ? frameOf(f) : undefined;
  }
  scrollIntoView(timeoutMs = 5000): Promise<void> {
    return this.handle.scrollIntoViewIfNeeded({ timeout: timeoutMs });
  }
  focus(): Promise<void> {
    return this.handle.focus();
  }
  click(o: { clickCount?: number; timeoutMs: number }): Promise<void> {
    return o.clickCount === 2
      ? this.handle.dblclick({ timeout: o.timeoutMs })
      : this.handle.click({ timeout: o.timeoutMs });
  }
  hover(o: { timeoutMs: number }): Promise<void> {
    return this.handle.hover({ timeout: o.timeoutMs });
  }
  fill(text: string, o: { timeoutMs: number }): Promise<void> {
    return this.handle.fill(text, { timeout: o.timeoutMs });
  }
  press(key: string, o: { timeoutMs: number }): Promise<void> {
    return this.handle.press(key, { timeout: o.timeoutMs });
  }
  async selectValue(value: string, o: { timeoutMs: number }): Promise<void> {
    await this.handle.selectOption({ value }, { timeout: o.timeoutMs });
  }
  setChecked(checked: boolean, o: { timeoutMs: number }): Promise<void> {
    return checked
      ? this.handle.check({ timeout: o.timeoutMs })
      : this.handle.uncheck({ timeout: o.timeoutMs });
  }
  dispose(): Promise<void> {
    return this.handle.dispose();
  }
}

interface EvalReply {
  result: { value?: unknown };
  exceptionDetails?: { text: string; exception?: { description?: string; value?: unknown } };
}

class PlaywrightDriver implements PageDriver {
  readonly kind = 'playwright' as const;
  #bindings = new Map<string, (payload: string) => void>();
  #cdp: Promise<{ send(m: string, p?: object): Promise<unknown> }> | undefined;
  constructor(readonly page: Page) {}

  get mouse() {
    return this.page.mouse;
  }
  get keyboard() {
    return this.page.keyboard;
  }
  url(): string {
    return this.page.url();
  }
  title(): Promise<string> {
    return this.page.title();
  }
  viewport() {
    return this.page.viewportSize() ?? { width: 1280, height: 720 };
  }
  mainFrame(): DriverFrame {
    return frameOf(this.page.mainFrame());
  }
  frames(): DriverFrame[] {
    return this.page
      .frames()
      .filter((f) => !isRefused(f))
      .map(frameOf);
  }
  hasStartScript(name: string): boolean {
    return carries(this.page.context(), name);
  }
  async goto(url: string, o: { timeoutMs: number; waitUntil?: LoadState }): Promise<void> {
    if (o.waitUntil === 'load') await this.page.goto(url, { waitUntil: 'load', timeout: o.timeoutMs });
    else await guardedGoto(this.page, url, o.timeoutMs);
  }
  async history(move: 'back' | 'forward' | 'reload', o: { timeoutMs: number }): Promise<boolean> {
    const opts = { waitUntil: 'domcontentloaded' as const, timeout: o.timeoutMs };
    if (move === 'reload') {
      await this.page.reload(opts);
      return true;
    }
    const before = this.page.url();
    const res = move === 'back' ? await this.page.goBack(opts) : await this.page.goForward(opts);
    // Playwright answers null for a same-document move (pushState, a hash) too: it moved all the same.
    return res !== null || this.page.url() !== before;
  }
  waitForLoad(state: LoadState, timeoutMs: number): Promise<boolean> {
    return this.page.waitForLoadState(state, { timeout: timeoutMs }).then(
      () => true,
      () => false,
    );
  }
  watchNavigation(): NavigationWatch {
    const page = this.page;
    let started: Request | undefined;
    let signal: () => void = () => undefined;
    const seen = new Promise<void>((resolve) => {
      signal = resolve;
    });
    const onRequest = (r: Request) => {
      if (r.isNavigationRequest() && r.frame() === page.mainFrame()) {
        started = r;
        signal();
      }
    };
    page.on('request', onRequest);
    return {
      seen,
      started: () => started !== undefined,
      target: () => started?.url(),
      arrive: async (timeoutMs: number) => {
        if (!started) return;
        const response = await started.response().catch(() => null);
        if (!response) return;
        await page.waitForLoadState('domcontentloaded', { timeout: timeoutMs }).catch(() => undefined);
        // The old document may still be current for a moment after the response arrived.
        await page
          .waitForURL((u) => u.toString() === (started?.url() ?? u.toString()), { timeout: 2000 })
          .catch(() => undefined);
      },
      stop: () => {
        page.off('request', onRequest);
      },
    };
  }
  screenshot(): Promise<Uint8Array> {
    return this.page.screenshot({ type: 'png' });
  }
  loadedAndIdle(timeoutMs: number): Promise<boolean> {
    return loadedAndIdle(this.page, timeoutMs);
  }
  loadedAndIdleNow(): boolean {
    return loadedAndIdleNow(this.page);
  }
  settle(options: { timeoutMs?: number; quietMs?: number } = {}) {
    return settle(this.page, options);
  }
  /**
   * A CDP binding of our own session, not Playwright's exposeBinding (whose page globals name
   * Playwright to every bot check); added again on each main-frame navigation.
   */
  async addBinding(name: string, onCall: (payload: string) => void): Promise<void> {
    this.#bindings.set(name, onCall);
    await (await this.#session()).send('Runtime.addBinding', { name });
  }
  /** Our own CDP session of the page (bindings, text reads): made once, on first use. */
  #session(): Promise<{ send(m: string, p?: object): Promise<unknown> }> {
    if (!this.#cdp) {
      const page = this.page;
      this.#cdp = (async () => {
        const cdp = await page.context().newCDPSession(page);
        cdp.on('Runtime.bindingCalled', (e) => this.#bindings.get(e.name)?.(e.payload));
        page.on('framenavigated', (frame) => {
          if (frame !== page.mainFrame()) return;
          for (const n of this.#bindings.keys())
            cdp.send('Runtime.addBinding', { name: n }).catch(() => undefined);
        });
        return cdp as unknown as { send(m: string, p?: object): Promise<unknown> };
      })();
    }
    return this.#cdp;
  }
  /** Makes the CDP session now (say, while the page loads), so the first read need not wait for it. */
  prepare(): void {
    this.#session().catch(() => undefined);
  }
  /**
   * A main-frame expression whose value is a string, as a bare `Runtime.evaluate` on our own CDP
   * session (no context id: the main frame's current document). Playwright's evaluate installs its
   * utility script in every new document first, evals the expression through it and carries the
   * value through its serialiser and client layers, which the first read of a large page (a
   * ~500 kB payload) pays for. Without a CDP session (not Chromium): Playwright's evaluate.
   */
  async evaluateText(expression: string): Promise<string | undefined> {
    const cdp = await this.#session().catch(() => undefined);
    if (!cdp) return (await this.page.mainFrame().evaluate(expression)) as string | undefined;
    const reply = (await cdp.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as EvalReply;
    const ex = reply.exceptionDetails;
    if (ex)
      throw new Error(String(ex.exception?.description ?? ex.exception?.value ?? ex.text).split('\n')[0]);
    return reply.result.value as string | undefined;
  }
  onChange(listener: (change: PageChange) => void): () => void {
    const page = this.page;
    const pairs: [string, PageChange][] = [
      ['framenavigated', 'navigated'],
      ['frameattached', 'frame-attached'],
      ['framedetached', 'frame-detached'],
      ['dialog', 'dialog'],
      ['filechooser', 'dialog'],
      ['close', 'closed'],
      ['crash', 'closed'],
    ];
    const bound = pairs.map(([event, change]) => [event, () => listener(change)] as const);
    for (const [event, fn] of bound) page.on(event as 'close', fn);
    return () => {
      for (const [event, fn] of bound) page.off(event as 'close', fn);
    };
  }
  async interceptRequests(hook: RequestHook): Promise<() => Promise<void>> {
    const handler = async (route: import('playwright-core').Route) => {
      const r = route.request();
      const verdict = await hook({
        url: r.url(),
        method: r.method(),
        resourceType: r.resourceType(),
        navigation: r.isNavigationRequest(),
        redirect: r.redirectedFrom() !== null,
      });
      if (verdict.allow) await route.continue();
      else await route.abort('blockedbyclient');
    };
    await this.page.route('**/*', handler);
    return () => this.page.unroute('**/*', handler);
  }
  isClosed(): boolean {
    return this.page.isClosed();
  }
}

/** The driver of a Playwright page (one per page). */
export function playwrightDriver(page: Page): PageDriver {
  let d = drivers.get(page);
  if (!d) {
    d = brandDriver(new PlaywrightDriver(page));
    drivers.set(page, d);
  }
  return d;
}

/** Readies the page's driver ahead of its first read (see PlaywrightDriver.prepare). */
export function prepareDriver(page: Page): void {
  (playwrightDriver(page) as PlaywrightDriver).prepare();
}

const looksLikePlaywright = (p: ForeignPage): p is ForeignPage & Page =>
  typeof (p as Partial<Page>).context === 'function' && typeof (p as Partial<Page>).frames === 'function';

registerPageAdapter((p) => (looksLikePlaywright(p) ? playwrightDriver(p) : undefined));

/** The Playwright objects behind a driver's element or frame (for the Playwright-only paths). */
export const nativeHandle = (el: DriverElement): ElementHandle<Element> | undefined =>
  el instanceof PlaywrightElement ? el.handle : undefined;
export const nativeFrame = (f: DriverFrame): Frame | undefined =>
  f instanceof PlaywrightFrame ? f.native : undefined;
