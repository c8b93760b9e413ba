/**
 * Frames and elements of the raw-CDP driver: each frame runs scripts in its own main-world
 * execution context (tracked from `Runtime.executionContextCreated`), on the session that owns it —
 * the page's, or an out-of-process iframe's auto-attached one.
 */
import type { CdpKeyboard, CdpMouse } from './cdp-input.ts';
import type { CdpSession } from './cdp-session.ts';
import type { Box, DriverElement, DriverFrame } from './page-driver.ts';

/** What frames need from the page that owns them. */
export interface FrameHost {
  frame(id: string): CdpFrame | undefined;
  childrenOf(id: string): CdpFrame[];
  readonly mouse: CdpMouse;
  readonly keyboard: CdpKeyboard;
}

interface RemoteObject {
  type: string;
  subtype?: string;
  value?: unknown;
  objectId?: string;
  description?: string;
}
interface EvalReply {
  result: RemoteObject;
  exceptionDetails?: { text: string; exception?: RemoteObject };
}

/** How long a script waits for a frame's document to get its context (a new document is coming). */
const CONTEXT_WAIT_MS = 5000;

function thrown(reply: EvalReply): Error | undefined {
  const ex = reply.exceptionDetails;
  if (!ex) return undefined;
  const text = ex.exception?.description ?? ex.exception?.value ?? ex.text;
  return new Error(String(text).split('\n')[0]);
}

const fnSource = (fn: (...args: never[]) => unknown) => fn.toString();

export class CdpFrame implements DriverFrame {
  contextId: number | undefined;
  detached = false;
  #waiters: Array<() => void> = [];

  constructor(
    readonly id: string,
    public session: CdpSession,
    public parentId: string | undefined,
    public frameUrl: string,
    private readonly host: FrameHost,
  ) {}

  parent(): CdpFrame | undefined {
    return this.parentId ? this.host.frame(this.parentId) : undefined;
  }
  children(): CdpFrame[] {
    return this.host.childrenOf(this.id);
  }
  isDetached(): boolean {
    return this.detached;
  }
  url(): string {
    return this.frameUrl;
  }

