/**
 * Coordinate fallback for scenario steps: after 3 failed attempts on one step the model may also
 * point at the screen (percent of the viewport, 3 decimals) to click, double-click, type at, drag
 * from/to or scroll at a place. Canvas-drawn controls, unlabelled icons and widgets outside the
 * outline are reachable that way. Every such command is resolved to the element under the point
 * and recorded with its locator (and the point inside it), so the step replays and compiles like
 * any other; a click leaves a ring on the next picture so the model can see where it landed.
 */
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { executeCoordinate } from '../actions/coordinate-execute.ts';
import type { CoordinateAction, ScreenFrame } from '../actions/coordinates.ts';
import { type PointTarget, targetAtPoint } from '../actions/point-target.ts';
import { redactText } from '../perception/redact.ts';
import type { DurableLocator } from '../perception/types.ts';
import { type RecordedCommand, type RunContext, runCommands } from './commands.ts';
import type { ActionCommand, Command, CommandResult } from './decision.ts';

/** Failed attempts on one step before coordinates are offered. */
export const FAILURES_BEFORE_COORDINATES = 3;

const Percent = z
  .number()
  .min(0)
  .max(100)
  .describe('percent of the viewport, 3 decimals (0 = left/top edge)');

export const CoordinateCommandSchema = z.object({
  kind: z.literal('coordinate'),
  action: z.enum(['click', 'dblclick', 'type', 'drag', 'scroll']),
  x: Percent,
  y: Percent,
  toX: Percent.optional().describe('drag: where to drop (percent of the viewport width)'),
  toY: Percent.optional().describe('drag: where to drop (percent of the viewport height)'),
  value: z
    .string()
    .optional()
    .describe('type: the text typed after clicking the point (secrets as %name%); scroll: down|up'),
  reason: z
    .string()
    .optional()
    .describe(
      'why no element of the outline can do this (required when the scenario is being made into a script)',
    ),
  description: z.string().optional().describe('what is at that point, in a few words'),
});
export type CoordinateCommand = z.infer<typeof CoordinateCommandSchema>;

/** Where a coordinate command landed, kept on its recorded action. */
export interface PointRecord {
  /** Percent of the viewport, as the model gave it (3 decimals). */
  x: number;
  y: number;
  /** The element under the point, as perception names it (`canvas "Colour board"`). */
  element: string;
  tag: string;
  /** The point inside the element's box (0–1 each way): what a replay needs on a drawn surface. */
  within?: { fx: number; fy: number };
  /** A canvas / svg / image / video: the place inside it matters, its locator alone does not say it. */
  positional: boolean;
  /**
   * A replay by the element's locator does the same thing (a click on a button, text into a field).
   * False for a drawn surface, a drag, or text typed into something that is not a field.
   */
  byLocator: boolean;
  reason?: string;
}

/**
 * An iteration counts as a failed attempt when one of its commands ran and failed (a verification
 * included: the state the step wanted is not there). Skipped commands do not count twice. Pure.
 */
export const isFailedAttempt = (results: readonly CommandResult[]): boolean =>
  results.some((r) => !r.ok && !r.skipped);

/** Are coordinate commands offered, after this many failed attempts in the step? Pure. */
export const coordinatesOffered = (failedAttempts: number): boolean =>
  failedAttempts >= FAILURES_BEFORE_COORDINATES;

/** Percent of the viewport → CSS pixels, rounded to 3 decimals first as the model was told. Pure. */
export function percentToPoint(
  x: number,
  y: number,
  viewport: { width: number; height: number },
): { x: number; y: number } {
  const r = (n: number) => Math.round(Math.min(100, Math.max(0, n)) * 1000) / 1000;
  return {
    x: Math.min(viewport.width - 1, (r(x) / 100) * viewport.width),
    y: Math.min(viewport.height - 1, (r(y) / 100) * viewport.height),
  };
}

/** Elements on which the place of a click carries meaning (a drawn surface). */
const POSITIONAL_TAGS = new Set(['canvas', 'svg', 'img', 'video', 'object', 'embed', 'area', 'map']);
export const isPositional = (tag: string): boolean => POSITIONAL_TAGS.has(tag.toLowerCase());

/**
 * Why a coordinate command must not run, or undefined. In script-generation mode (the scenario is
 * being made into a workflow or a Playwright script) coordinates are the last resort and must say
 * why no element of the outline would do. Pure.
 */
export function refuseCoordinate(c: CoordinateCommand, opts: { scriptMode: boolean }): string | undefined {
  if (opts.scriptMode && !c.reason?.trim())
    return 'coordinates are the last resort when the scenario is made into a script: give "reason" (why no element of the outline can do it)';
  if (c.action === 'drag' && (c.toX === undefined || c.toY === undefined))
    return 'drag needs toX and toY (where to drop)';
  if (c.action === 'type' && !c.value) return 'type needs "value" (the text to type)';
  return undefined;
}

