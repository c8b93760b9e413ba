import { asDriver, type DriverElement, type PageDriver, type PageInput } from '../browser/page-driver.ts';
import { withinTime } from '../perception/collect-frames.ts';
import { forgetRead } from '../perception/held-read.ts';
import {
  type Found,
  findByLocator,
  findElementById,
  findElementByXPath,
  toLocator,
} from '../perception/locate.ts';
import type { Snapshot } from '../perception/types.ts';
import { fastFill } from './fast-fill.ts';
import { classifyError, describeTarget, substitute } from './helpers.ts';
import { watchNavigation } from './navigation-watch.ts';
import { fastPointer, isChecked } from './pointer.ts';
import type { Action, ActionErrorKind, ActionOutcome, ActionTarget } from './types.ts';

export interface ExecuteContext {
  /** Snapshot the action's ids refer to. */
  snapshot?: Snapshot;
  /** `%name%` → value, substituted into args only at the last moment. */
  variables?: Record<string, string>;
  /** Per-action timeout (default 5 s; navigation 30 s). */
  timeoutMs?: number;
  /** Checks a URL before `goto`; throws (or rejects) with a readable reason when it is not allowed. */
  checkNavigation?: (url: string) => Promise<void>;
}

class ActionFailure extends Error {
  constructor(
    readonly kind: ActionErrorKind,
    message: string,
  ) {
    super(message);
  }
}

async function locate(page: PageDriver, target: ActionTarget, ctx: ExecuteContext): Promise<Found> {
  if ('id' in target) {
    if (!ctx.snapshot)
      throw new ActionFailure('invalid', `target [${target.id}] needs the snapshot it came from`);
    const found = await findElementById(page, ctx.snapshot, target.id);
    if ('error' in found) throw new ActionFailure('not_found', found.error);
    return found;
  }
  if ('locator' in target) {
    const locator = toLocator(target.locator);
    // With a snapshot at hand, let role + name rescue a locator whose path moved.
    const match = ctx.snapshot && locator.role ? findByLocator(ctx.snapshot, locator) : undefined;
    if (match && ctx.snapshot) {
      const found = await findElementById(page, ctx.snapshot, match.id);
      if (!('error' in found))
        return { ...found, via: match.locator.xpath === locator.xpath ? found.via : 'role-name' };
    }
    const found = await findElementByXPath(page, locator.xpath);
    if ('error' in found) throw new ActionFailure('not_found', found.error);
    return found;
  }
  throw new ActionFailure('invalid', 'a point target has no element');
}

function pointOf(page: PageDriver, target: ActionTarget): { x: number; y: number } | undefined {
  if (!('xPct' in target)) return undefined;
  const vp = page.viewport();
  if (target.xPct < 0 || target.xPct > 100 || target.yPct < 0 || target.yPct > 100)
    throw new ActionFailure('invalid', 'xPct and yPct must be between 0 and 100');
  return { x: (target.xPct / 100) * vp.width, y: (target.yPct / 100) * vp.height };
}

