/**
 * The page-driver port: the few things perception, actions and ops need from a live page, so the
 * same code runs over Playwright on Node (playwright-driver.ts) and over raw CDP on a web-standard
 * WebSocket on an edge runtime (cdp-driver.ts). Nothing here names a Node or Playwright type.
 *
 * Coordinates are CSS pixels of the top-level viewport. Scripts cross as self-contained functions
 * (serialised with `toString()`) or expression strings, with one JSON-able argument.
 */

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type MouseButton = 'left' | 'right' | 'middle';
export type LoadState = 'domcontentloaded' | 'load';

/** One frame (the main frame, a same-process child, or an out-of-process iframe). */
export interface DriverFrame {
  /** Stable for the frame's life (the browser's frame id). */
  readonly id: string;
  parent(): DriverFrame | undefined;
  children(): DriverFrame[];
  isDetached(): boolean;
  url(): string;
  /** Evaluates an expression in the frame's page world; a promise is awaited; the value comes back as JSON. */
  evaluate<R = unknown>(expression: string): Promise<R>;
  /**
   * Optional: an expression whose value is a string (or undefined), handed back as it is. For big
   * results (a page read): an adapter whose `evaluate` carries values through layers of its own
   * may have a shorter path for a plain string.
   */
  evaluateText?(expression: string): Promise<string | undefined>;
  /** Calls a self-contained function in the frame with one JSON-able argument. */
  call<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>>;
  /**
   * The element an expression (or a self-contained function called with `arg`) gives; undefined
   * when the value is no element. A function with an argument compiles once per document.
   */
  element<A = undefined>(
    script: string | ((arg: A) => Element | null | undefined),
    arg?: A,
  ): Promise<DriverElement | undefined>;
  /** The <iframe>/<frame> element this frame is shown in (undefined for the main frame). */
  owner(): Promise<DriverElement | undefined>;
}

/**
 * A live element. The patient operations (click … setChecked) wait for the element to be ready
 * up to `timeoutMs` and fail with a readable Error when it never is.
 */