const fmt = (n: number) => n.toFixed(3);

/** One line naming the command, as the model and the log read it. Pure. */
export function describeCoordinate(c: CoordinateCommand): string {
  const at = `(${fmt(c.x)}%, ${fmt(c.y)}%)`;
  if (c.action === 'drag') return `drag ${at} → (${fmt(c.toX ?? 0)}%, ${fmt(c.toY ?? 0)}%)`;
  if (c.action === 'type') return `type "${c.value ?? ''}" at ${at}`;
  if (c.action === 'scroll') return `scroll ${c.value === 'up' ? 'up' : 'down'} at ${at}`;
  return `${c.action === 'dblclick' ? 'double-click' : 'click'} at ${at}`;
}

/** The action command a coordinate command stands as in results and recordings. Pure. */
export function standIn(c: CoordinateCommand): ActionCommand {
  const action = c.action === 'drag' ? 'click' : c.action === 'type' ? 'type' : c.action;
  return {
    kind: 'action',
    action,
    ...(c.value !== undefined && c.action === 'type' ? { value: c.value } : {}),
    description: c.description ?? describeCoordinate(c),
  };
}

const named = (t: PointTarget) => `${t.locator.role}${t.locator.name ? ` "${t.locator.name}"` : ''}`;

/** The prompt section shown once coordinates are offered (user message: the system part stays cached). */
export function coordinatePrompt(failedAttempts: number, scriptMode: boolean): string {
  return [
    `Coordinate commands are now offered: this step failed ${failedAttempts} times by element id. Use them for what the outline does not list (a control drawn on a canvas, an unlabelled icon) — still prefer an id when one fits.`,
    '- {"kind":"coordinate","action":"click|dblclick|type|drag|scroll","x":N,"y":N} — x and y are percent of the viewport shown in the picture, with 3 decimals (0.000 = left/top edge, 50.000 = centre); aim at the centre of the thing.',
    '  type clicks the point, then types "value"; drag goes from x,y to toX,toY; scroll takes "value" down|up and scrolls whatever is under the point.',
    '- After a coordinate click the next picture shows a magenta ring where it landed; the result names the element that was under the point. Check them before saying complete.',
    ...(scriptMode
      ? [
          '- This scenario is being made into a script: coordinates are the last resort. Each coordinate command must carry "reason": why no element of the outline can do it. Without one it is refused.',
        ]
      : []),
  ].join('\n');
}

export interface PointRun {
  result: CommandResult;
  recorded?: RecordedCommand;
  navigated: boolean;
  /** CSS pixels of a click, for the ring on the next picture. */
  marker?: { x: number; y: number };
}

function boxFraction(
  box: { x: number; y: number; width: number; height: number } | null,
  p: { x: number; y: number },
): { fx: number; fy: number } | undefined {
  if (!box || box.width <= 0 || box.height <= 0) return undefined;
  const r = (n: number) => Math.round(Math.min(1, Math.max(0, n)) * 1000) / 1000;
  return { fx: r((p.x - box.x) / box.width), fy: r((p.y - box.y) / box.height) };
}

async function boxOf(page: Page, locator: DurableLocator) {
  if (locator.xpath.includes(' >> ')) return null;
  return page
    .locator(`xpath=${locator.xpath}`)
    .first()
    .boundingBox({ timeout: 1000 })
    .catch(() => null);
}

const xy = (p: { x: number; y: number }): [number, number] => [p.x, p.y];

