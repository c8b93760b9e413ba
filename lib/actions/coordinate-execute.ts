/**
 * Carries one coordinate action out on a page: points scaled from the model's picture to CSS pixels,
 * secrets filled at the last moment, navigation through the guard, and the element under a pointer
 * action recorded with its locator. Failures are values, as for every action.
 */
import { asDriver, type PageInput } from '../browser/page-driver.ts';
import {
  type CoordinateAction,
  describeCoordinateAction,
  type ScreenFrame,
  toViewport,
} from './coordinates.ts';
import { substitute } from './helpers.ts';
import { type PointTarget, targetAtPoint } from './point-target.ts';

export interface CoordinateContext {
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  /** Navigation timeout (default 30 s). */
  timeoutMs?: number;
}

export interface CoordinateOutcome {
  ok: boolean;
  /** What happened, secrets as `%name%`. */
  message: string;
  /** What a pointer action landed on (click, drag start, scroll, move). */
  target?: PointTarget;
  /** The point in CSS pixels, for the click marker on the next picture. */
  cssPoint?: { x: number; y: number };
  navigated: boolean;
  url: string;
}

/** Scroll steps longer than this are cut: a model asking for 100,000 px wants "to the end", not a hang. */
const MAX_SCROLL_PX = 20_000;
const MAX_WAIT_MS = 10_000;

export async function executeCoordinate(
  input: PageInput,
  action: CoordinateAction,
  frame: ScreenFrame,
  ctx: CoordinateContext = {},
): Promise<CoordinateOutcome> {
  const page = asDriver(input);
  const before = page.url();
  const done = (ok: boolean, message: string, extra: Partial<CoordinateOutcome> = {}): CoordinateOutcome => ({
    ok,
    message,
    navigated: page.url() !== before,
    url: page.url(),
    ...extra,
  });
  const describe = describeCoordinateAction(action);
  try {
    switch (action.kind) {
      case 'click': {
        const p = toViewport(action.at, frame);
        const target = await targetAtPoint(page, p.x, p.y);
        await page.mouse.click(p.x, p.y, { button: action.button, clickCount: action.clicks });
        return done(
          true,
          `${describe}${target ? ` on ${target.locator.role} "${target.locator.name}"` : ''}`,
          {
            ...(target ? { target } : {}),
            cssPoint: p,
          },
        );
      }
      case 'move': {
        const p = toViewport(action.at, frame);
        const target = await targetAtPoint(page, p.x, p.y);
        await page.mouse.move(p.x, p.y);
        return done(true, describe, { ...(target ? { target } : {}), cssPoint: p });
      }
      case 'drag': {
        const points = action.path.map((pt) => toViewport(pt, frame));
        const [first, ...rest] = points;
        if (!first || rest.length === 0) return done(false, 'drag needs at least two points');
        const target = await targetAtPoint(page, first.x, first.y);
        await page.mouse.move(first.x, first.y);
        await page.mouse.down();
        // Intermediate moves so drag handlers that follow the pointer see it travel.
        for (const pt of rest) await page.mouse.move(pt.x, pt.y, { steps: 5 });
        await page.mouse.up();
        return done(true, describe, { ...(target ? { target } : {}), cssPoint: first });
      }
      case 'scroll': {
        const p = toViewport(action.at, frame);
        const target = await targetAtPoint(page, p.x, p.y);
        await page.mouse.move(p.x, p.y);
        const clamp = (n: number) => Math.max(-MAX_SCROLL_PX, Math.min(MAX_SCROLL_PX, n));
        await page.mouse.wheel(clamp(action.dx), clamp(action.dy));
        return done(true, describe, { ...(target ? { target } : {}), cssPoint: p });
      }
      case 'type': {
        const [text] = substitute([action.text], ctx.variables);
        await page.keyboard.type(text ?? '');
        return done(true, describe);
      }
      case 'keys': {
        if (action.chord.length === 0) return done(false, 'no keys to press');
        await page.keyboard.press(action.chord.join('+'));
        return done(true, describe);
      }
      case 'wait':
        await new Promise((r) => setTimeout(r, Math.max(0, Math.min(MAX_WAIT_MS, action.ms))));
        return done(true, describe);
      case 'screenshot':
        return done(true, describe);
      case 'goto': {
        await ctx.checkNavigation?.(action.url);
        await page.goto(action.url, { timeoutMs: ctx.timeoutMs ?? 30_000 });
        return done(true, describe);
      }
      case 'back':
        await page.history('back', { timeoutMs: ctx.timeoutMs ?? 30_000 }).catch(() => false);
        return done(true, describe);
    }
  } catch (err) {
    const e = err as Error;
    // The guard's refusal (NetworkBlockedError on Node, the browser's own words over raw CDP).
    const blocked = e.name === 'NetworkBlockedError' || /ERR_BLOCKED_BY_CLIENT/.test(e.message);
    const why = blocked ? `blocked: ${e.message}` : e.message.split('\n')[0];
    return done(false, `${describe} failed: ${why}`);
  }
}