async function centre(handle: DriverElement): Promise<{ x: number; y: number }> {
  await handle.scrollIntoView(2000).catch(() => undefined);
  const box = await handle.box();
  if (!box) throw new ActionFailure('not_actionable', 'element has no box (hidden or detached)');
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

type ScrollSpec = { kind: 'pct' | 'by' | 'top' | 'bottom' | 'up' | 'down'; amount: number };

function parseScroll(spec: string): ScrollSpec {
  const s = spec.trim().toLowerCase();
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(s);
  if (pct) return { kind: 'pct', amount: Number(pct[1]) };
  const px = /^([+-]?\d+)(?:px)?$/.exec(s);
  if (px) return { kind: 'by', amount: Number(px[1]) };
  if (s === 'top' || s === 'bottom' || s === 'up' || s === 'down') return { kind: s, amount: 0 };
  throw new ActionFailure(
    'invalid',
    `scroll takes "50%", "+600", "top", "bottom", "up" or "down", not "${spec}"`,
  );
}

/**
 * Runs in the page: scrolls the element, or the document when there is none. An element that does
 * not scroll itself hands it to its nearest ancestor that does, else to the page, as a mouse wheel
 * over it would: setting its own scrollTop would move nothing and still read as done.
 */
function applyScroll(el: Element | null, spec: ScrollSpec): void {
  const doc = document.scrollingElement ?? document.documentElement;
  const scrolls = (b: Element) =>
    b === doc ||
    (b.scrollHeight > b.clientHeight && /(auto|scroll|overlay)/.test(getComputedStyle(b).overflowY));
  let box: Element = el ?? doc;
  while (!scrolls(box)) box = box.parentElement ?? doc;
  const max = box.scrollHeight - box.clientHeight;
  const page = box.clientHeight * 0.8;
  const next: Record<ScrollSpec['kind'], number> = {
    pct: (max * spec.amount) / 100,
    by: box.scrollTop + spec.amount,
    top: 0,
    bottom: max,
    up: box.scrollTop - page,
    down: box.scrollTop + page,
  };
  box.scrollTop = next[spec.kind];
}

async function scroll(page: PageDriver, el: Found | undefined, arg: string | undefined): Promise<string> {
  if (el && arg === undefined) {
    await el.element.scrollIntoView(5000);
    return 'scrolled the element into view';
  }
  const spec = parseScroll(arg ?? 'down');
  if (el) await el.element.call(applyScroll, spec);
  else await page.mainFrame().evaluate(`(${applyScroll.toString()})(null, ${JSON.stringify(spec)})`);
  return spec.kind === 'pct'
    ? `scrolled to ${spec.amount}%`
    : spec.kind === 'by'
      ? `scrolled by ${spec.amount}px`
      : `scrolled ${spec.kind}`;
}

/**
 * A field with `maxlength` keeps only the start of a longer text, silently: the act would report
 * what it did not do (a login then fails on a cut password). Refused before anything is typed. The
 * message gives no lengths: the text may be a secret.
 */
async function assertFits(handle: DriverElement, text: string, shown: string): Promise<void> {
  const max = await handle.call((n) =>
    n instanceof HTMLInputElement || n instanceof HTMLTextAreaElement ? n.maxLength : -1,
  );
  if (max >= 0 && text.length > max)
    throw new ActionFailure(
      'invalid',
      `${shown} takes at most ${max} characters and the text is longer: the field would keep only its start`,
    );
}

/** What `run` learned that the caller needs afterwards. */
interface RunNotes {
  /** The input could well have started a navigation worth waiting for. */
  mayNavigate: boolean;
}

async function run(page: PageDriver, action: Action, ctx: ExecuteContext, notes: RunNotes): Promise<string> {
  const timeout = ctx.timeoutMs ?? 5000;
  const raw = action.args ?? [];
  const args = substitute(raw, ctx.variables);
  const target = action.target;
  const point = target ? pointOf(page, target) : undefined;
  const needsElement = !point && target !== undefined;
  const el = needsElement ? await locate(page, target, ctx) : undefined;
  const shown = describeTarget(action);
  const need = (n: number, what: string) => {
    if (args.length < n || args[n - 1] === undefined)
      throw new ActionFailure('invalid', `${action.method} needs ${what}`);
  };

  switch (action.method) {
    case 'click':
    case 'dblclick':
    case 'hover': {
      if (point) {
        if (action.method === 'hover') await page.mouse.move(point.x, point.y);
        else await page.mouse.click(point.x, point.y, { clickCount: action.method === 'dblclick' ? 2 : 1 });
      } else if (el) {
        // Fast path first; the driver's patient path (waits, retries, precise errors) otherwise.
        const fast = await fastPointer(page, el.element, action.method);
        if (fast) notes.mayNavigate = fast.navigates;
        else {
          if (action.method === 'click') await el.element.click({ timeoutMs: timeout });
          else if (action.method === 'dblclick')
            await el.element.click({ clickCount: 2, timeoutMs: timeout });
          else await el.element.hover({ timeoutMs: timeout });
        }
      } else throw new ActionFailure('invalid', `${action.method} needs a target`);
      return `${action.method === 'dblclick' ? 'double-clicked' : action.method === 'hover' ? 'hovered' : 'clicked'} ${shown}`;
    }
    case 'fill':
    case 'type': {
      need(1, 'the text to enter');
      const text = args[0]!;
      if (el) {
        await assertFits(el.element, text, shown);
        if (action.method === 'fill') {
          if (!(await fastFill(page, el.element, text))) await el.element.fill(text, { timeoutMs: timeout });
        } else {
          await el.element.focus();
          await page.keyboard.type(text);
        }
      } else if (point) {
        await page.mouse.click(point.x, point.y);
        await page.keyboard.type(text);
      } else await page.keyboard.type(text);
      // The message repeats the placeholder, never the value it stood for.
      return `${action.method === 'fill' ? 'filled' : 'typed'} "${raw[0]}" into ${shown}`;
    }
    case 'press': {
      need(1, 'a key such as Enter or Control+A');
      notes.mayNavigate = /Enter$/.test(args[0]!);
      if (el) await el.element.press(args[0]!, { timeoutMs: timeout });
      else await page.keyboard.press(args[0]!);
      return `pressed ${raw[0]}${el ? ` on ${shown}` : ''}`;
    }
    case 'select': {
      need(1, 'the option label or value');
      if (!el) throw new ActionFailure('invalid', 'select needs a target <select>');
      notes.mayNavigate = false;
      const choice = args[0]!;
      // Resolve label, value or case-insensitive label in the page first: selectOption would
      // otherwise wait its whole timeout on the forms that do not match.
      const found = await el.element.call((n, want: string) => {
        if (n.localName !== 'select') return { isSelect: false, value: null };
        const options = Array.from((n as HTMLSelectElement).options);
        const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();
        const opt =
          options.find((o) => o.label === want || o.text === want) ??
          options.find((o) => o.value === want) ??
          options.find((o) => norm(o.label) === norm(want) || norm(o.text) === norm(want));
        return { isSelect: true, value: opt ? opt.value : null };
      }, choice);
      if (!found.isSelect)
        throw new ActionFailure(
          'not_actionable',
          `${shown} is not a native <select>; open it and click the option`,
        );
      if (found.value === null || found.value === undefined)
        throw new ActionFailure('not_found', `no option "${raw[0]}" in ${shown}`);
      await el.element.selectValue(found.value, { timeoutMs: timeout });
      return `selected "${raw[0]}" in ${shown}`;
    }
    case 'check':
    case 'uncheck': {
      if (!el) throw new ActionFailure('invalid', `${action.method} needs a target`);
      notes.mayNavigate = false;
      const want = action.method === 'check';
      const now = await isChecked(el.element).catch(() => undefined);
      if (now !== want) {
        const clicked = now !== undefined && (await fastPointer(page, el.element, 'click'));
        if (!clicked || (await isChecked(el.element).catch(() => undefined)) !== want)
          await el.element.setChecked(want, { timeoutMs: timeout });
      }
      return `${action.method === 'check' ? 'checked' : 'unchecked'} ${shown}`;
    }
    case 'scroll':
      return scroll(page, el, args[0]);
    case 'drag': {
      if (!target || !action.to) throw new ActionFailure('invalid', 'drag needs a target and a `to` target');
      const from = point ?? (el ? await centre(el.element) : undefined);
      const toPoint = pointOf(page, action.to);
      const toEl = toPoint ? undefined : await locate(page, action.to, ctx);
      const to = toPoint ?? (toEl ? await centre(toEl.element) : undefined);
      if (!from || !to) throw new ActionFailure('not_actionable', 'drag endpoints have no position');
      await page.mouse.move(from.x, from.y);
      await page.mouse.down();
      await page.mouse.move((from.x + to.x) / 2, (from.y + to.y) / 2, { steps: 5 });
      await page.mouse.move(to.x, to.y, { steps: 5 });
      await page.mouse.up();
      return `dragged ${shown} to ${describeTarget({ method: 'drag', target: action.to })}`;
    }
    case 'goto': {
      need(1, 'a URL');
      const url = new URL(args[0]!, page.url() === 'about:blank' ? undefined : page.url()).toString();
      if (ctx.checkNavigation) {
        try {
          await ctx.checkNavigation(url);
        } catch (err) {
          throw new ActionFailure('blocked', (err as Error).message);
        }
      }
      try {
        await page.goto(url, { timeoutMs: Math.max(timeout, 30_000) });
      } catch (err) {
        // The guard refused it: at the request (the browser's own words) or at a redirect hop.
        const e = err as Error;
        if (e.name === 'NetworkBlockedError') throw new ActionFailure('blocked', e.message);
        if (/ERR_BLOCKED_BY_CLIENT/.test(e.message))
          throw new ActionFailure('blocked', `Blocked request to ${url} by the network guard`);
        throw err;
      }
      return `opened ${raw[0]}`;
    }
    case 'back':
    case 'forward':
    case 'reload': {
      const moved = await page.history(action.method, { timeoutMs: Math.max(timeout, 30_000) });
      if (!moved && action.method !== 'reload')
        return `nothing to go ${action.method} to; stayed on the page`;
      return action.method === 'reload' ? 'reloaded the page' : `went ${action.method}`;
    }
    case 'wait': {
      const spec = args[0] ?? '1000';
      if (spec.startsWith('text:')) {
        const text = spec.slice(5);
        await waitForText(page, text, ctx.timeoutMs ?? 10_000);
        return `waited for "${text}"`;
      }
      const ms = Number(spec);
      if (!Number.isFinite(ms) || ms < 0 || ms > 60_000)
        throw new ActionFailure('invalid', 'wait takes milliseconds (0–60000) or "text:…"');
      await sleep(ms);
      return `waited ${ms} ms`;
    }
    default: {
      const method: never = action.method;
      throw new ActionFailure('invalid', `unknown method ${String(method)}`);
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs in the page: is the text shown (case and spacing aside) anywhere in the rendered body? */
function showsText(want: string): boolean {
  const norm = (t: string) => t.replace(/\s+/g, ' ').trim().toLowerCase();
  return norm(document.body?.innerText ?? '').includes(norm(want));
}

/** Waits until the page shows the text, polling; a TimeoutError when it never does. */
async function waitForText(page: PageDriver, text: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    // A frame with no document yet (a `javascript:` src, a stalled load) would never answer.
    const frames = page.frames().filter((f) => f.url() !== '');
    const seen = await Promise.all(frames.map((f) => withinTime(f.call(showsText, text).catch(() => false))));
    if (seen.some(Boolean)) return;
    if (performance.now() >= deadline) {
      const err = new Error(`Timeout ${timeoutMs}ms exceeded waiting for text "${text}"`);
      err.name = 'TimeoutError';
      throw err;
    }
    await sleep(100);
  }
}

/** Inputs that can make the page navigate (links, submit buttons, Enter in a form). */
const NAVIGATING_INPUTS = new Set<Action['method']>(['click', 'dblclick', 'press', 'check', 'select']);

/**
 * Does one typed action. Logic failures (not found, not actionable, blocked…) come back as a
 * value with a kind; only programming errors throw.
 */
export async function executeAction(
  input: PageInput,
  action: Action,
  ctx: ExecuteContext = {},
): Promise<ActionOutcome> {
  const page = asDriver(input);
  const started = performance.now();
  const before = page.url();
  // Whatever the action changes, no earlier read of the page may answer for it afterwards.
  forgetRead(page);
  const finish = (ok: boolean, message: string, error?: { kind: ActionErrorKind; message: string }) => {
    forgetRead(page);
    const url = page.url();
    const outcome: ActionOutcome = {
      ok,
      method: action.method,
      message,
      navigated: url !== before,
      url,
      ms: Math.round(performance.now() - started),
    };
    if (error) outcome.error = error;
    return outcome;
  };
  const watch = NAVIGATING_INPUTS.has(action.method) ? watchNavigation(page) : undefined;
  const notes: RunNotes = { mayNavigate: true };
  try {
    const message = await run(page, action, ctx, notes);
    await watch?.wait(notes.mayNavigate);
    return finish(true, message);
  } catch (err) {
    await watch?.wait(false);
    const { kind, message } =
      err instanceof ActionFailure ? { kind: err.kind, message: err.message } : classifyError(err as Error);
    // Error text from the browser may quote what was typed; keep secrets out of it.
    const safe = substituteBack(message, ctx.variables);
    return finish(false, `could not ${action.method} ${describeTarget(action)}: ${safe}`, {
      kind,
      message: safe,
    });
  }
}

function substituteBack(text: string, variables: Record<string, string> | undefined): string {
  let out = text;
  for (const [name, value] of Object.entries(variables ?? {}))
    if (value) out = out.split(value).join(`%${name}%`);
  return out;
}
