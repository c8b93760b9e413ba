import { asDriver, type DriverFrame, type PageDriver, type PageInput } from '../browser/page-driver.ts';
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
import { domConfidence, pageSignature, shortHash } from './metrics.ts';
import { phaseEnd, phaseStart } from './read-phases.ts';
import { redactSecrets } from './redact.ts';
import {
  assemble,
  estimateTokens,
  type FrameCollect,
  formatLine,
  type Selection,
  selectBudget,
  selectChunk,
} from './tree.ts';
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
  let t = phaseStart();
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
  const { lines, elements: allElements, lineElements } = assemble(collected, idFor);
  t = phaseEnd('assemble', t);
  const rendered = lines.map((l, i) => formatLine(l, lineElements[i]));
  t = phaseEnd('format', t);
  const mainRaw = collected[0]!.raw;

  let selection: Selection | undefined;
  let chunk: Snapshot['chunk'];
  if (options.chunk !== undefined) {
    const count = Math.max(1, Math.ceil(mainRaw.viewport.docHeight / mainRaw.viewport.height));
    const index = Math.min(Math.max(0, options.chunk), count - 1);
    selection = selectChunk(lines, index, mainRaw.viewport.height);
    chunk = { index, count };
  }
  if (options.budget !== undefined) {
    const base = selection?.keep;
    const inChunk = base ? lines.filter((_, i) => base[i]) : lines;
    const idx = base ? lines.map((_, i) => i).filter((i) => base[i]) : lines.map((_, i) => i);
    const remap = new Map(idx.map((orig, i) => [orig, i]));
    const sub = inChunk.map((l) => ({ ...l, parent: remap.get(l.parent) ?? -1 }));
    const budgeted = selectBudget(
      sub,
      idx.map((i) => rendered[i]!),
      options.budget,
      options.keywords,
    );
    const keep = new Array<boolean>(lines.length).fill(false);
    idx.forEach((orig, i) => {
      keep[orig] = budgeted.keep[i]!;
    });
    const omittedBefore = selection ? selection.omitted : 0;
    const omittedInteractiveBefore = selection ? selection.omittedInteractive : 0;
    selection = {
      keep,
      omitted: omittedBefore + budgeted.omitted,
      omittedInteractive: omittedInteractiveBefore + budgeted.omittedInteractive,
    };
  }

  let keptLines = rendered;
  let elements = allElements;
  if (selection) {
    const keep = selection.keep;
    keptLines = rendered.filter((_, i) => keep[i]);
    const keptIds = new Set<number>();
    lines.forEach((l, i) => {
      if (keep[i] && l.id) keptIds.add(l.id);
    });
    // Only what the model was shown is addressable: an id it could not have seen is a guess.
    elements = allElements.filter((e) => keptIds.has(e.id));
  }
  const complete = elements.length < allElements.length ? allElements : undefined;

  let omitted: string | undefined;
  if (selection && selection.omitted > 0) {
    const parts = [`${selection.omitted} lines left out`];
    if (selection.omittedInteractive > 0) parts.push(`${selection.omittedInteractive} of them interactive`);
    const how = chunk ? `chunk ${chunk.index + 1} of ${chunk.count}` : `token budget ${options.budget}`;
    omitted = `(${parts.join(', ')}: ${how}; scroll, pick another chunk, or narrow with a selector)`;
    keptLines.push(omitted);
  }
  const tree = keptLines.join('\n');
  t = phaseEnd('select', t);
  const urls: Record<string, string> = {};
  for (const e of elements) if (e.url) urls[String(e.id)] = e.url;
  const interactive = elements.filter((e) => e.interactive).length;

  const nodes = collected.reduce((n, c) => n + c.raw.counts.nodes, 0);
  lastNodes.set(page, nodes);
  const snap: Snapshot = {
    url: mainRaw.url,
    title: mainRaw.title,
    tree,
    elements,
    urls,
    frames: collected.map((c) => c.info),
    stats: {
      nodes,
      elements: elements.length,
      interactive,
      lines: keptLines.length,
      chars: tree.length,
      tokens: estimateTokens(tree),
      ms: 0,
      omittedLines: selection?.omitted ?? 0,
      omittedInteractive: selection?.omittedInteractive ?? 0,
    },
    signature: pageSignature(mainRaw.url, allElements),
    contentHash: shortHash(tree),
    confidence: domConfidence(
      collected.map((c) => c.raw),
      allElements.filter((e) => e.interactive).length,
    ),
  };
  if (chunk) snap.chunk = chunk;
  if (omitted) snap.omitted = omitted;
  if (complete) snap.complete = complete;
  redactSecrets(snap, options.secrets);
  if (options.secrets) {
    snap.contentHash = shortHash(snap.tree);
    snap.stats.chars = snap.tree.length;
    snap.stats.tokens = estimateTokens(snap.tree);
  }
  attachFrames(snap, live, localIds);
  phaseEnd('finish', t);
  snap.stats.ms = Math.round((performance.now() - started) * 10) / 10;
  if (got.held)
    keepBuilt(got.held, { shape, keywords, trimmed: (selection?.omitted ?? 0) > 0, snapshot: snap });
  return snap;
}