export interface DriverElement {
  readonly frame: DriverFrame;
  call<R, A = undefined>(fn: (el: Element, arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>>;
  /** Border box in top-level viewport pixels; undefined when not rendered. */
  box(): Promise<Box | undefined>;
  /** The document of an <iframe> element. */
  contentFrame(): Promise<DriverFrame | undefined>;
  scrollIntoView(timeoutMs?: number): Promise<void>;
  focus(): Promise<void>;
  click(options: { clickCount?: number; timeoutMs: number }): Promise<void>;
  hover(options: { timeoutMs: number }): Promise<void>;
  /** Replaces the field's text, as a user selecting all and typing would (input events fire). */
  fill(text: string, options: { timeoutMs: number }): Promise<void>;
  /** Focuses the element and presses a key or chord ("Enter", "Control+A"). */
  press(key: string, options: { timeoutMs: number }): Promise<void>;
  /** Picks the <option> with this value (input and change fire). */
  selectValue(value: string, options: { timeoutMs: number }): Promise<void>;
  setChecked(checked: boolean, options: { timeoutMs: number }): Promise<void>;
  dispose(): Promise<void>;
}

export interface DriverMouse {
  move(x: number, y: number, options?: { steps?: number }): Promise<void>;
  down(options?: { button?: MouseButton }): Promise<void>;
  up(options?: { button?: MouseButton }): Promise<void>;
  click(x: number, y: number, options?: { button?: MouseButton; clickCount?: number }): Promise<void>;
  wheel(dx: number, dy: number): Promise<void>;
}

export interface DriverKeyboard {
  /** A key or chord: "Enter", "a", "Shift+Tab", "Control+A". */
  press(key: string): Promise<void>;
  down(key: string): Promise<void>;
  up(key: string): Promise<void>;
  /** Types text key by key (keydown / input / keyup per character). */
  type(text: string): Promise<void>;
  /** Inserts text in one input event, as an IME or paste would. */
  insertText(text: string): Promise<void>;
}

/** A top-level navigation an input may have started, watched from before the input. */
export interface NavigationWatch {
  /** Resolves when a main-frame navigation request is seen. */
  readonly seen: Promise<void>;
  started(): boolean;
  /** The URL the navigation asked for. */
  target(): string | undefined;
  /** After `seen`: waits for the response and the new document's DOMContentLoaded (capped). */
  arrive(timeoutMs: number): Promise<void>;
  stop(): void;
}

/** A request about to leave the browser, as the guard hook sees it. */
export interface OutgoingRequest {
  url: string;
  method: string;
  /** Document, Script, Image, XHR, Fetch, WebSocket … as the browser names it. */
  resourceType: string;
  navigation: boolean;
  /** A redirect hop of an earlier request (where the protocol exposes it). */
  redirect: boolean;
  frameId?: string;
}

export type GuardVerdict = { allow: true } | { allow: false; reason: string };
export type RequestHook = (request: OutgoingRequest) => GuardVerdict | Promise<GuardVerdict>;

/** Events perception's held reads listen to: anything that may have changed the page. */
export type PageChange = 'navigated' | 'frame-attached' | 'frame-detached' | 'dialog' | 'closed';

export interface PageDriver {
  /** Which adapter: for logs and for the few Playwright-only paths. */
  readonly kind: 'playwright' | 'cdp';
  url(): string;
  title(): Promise<string>;
  viewport(): { width: number; height: number };
  mainFrame(): DriverFrame;
  /** Every frame, main first, out-of-process iframes included. */
  frames(): DriverFrame[];
  /**
   * Optional: whether every document of this page ran the start script `name` (start-scripts.ts)
   * before its own code. Absent or false: the caller brings what it needs itself.
   */
  hasStartScript?(name: string): boolean;
  readonly mouse: DriverMouse;
  readonly keyboard: DriverKeyboard;
  /** Navigates the main frame and waits for `waitUntil` (default domcontentloaded). */
  goto(url: string, options: { timeoutMs: number; waitUntil?: LoadState }): Promise<void>;
  /** Back / forward / reload; false when there was no entry to go to. */
  history(move: 'back' | 'forward' | 'reload', options: { timeoutMs: number }): Promise<boolean>;
  /** Waits for the current document to reach the state; false on timeout. */
  waitForLoad(state: LoadState, timeoutMs: number): Promise<boolean>;
  watchNavigation(): NavigationWatch;
  /** PNG of the viewport. */
  screenshot(): Promise<Uint8Array>;
  /** Loaded and no ordinary request in flight (waits up to `timeoutMs` for DOMContentLoaded). */
  loadedAndIdle(timeoutMs: number): Promise<boolean>;
  /** The same without waiting. */
  loadedAndIdleNow(): boolean;
  /** Waits (capped) for no ordinary request in flight and a DOM quiet for `quietMs`. */
  settle(options?: { timeoutMs?: number; quietMs?: number }): Promise<{ quiet: boolean; ms: number }>;
  /** A page-wide binding the page's scripts can call (re-added on navigation). */
  addBinding(name: string, onCall: (payload: string) => void): Promise<void>;
  onChange(listener: (change: PageChange) => void): () => void;
  /** The guard's hook: every request leaving the page is put to it first. Resolves once armed. */
  interceptRequests(hook: RequestHook): Promise<() => Promise<void>>;
  isClosed(): boolean;
}

const BRAND = Symbol.for('browserfn.page-driver');

/** Marks an object as a driver so `asDriver` passes it through. */
export function brandDriver<T extends PageDriver>(driver: T): T {
  Object.defineProperty(driver, BRAND, { value: true });
  return driver;
}

export const isPageDriver = (v: unknown): v is PageDriver =>
  typeof v === 'object' && v !== null && (v as Record<symbol, unknown>)[BRAND] === true;

/**
 * What the Node-side callers may still hand over: a Playwright Page, wrapped once by the adapter
 * that registered itself (playwright-driver.ts), so perception never names Playwright.
 */
export interface ForeignPage {
  url(): string;
  mainFrame(): unknown;
}
export type PageInput = PageDriver | ForeignPage;

type Adapter = (page: ForeignPage) => PageDriver | undefined;
const adapters: Adapter[] = [];

export function registerPageAdapter(adapter: Adapter): void {
  if (!adapters.includes(adapter)) adapters.push(adapter);
}

export function asDriver(page: PageInput): PageDriver {
  if (isPageDriver(page)) return page;
  for (const adapter of adapters) {
    const driver = adapter(page);
    if (driver) return driver;
  }
  throw new Error('no page-driver adapter for this page: import lib/browser/playwright-driver.ts on Node');
}

/** A self-contained function as an expression calling it with one JSON argument. */
export function callExpression(fn: (...args: never[]) => unknown, ...args: unknown[]): string {
  // A no-op `__name`: transpilers may wrap nested helpers in one (see perception/injected/source.ts).
  const list = args.map((a) => (a === undefined ? 'undefined' : JSON.stringify(a))).join(', ');
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${list}); })()`;
}
