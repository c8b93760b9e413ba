import { asDriver, type DriverFrame, type PageDriver, type PageInput } from '../browser/page-driver.ts';
import type { WatchMark } from './injected/watch.ts';
import type { FrameCollect } from './tree.ts';
import type { Snapshot } from './types.ts';

/**
 * A page read held for reuse while the page provably stays the same.
 *
 * Read-only calls in a row (observe, then extract) on a page nobody touched would walk the same
 * DOM twice. A read taken with `reuse` arms a one-shot notice in the page (injected/watch.ts): the
 * first mutation or state-changing event after it calls a binding, and the held read is dropped.
 * Our own actions, navigations, frames coming or going and every page-changing CDP command a
 * client sends through the proxy drop it too, before they run. A read is also never reused past
 * `HOLD_MS`, for changes no event reports. Only single-frame pages are held: a child frame's
 * document has no notice of its own.
 */

/** The longest a held read may stand in for a new one. */
export const HOLD_MS = 5000;

/** The binding the page's change notice calls. */
export const CHANGE_BINDING = '__bfnChanged';

export interface HeldRead {
  /** The in-page read options it was taken with (scope, ignore, text). */
  key: string;
  collected: FrameCollect[];
  live: DriverFrame[];
  mark: WatchMark;
  at: number;
  /** Snapshots already built from this read (see builtFrom): they go when the read goes. */
  built?: BuiltSnapshot[];
}

/** A snapshot built from a held read, with the options that shaped it. */
export interface BuiltSnapshot {
  /** Budget, chunk and secrets: what changes the text whatever the page holds. */
  shape: string;
  keywords: string;
  /** Whether the budget left lines out: only then do the keywords (which lines win) matter. */
  trimmed: boolean;
  snapshot: Snapshot;
}

/** Calls in a row on one held read seldom use more shapes than this (observe, extract, act). */
const BUILT_MAX = 4;

/**
 * The snapshot a held read already gave for the same shape: the same page read the same way is
 * the same text, so a second observe on an unchanged page skips the build. Keywords only pick
 * which lines a budget keeps; on a page the budget did not trim they change nothing.
 */
export function builtFrom(read: HeldRead, shape: string, keywords: string): Snapshot | undefined {
  return read.built?.find((b) => b.shape === shape && (!b.trimmed || b.keywords === keywords))?.snapshot;
}

export function keepBuilt(read: HeldRead, entry: BuiltSnapshot): void {
  read.built ??= [];
  if (read.built.length >= BUILT_MAX) read.built.shift();
  read.built.push(entry);
}

/** What decides whether a held read may answer now: pure, so the rule can be tested alone. */
export function mayReuse(
  held: HeldRead | undefined,
  now: { key: string; at: number; frames: number; changed?: WatchMark | undefined },
): held is HeldRead {
  if (!held || held.key !== now.key) return false;
  if (now.at - held.at > HOLD_MS || now.at < held.at) return false;
  if (now.frames !== 1 || held.collected.length !== 1) return false;
  // A notice for this document with a later count than the read's: something changed after it.
  if (now.changed && now.changed.doc === held.mark.doc && now.changed.seq > held.mark.seq) return false;
  return true;
}

const held = new WeakMap<PageDriver, HeldRead>();
/** Walks started per page: only the latest may be held (the page's element registry follows it). */
const walks = new WeakMap<PageDriver, number>();
/** A read started ahead of the next call (see readAhead in snapshot.ts), which that call waits for. */
const ahead = new WeakMap<PageDriver, Promise<void>>();
/** The latest notice per page: it can arrive before the read it follows is held. */
const lastNotice = new WeakMap<PageDriver, WatchMark>();
const watching = new WeakMap<PageDriver, Promise<boolean>>();

export function forgetRead(input: PageInput): void {
  drop(asDriver(input));
}

function drop(page: PageDriver): void {
  held.delete(page);
}

/** Numbers a walk of the page as it starts. */
export function startWalk(page: PageDriver): number {
  const n = (walks.get(page) ?? 0) + 1;
  walks.set(page, n);
  return n;
}

export function expectAhead(page: PageDriver, read: Promise<void>): void {
  ahead.set(page, read);
  void read.finally(() => {
    if (ahead.get(page) === read) ahead.delete(page);
  });
}

export const readAheadOf = (page: PageDriver): Promise<void> | undefined => ahead.get(page);

/** What the page's notice says: `<document token>:<change count>`. */
export function parseNotice(payload: string): WatchMark | undefined {
  const at = payload.lastIndexOf(':');
  const seq = Number(payload.slice(at + 1));
  if (at <= 0 || !Number.isInteger(seq)) return undefined;
  return { doc: payload.slice(0, at), seq };
}

function noticed(page: PageDriver, payload: string): void {
  const mark = parseNotice(payload);
  if (!mark) {
    drop(page);
    return;
  }
  lastNotice.set(page, mark);
  const h = held.get(page);
  if (h && (h.mark.doc !== mark.doc || mark.seq > h.mark.seq)) drop(page);
}

/**
 * Gives the page the change binding (the driver's own binding, never one whose page globals name
 * an automation library to bot checks) and drops held reads on navigations, frames and dialogs.
 * False when the page would not take it: then nothing is ever held for it.
 */
export function watchChanges(input: PageInput): Promise<boolean> {
  const page = asDriver(input);
  let ready = watching.get(page);
  if (!ready) {
    ready = (async () => {
      await page.addBinding(CHANGE_BINDING, (payload) => noticed(page, payload));
      page.onChange(() => drop(page));
      return true;
    })().catch(() => false);
    watching.set(page, ready);
  }
  return ready;
}

export function heldRead(page: PageDriver, key: string): HeldRead | undefined {
  const h = held.get(page);
  const now = { key, at: performance.now(), frames: page.frames().length, changed: lastNotice.get(page) };
  return mayReuse(h, now) ? h : undefined;
}

/** Keeps a fresh read (taken with its notice armed) for the next read-only call; returns it. */
export function holdRead(
  page: PageDriver,
  key: string,
  collected: FrameCollect[],
  live: DriverFrame[],
  walk: number,
): HeldRead | undefined {
  const mark = collected[0]?.raw.watch;
  if (!mark || collected.length !== 1 || walks.get(page) !== walk) {
    drop(page);
    return undefined;
  }
  // Reused, it is no longer the document's first read: ids must not start over.
  const kept = collected.map((c) => ({ ...c, raw: { ...c.raw, fresh: false } }));
  const read = { key, collected: kept, live, mark, at: performance.now() };
  held.set(page, read);
  return read;
}