/** Carries one coordinate command out; the element under the point is read before the input. */
export async function runCoordinate(
  ctx: RunContext & { scriptMode?: boolean },
  c: CoordinateCommand,
): Promise<PointRun> {
  const shown = standIn(c);
  const refused = refuseCoordinate(c, { scriptMode: ctx.scriptMode ?? false });
  if (refused) return { result: { command: shown, ok: false, message: refused }, navigated: false };
  const page = ctx.page;
  const viewport =
    page.viewportSize() ?? (await page.evaluate(() => ({ width: innerWidth, height: innerHeight })));
  const frame: ScreenFrame = {
    imageWidth: viewport.width,
    imageHeight: viewport.height,
    viewportWidth: viewport.width,
    viewportHeight: viewport.height,
    dpr: 1,
  };
  const at = percentToPoint(c.x, c.y, viewport);
  const target = await targetAtPoint(page, at.x, at.y);
  const box = target ? await boxOf(page, target.locator) : null;
  const urlBefore = page.url();
  const run = async (a: CoordinateAction) =>
    executeCoordinate(page, a, frame, {
      ...(ctx.variables ? { variables: ctx.variables } : {}),
      ...(ctx.checkNavigation ? { checkNavigation: ctx.checkNavigation } : {}),
    });
  let out: Awaited<ReturnType<typeof run>>;
  if (c.action === 'drag') {
    const to = percentToPoint(c.toX ?? 0, c.toY ?? 0, viewport);
    out = await run({ kind: 'drag', path: [at, to] });
  } else if (c.action === 'scroll') {
    out = await run({ kind: 'scroll', at, dx: 0, dy: c.value === 'up' ? -600 : 600 });
  } else {
    out = await run({ kind: 'click', at, button: 'left', clicks: c.action === 'dblclick' ? 2 : 1 });
    if (out.ok && c.action === 'type') out = await run({ kind: 'type', text: c.value ?? '' });
  }
  const where = target ? ` on ${named(target)}` : ' (nothing under the point)';
  const message = redactText(
    `${describeCoordinate(c)}${where}${out.ok ? '' : `: ${out.message}`}`,
    ctx.variables,
  );
  const result: CommandResult = { command: shown, ok: out.ok, message };
  const marker = c.action === 'click' || c.action === 'dblclick' || c.action === 'type' ? at : undefined;
  if (!out.ok || !target)
    return { result, navigated: out.navigated, ...(marker && out.ok ? { marker } : {}) };
  const positional = isPositional(target.tag);
  const within = boxFraction(box, at);
  // On an ordinary element a replay by locator does the same thing; text typed into a field replays as a fill.
  const fillable = c.action === 'type' && ['input', 'textarea'].includes(target.tag);
  const byLocator = !positional && c.action !== 'drag' && (c.action !== 'type' || fillable);
  const dropTarget =
    c.action === 'drag'
      ? await targetAtPoint(page, ...xy(percentToPoint(c.toX ?? 0, c.toY ?? 0, viewport)))
      : undefined;
  const method = c.action === 'type' ? (fillable ? 'fill' : 'click') : c.action;
  const point: PointRecord = {
    x: Math.round(c.x * 1000) / 1000,
    y: Math.round(c.y * 1000) / 1000,
    element: named(target),
    tag: target.tag,
    ...(within ? { within } : {}),
    positional,
    byLocator,
    ...(c.reason ? { reason: c.reason } : {}),
  };
  const recorded: RecordedCommand = {
    kind: 'action',
    step: ctx.step,
    command: shown,
    action: {
      method,
      target: { locator: target.locator },
      ...(dropTarget ? { to: { locator: dropTarget.locator } } : {}),
      ...(fillable ? { args: [c.value ?? ''] } : {}),
      ...(c.action === 'scroll' ? { args: [c.value === 'up' ? '-600' : '+600'] } : {}),
      description: shown.description ?? describeCoordinate(c),
    },
    urlBefore,
    urlAfter: out.url,
    point,
  };
  return { result, recorded, navigated: out.navigated, ...(marker ? { marker } : {}) };
}

type AnyCommand = Command | CoordinateCommand;

/**
 * Runs a batch that mixes outline commands and coordinate commands, with runCommands' rule: after a
 * failure or a page change the rest is not run (it was decided on a page that is gone).
 */
export async function runMixedCommands(
  ctx: RunContext & { scriptMode?: boolean },
  commands: readonly AnyCommand[],
): Promise<{ results: CommandResult[]; recorded: RecordedCommand[]; marker?: { x: number; y: number } }> {
  const results: CommandResult[] = [];
  const recorded: RecordedCommand[] = [];
  let marker: { x: number; y: number } | undefined;
  let stop: string | undefined;
  let i = 0;
  while (i < commands.length) {
    const c = commands[i]!;
    if (stop) {
      const command = c.kind === 'coordinate' ? standIn(c) : c;
      results.push({ command, ok: false, skipped: true, message: `not run: ${stop}` });
      i++;
      continue;
    }
    if (c.kind === 'coordinate') {
      const got = await runCoordinate(ctx, c);
      results.push(got.result);
      if (got.recorded) recorded.push(got.recorded);
      if (got.marker) marker = got.marker;
      if (!got.result.ok) stop = 'a command before it failed';
      else if (got.navigated) stop = 'the page changed (new URL); look again';
      i++;
      continue;
    }
    // The longest run of outline commands goes through runCommands as one batch.
    const batch: Command[] = [];
    while (i < commands.length && commands[i]!.kind !== 'coordinate') batch.push(commands[i++] as Command);
    const before = ctx.page.url();
    const got = await runCommands(ctx, batch);
    results.push(...got.results);
    recorded.push(...got.recorded);
    if (got.results.some((r) => !r.ok)) stop = 'a command before it failed';
    else if (ctx.page.url() !== before) stop = 'the page changed (new URL); look again';
  }
  return { results, recorded, ...(marker ? { marker } : {}) };
}
