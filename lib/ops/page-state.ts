import { asDriver, type PageDriver } from '../browser/page-driver.ts';
import { QUIET_MS } from '../browser/settle.ts';
import { spentOn } from '../llm/spent.ts';
import {
  addUsage,
  type ChatMessage,
  emptyUsage,
  type LlmClient,
  type StructuredRequest,
  type StructuredResult,
  type Usage,
} from '../llm/types.ts';

export { emptyUsage };

import {
  readAhead as readAheadOfPage,
  type SnapshotCallOptions,
  SnapshotError,
  snapshot,
  snapshotIfQuiet,
} from '../perception/snapshot.ts';
import { marksPicture } from '../perception/som.ts';
import type { Snapshot } from '../perception/types.ts';
import { type OpContext, OpError } from './types.ts';

/** The page of an op, through the port (a Node caller's Playwright page is wrapped once). */
export const driverOf = (ctx: OpContext): PageDriver => asDriver(ctx.page);

/** Page text per act / observe prompt unless the call says otherwise: enough for any ordinary page. */
export const DEFAULT_PAGE_BUDGET = 6000;

interface ReadExtra {
  keywords?: string[];
  chunk?: number;
  budget?: number | null;
  /** The call only reads: it may answer from the last read if the page has not changed since. */
  readOnly?: boolean;
}

/** The read failed because its scope selector is no valid selector or matches nothing (collect.ts). */
export const isSelectorMiss = (err: unknown): boolean =>
  err instanceof SnapshotError && /^(invalid selector|no element matches selector): /.test(err.message);

/**
 * A page read the way every op needs it: settled, snapshotted, secrets replaced by their names.
 * With `selectorFallback`, a scope selector that finds nothing reads the whole page instead.
 */
export async function readPage(ctx: OpContext, extra: ReadExtra = {}): Promise<Snapshot> {
  const { selector, selectorFallback, ...unscoped } = ctx.options ?? {};
  try {
    return await readSettled(ctx, extra);
  } catch (err) {
    if (!selector || !selectorFallback || !isSelectorMiss(err)) throw err;
    ctx.log?.({
      level: 'info',
      msg: `selector ${selector} matched nothing (or is no valid CSS / XPath): the whole page was read instead`,
    });
    return readSettled({ ...ctx, options: unscoped }, extra);
  }
}

async function readSettled(ctx: OpContext, extra: ReadExtra): Promise<Snapshot> {
  // null: the whole page (the caller splits it itself).
  const budget =
    extra.budget === null ? undefined : (extra.budget ?? ctx.options?.budget ?? DEFAULT_PAGE_BUDGET);
  const page = driverOf(ctx);
  try {
    // Most calls meet a page that is already still: check and read in one round trip.
    if (await page.loadedAndIdle(3000)) {
      await assertPageLoaded(ctx);
      const quick = await snapshotIfQuiet(page, QUIET_MS, snapshotOptions(ctx, extra, budget));
      if (quick) return quick;
    }
    await page.settle({ timeoutMs: 3000 });
    await assertPageLoaded(ctx);
    return await read(ctx, extra, budget);
  } catch (err) {
    // A navigation started by script after the last action replaced the document mid-read:
    // wait for the new one and read that.
    if (!/context was destroyed|navigat|detached/i.test((err as Error).message)) throw err;
    await page.waitForLoad('domcontentloaded', 10_000);
    await page.settle({ timeoutMs: 3000 });
    await assertPageLoaded(ctx);
    return read(ctx, extra, budget);
  }
}

/**
 * In a session, after an action: reads the page for the call likely to come next (an observe or
 * extract), while that call's request is still on its way. Only a settled small page is read.
 */
export function readAhead(ctx: OpContext): void {
  if (!ctx.reuseReads) return;
  const page = driverOf(ctx);
  readAheadOfPage(page, snapshotOptions(ctx, { readOnly: true }, undefined), QUIET_MS, () =>
    page.loadedAndIdleNow(),
  );
}

/** The page on screen must be the one navigated to, not the guard's refusal or an error page. */
async function assertPageLoaded(ctx: OpContext): Promise<void> {
  const problem = await ctx.pageProblem?.();
  if (problem) throw new OpError(problem.kind, problem.message, undefined, problem.url);
}

function read(ctx: OpContext, extra: ReadExtra, budget: number | undefined): Promise<Snapshot> {
  return snapshot(driverOf(ctx), snapshotOptions(ctx, extra, budget));
}

function snapshotOptions(ctx: OpContext, extra: ReadExtra, budget: number | undefined): SnapshotCallOptions {
  return {
    ...(extra.readOnly && ctx.reuseReads ? { reuse: true } : {}),
    ...(ctx.options?.selector ? { selector: ctx.options.selector } : {}),
    ...(ctx.options?.ignore?.length ? { ignore: ctx.options.ignore } : {}),
    ...(budget !== undefined ? { budget } : {}),
    ...(extra.keywords ? { keywords: extra.keywords } : {}),
    ...(extra.chunk !== undefined ? { chunk: extra.chunk } : {}),
    ...(ctx.variables ? { secrets: ctx.variables } : {}),
  };
}

/** Words of an instruction worth boosting under a token budget. */
export function keywordsOf(instruction: string): string[] {
  return instruction
    .replace(/%[\w.-]+%/g, ' ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 2)
    .slice(0, 12);
}

/** The set-of-marks screenshot as a message part (secret-valued fields are painted over). */
export async function visionPart(ctx: OpContext, snap: Snapshot): Promise<ChatMessage['content']> {
  const png = await marksPicture(driverOf(ctx), snap, ctx.variables ? { secrets: ctx.variables } : {});
  return [{ type: 'image', mediaType: 'image/png', data: toBase64(png) }];
}

/** Base64 with web APIs only (this path also runs where there is no Buffer). */
function toBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function userMessage(text: string, image?: ChatMessage['content']): ChatMessage {
  if (!image || typeof image === 'string') return { role: 'user', content: text };
  return { role: 'user', content: [{ type: 'text', text }, ...image] };
}

/** Calls the model and adds its usage to the running total; the caller's deadline cancels it. */
export async function ask<T>(
  llm: LlmClient,
  req: StructuredRequest<T>,
  usage: { total: Usage },
  signal?: AbortSignal,
): Promise<StructuredResult<T>> {
  let res: StructuredResult<T>;
  try {
    res = await llm.generate(signal ? { ...req, signal } : req);
  } catch (err) {
    // A failed call's replies are billed too: the op's total so far goes out with its error.
    const spent = spentOn(err);
    if (spent) usage.total = addUsage(usage.total, spent);
    if (err instanceof Error) (err as { usage?: Usage }).usage = usage.total;
    throw err;
  }
  usage.total = addUsage(usage.total, res.usage);
  return res;
}
