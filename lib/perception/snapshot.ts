import { asDriver, type DriverFrame, type PageDriver, type PageInput } from '../browser/page-driver.ts';
import { buildSnapshot } from './build.ts';
import { collectAll, inPageArgs, withinTime } from './collect-frames.ts';
import {
  builtFrom,
  CHANGE_BINDING,
  expectAhead,
  forgetRead,
  type HeldRead,
  heldRead,
  holdRead,
  keepBuilt,
  readAheadOf,
  startWalk,
  watchChanges,
} from './held-read.ts';
import { attachFrames, idSpace, resetIdSpace } from './live.ts';
import { phaseEnd, phaseStart } from './read-phases.ts';
import type { FrameCollect } from './tree.ts';
import type { Snapshot, SnapshotOptions } from './types.ts';

export { SnapshotError } from './collect-frames.ts';

export interface SnapshotCallOptions extends SnapshotOptions {
  /** Secret values (name → value) to replace with `%name%` in everything the snapshot returns. */
  secrets?: Record<string, string>;
  /**
   * May answer from the last read of this page if provably nothing changed since (held-read.ts),
   * and holds this one for the next such call. For read-only calls only.
   */
  reuse?: boolean;
}

/**
 * The page's walk, or the held one when `reuse` is asked and nothing changed since. Any other walk
 * drops the held read first: the page's element registry follows the latest walk, and a held read
 * must always match it.
 */
async function collectOrReuse(
  page: PageDriver,
  options: SnapshotCallOptions,
  quietMs?: number,
  isReadAhead = false,
): Promise<{ collected: FrameCollect[]; live: DriverFrame[]; held?: HeldRead } | undefined> {
  if (!options.reuse) {
    forgetRead(page);
    startWalk(page);
    return collectAll(page, options, quietMs);
  }
  const key = `${JSON.stringify(inPageArgs(options, true))}|${options.frames !== false}`;
  // A read ahead in flight is most likely the answer: wait for it, but never for long.
  const ahead = isReadAhead ? undefined : readAheadOf(page);
  if (ahead) await withinTime(ahead);
  const held = heldRead(page, key);
  if (held) return { collected: held.collected, live: held.live, held };
  forgetRead(page);
  const watch = (await watchChanges(page)) ? CHANGE_BINDING : undefined;
  const walk = startWalk(page);
  const got = await collectAll(page, options, quietMs, watch);
  if (!got) return undefined;
  // The snapshot this call builds is the one later calls would build from the held copy (same
  // walk, same ids): it is kept with it.
  const kept = holdRead(page, key, got.collected, got.live, walk);
  return kept ? { ...got, held: kept } : got;
}

/** Pages whose walks cost too much to make one that may go unused. */
export const READ_AHEAD_MAX_NODES = 5000;
const lastNodes = new WeakMap<PageDriver, number>();

/**
 * Walks the page now and holds the read for the next read-only call, if `ready` says the page is
 * loaded and idle and its DOM has been still for `quietMs` (a busy page is left alone). For a
 * session, right after an action: the next call finds the page read while its request was on
 * the way. A small page only (its last walk under READ_AHEAD_MAX_NODES nodes).
 */
export function readAhead(
  input: PageInput,
  options: SnapshotCallOptions,
  quietMs: number,
  ready: () => boolean,
): void {
  const page = asDriver(input);
  if ((lastNodes.get(page) ?? Number.POSITIVE_INFINITY) > READ_AHEAD_MAX_NODES || !ready()) return;
  const read = collectOrReuse(page, { ...options, reuse: true }, quietMs, true).then(
    () => undefined,
    () => undefined,
  );
  expectAhead(page, read);
}

/**
 * Turns a live page into what a model reads: one walk per frame inside the page (no full AX tree
 * over CDP), stitched into one tree with one id space, then budgeted / chunked / redacted.
 */
export async function snapshot(page: PageInput, options: SnapshotCallOptions = {}): Promise<Snapshot> {
  const t = phaseStart();
  const driver = asDriver(page);
  phaseEnd('driver', t);
  return (await read(driver, options))!;
}

/**
 * The snapshot, but only of a page whose DOM has been still for `quietMs`; `undefined` (at the
 * cost of one round trip, no walk) when it has not, so the caller waits and reads again.
 */
export function snapshotIfQuiet(
  page: PageInput,
  quietMs: number,
  options: SnapshotCallOptions = {},
): Promise<Snapshot | undefined> {
  return read(asDriver(page), options, quietMs);
}

async function read(
  page: PageDriver,
  options: SnapshotCallOptions,
  quietMs?: number,
): Promise<Snapshot | undefined> {
  const started = performance.now();
  const got = await collectOrReuse(page, options, quietMs);
  if (!got) return undefined;
  const { collected, live } = got;
  const shape = JSON.stringify([options.budget, options.chunk, options.secrets ?? null]);
  const keywords = JSON.stringify(options.keywords ?? []);
  const built = got.held && builtFrom(got.held, shape, keywords);
  if (built) return built;
  // Page-wide ids: stable per element; a new top document starts over, a new frame document
  // forgets only its own.
  const ids = collected[0]!.raw.fresh ? resetIdSpace(page) : idSpace(page);
  const maps = live.map((frame, i) => {
    let map = ids.frames.get(frame);
    if (!map || collected[i]!.raw.fresh) {
      map = new Map();
      ids.frames.set(frame, map);
    }
    return map;
  });
  const localIds = new Map<number, number>();
  const idFor = (frameIndex: number, local: number): number => {
    const map = maps[frameIndex]!;
    let id = map.get(local);
    if (id === undefined) {
      id = ids.next++;
      map.set(local, id);
    }
    localIds.set(id, local);
    return id;
  };
  const snap = buildSnapshot(collected, idFor, options);
  lastNodes.set(page, snap.stats.nodes);
  attachFrames(snap, live, localIds);
  snap.stats.ms = Math.round((performance.now() - started) * 10) / 10;
  if (got.held)
    keepBuilt(got.held, { shape, keywords, trimmed: snap.stats.omittedLines > 0, snapshot: snap });
  return snap;
}