  setContext(id: number | undefined): void {
    this.contextId = id;
    if (id === undefined) return;
    for (const w of this.#waiters.splice(0)) w();
  }

  async #context(): Promise<number> {
    if (this.contextId !== undefined) return this.contextId;
    if (this.detached) throw new Error('Frame was detached');
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error('Execution context was destroyed (no document)')),
        CONTEXT_WAIT_MS,
      );
      this.#waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    return this.contextId!;
  }

  async #evaluate(expression: string, byValue: boolean): Promise<RemoteObject> {
    const contextId = await this.#context();
    const reply = await this.session.send<EvalReply>('Runtime.evaluate', {
      expression,
      contextId,
      returnByValue: byValue,
      awaitPromise: true,
    });
    const err = thrown(reply);
    if (err) throw err;
    return reply.result;
  }

  async evaluate<R = unknown>(expression: string): Promise<R> {
    return (await this.#evaluate(expression, true)).value as R;
  }

  /** A function called with its argument: the same source each time, so the page compiles it once. */
  async #callFunction(fn: (arg: never) => unknown, arg: unknown, byValue: boolean): Promise<RemoteObject> {
    const executionContextId = await this.#context();
    const reply = await this.session.send<EvalReply>('Runtime.callFunctionOn', {
      functionDeclaration: `function (arg) { const __name = (f) => f; return (${fnSource(fn)})(arg); }`,
      executionContextId,
      arguments: arg === undefined ? [] : [{ value: arg }],
      returnByValue: byValue,
      awaitPromise: true,
    });
    const err = thrown(reply);
    if (err) throw err;
    return reply.result;
  }

  async call<R, A = undefined>(fn: (arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>> {
    return (await this.#callFunction(fn as (arg: never) => unknown, arg, true)).value as Awaited<R>;
  }

  async element<A = undefined>(
    script: string | ((arg: A) => Element | null | undefined),
    arg?: A,
  ): Promise<CdpElement | undefined> {
    const obj =
      typeof script === 'string'
        ? await this.#evaluate(script, false)
        : await this.#callFunction(script as (arg: never) => unknown, arg, false);
    if (obj.subtype === 'node' && obj.objectId) return new CdpElement(this, obj.objectId, this.host);
    if (obj.objectId)
      await this.session.send('Runtime.releaseObject', { objectId: obj.objectId }).catch(() => undefined);
    return undefined;
  }

  async owner(): Promise<CdpElement | undefined> {
    const parent = this.parent();
    if (!parent) return undefined;
    const { backendNodeId } = await parent.session.send<{ backendNodeId: number }>('DOM.getFrameOwner', {
      frameId: this.id,
    });
    const contextId = await parent.#context();
    const { object } = await parent.session.send<{ object: RemoteObject }>('DOM.resolveNode', {
      backendNodeId,
      executionContextId: contextId,
    });
    return object.objectId ? new CdpElement(parent, object.objectId, this.host) : undefined;
  }

  /** Where this frame's viewport starts in the top-level viewport. */
  async offset(): Promise<{ x: number; y: number }> {
    const parent = this.parent();
    if (!parent) return { x: 0, y: 0 };
    const owner = await this.owner();
    if (!owner) return { x: 0, y: 0 };
    try {
      const inner = await owner.call((el) => {
        const r = el.getBoundingClientRect();
        const s = getComputedStyle(el);
        return {
          x: r.left + el.clientLeft + Number.parseFloat(s.paddingLeft),
          y: r.top + el.clientTop + Number.parseFloat(s.paddingTop),
        };
      });
      const base = await parent.offset();
      return { x: base.x + inner.x, y: base.y + inner.y };
    } finally {
      await owner.dispose();
    }
  }
}

/** In the page: is the element ready for a pointer at its centre, and not covered? */
function pointerReady(el: Element): string {
  if (!el.isConnected) return 'element is not attached to the DOM';
  const r = el.getBoundingClientRect();
  const style = getComputedStyle(el);
  if (r.width < 1 || r.height < 1 || style.visibility !== 'visible') return 'element is not visible';
  if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') return 'element is not enabled';
  const root = el.getRootNode() as Document | ShadowRoot;
  const hit = root.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!hit) return 'element is outside of the viewport';
  const label = hit.closest('label');
  if (
    hit === el ||
    el.contains(hit) ||
    hit.contains(el) ||
    (!!label && (label as HTMLLabelElement).control === el)
  )
    return '';
  return `<${hit.localName}> intercepts pointer events`;
}

/**
 * In the page: is the element ready for keys (`visible`), a choice (`enabled`) or text
 * (`editable`)? The checks Playwright's fill / selectOption make before they act; '' when ready.
 */
function inputReady(el: Element, need: 'visible' | 'enabled' | 'editable'): string {
  if (!el.isConnected) return 'element is not attached to the DOM';
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1 || getComputedStyle(el).visibility !== 'visible')
    return 'element is not visible';
  if (need === 'visible') return '';
  if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') return 'element is not enabled';
  if (
    need === 'editable' &&
    ((el as HTMLInputElement).readOnly || el.getAttribute('aria-readonly') === 'true')
  )
    return 'element is not editable';
  return '';
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A timeout the way Playwright words it, or the detach error at once. */
function notReady(why: string, timeoutMs: number): Error {
  if (why.startsWith('element is not attached')) return new Error(why);
  const err = new Error(`Timeout ${timeoutMs}ms exceeded: ${why}`);
  err.name = 'TimeoutError';
  return err;
}

export class CdpElement implements DriverElement {
  constructor(
    readonly frame: CdpFrame,
    readonly objectId: string,
    private readonly host: FrameHost,
  ) {}

  async call<R, A = undefined>(fn: (el: Element, arg: A) => R | Promise<R>, arg?: A): Promise<Awaited<R>> {
    const reply = await this.frame.session.send<EvalReply>('Runtime.callFunctionOn', {
      functionDeclaration: `function (arg) { const __name = (f) => f; return (${fnSource(fn)})(this, arg); }`,
      objectId: this.objectId,
      arguments: arg === undefined ? [] : [{ value: arg }],
      returnByValue: true,
      awaitPromise: true,
    });
    const err = thrown(reply);
    if (err) throw err;
    return reply.result.value as Awaited<R>;
  }

  async box(): Promise<Box | undefined> {
    const r = await this.call((el) => {
      if (!el.isConnected) return null;
      const b = el.getBoundingClientRect();
      return b.width === 0 && b.height === 0
        ? null
        : { x: b.left, y: b.top, width: b.width, height: b.height };
    });
    if (!r) return undefined;
    const o = await this.frame.offset();
    return { x: r.x + o.x, y: r.y + o.y, width: r.width, height: r.height };
  }

  async contentFrame(): Promise<CdpFrame | undefined> {
    const { node } = await this.frame.session.send<{ node: { frameId?: string } }>('DOM.describeNode', {
      objectId: this.objectId,
    });
    return node.frameId ? this.host.frame(node.frameId) : undefined;
  }

  async scrollIntoView(): Promise<void> {
    await this.frame.session.send('DOM.scrollIntoViewIfNeeded', { objectId: this.objectId });
  }

  async focus(): Promise<void> {
    await this.call((el) => (el as HTMLElement).focus());
  }

  /** Waits until the element takes a pointer at its centre, then gives that centre. */
  async #readyPoint(timeoutMs: number): Promise<{ x: number; y: number }> {
    const deadline = performance.now() + timeoutMs;
    let why = '';
    for (let wait = 0; ; wait = Math.min(wait * 2 || 20, 200)) {
      if (wait) await sleep(wait);
      await this.scrollIntoView().catch(() => undefined);
      why = await this.call(pointerReady);
      if (!why) {
        const box = await this.box();
        if (box) return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
        why = 'element is not visible';
      }
      if (why.startsWith('element is not attached') || performance.now() + wait > deadline) break;
    }
    throw notReady(why, timeoutMs);
  }

  /**
   * Waits (up to `timeoutMs`, polling as #readyPoint does) until the element is ready for input of
   * this kind: a field shown or enabled a moment late is filled, not refused.
   */
  async #ready(need: 'visible' | 'enabled' | 'editable', timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (let wait = 0; ; wait = Math.min(wait * 2 || 20, 200)) {
      if (wait) await sleep(wait);
      const why = await this.call(inputReady, need);
      if (!why) return;
      if (why.startsWith('element is not attached') || performance.now() + wait > deadline)
        throw notReady(why, timeoutMs);
    }
  }

  async click(options: { clickCount?: number; timeoutMs: number }): Promise<void> {
    const p = await this.#readyPoint(options.timeoutMs);
    await this.host.mouse.click(p.x, p.y, { clickCount: options.clickCount ?? 1 });
  }

  async hover(options: { timeoutMs: number }): Promise<void> {
    const p = await this.#readyPoint(options.timeoutMs);
    await this.host.mouse.move(p.x, p.y);
  }

  async fill(text: string, options: { timeoutMs: number }): Promise<void> {
    // Not a field at all fails at once (below); a field not yet shown or enabled is waited for.
    const field = await this.call(
      (el) =>
        el.localName === 'input' || el.localName === 'textarea' || (el as HTMLElement).isContentEditable,
    );
    if (field) await this.#ready('editable', options.timeoutMs);
    // Inputs whose value is not typed (date, colour, range) are set, as a user's picker would.
    const how = await this.call((el, value: string) => {
      const input = el as HTMLInputElement;
      const setTypes = ['color', 'date', 'time', 'datetime-local', 'month', 'range', 'week'];
      if (el.localName === 'input' && setTypes.includes(input.type)) {
        input.focus();
        input.value = value;
        if (input.value !== value) return 'malformed value';
        el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
        el.dispatchEvent(new Event('change', { bubbles: true }));
        return 'set';
      }
      const editable =
        el.localName === 'input' || el.localName === 'textarea' || (el as HTMLElement).isContentEditable;
      if (!editable) return 'Element is not an <input>, <textarea> or [contenteditable] element';
      if ((el as HTMLInputElement).readOnly) return 'element is readonly';
      if ((el as HTMLInputElement).disabled) return 'element is not enabled';
      (el as HTMLElement).focus();
      if (el.localName === 'input' || el.localName === 'textarea') (el as HTMLInputElement).select();
      else {
        const range = document.createRange();
        range.selectNodeContents(el);
        const sel = getSelection();
        sel?.removeAllRanges();
        sel?.addRange(range);
      }
      return 'typed';
    }, text);
    if (how === 'set') return;
    if (how !== 'typed') throw new Error(how);
    if (text) await this.host.keyboard.insertText(text);
    else await this.host.keyboard.press('Delete');
  }

  async press(key: string, options: { timeoutMs: number }): Promise<void> {
    await this.#ready('visible', options.timeoutMs);
    await this.focus();
    await this.host.keyboard.press(key);
  }

  async selectValue(value: string, options: { timeoutMs: number }): Promise<void> {
    if (await this.call((el) => el.localName === 'select')) await this.#ready('enabled', options.timeoutMs);
    const ok = await this.call((el, v: string) => {
      if (el.localName !== 'select') return false;
      const select = el as HTMLSelectElement;
      for (const o of Array.from(select.options)) o.selected = o.value === v;
      el.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
      return true;
    }, value);
    if (!ok) throw new Error('Element is not a <select> element');
  }

  async setChecked(checked: boolean, options: { timeoutMs: number }): Promise<void> {
    const state = () =>
      this.call((el) => {
        if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio'))
          return el.checked;
        const aria = el.getAttribute('aria-checked') ?? el.getAttribute('aria-pressed');
        return aria === null ? null : aria === 'true';
      });
    const now = await state();
    if (now === null) throw new Error('Not a checkbox or radio button');
    if (now === checked) return;
    await this.click(options);
    if ((await state()) !== checked) throw new Error('Clicking the checkbox did not change its state');
  }

  async dispose(): Promise<void> {
    await this.frame.session
      .send('Runtime.releaseObject', { objectId: this.objectId })
      .catch(() => undefined);
  }
}
