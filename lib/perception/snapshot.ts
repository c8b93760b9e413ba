import { asDriver, type DriverFrame, type PageDriver, type PageInput } from '../browser/page-driver.ts';
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
import type { RawCollect } from './injected/payload.ts';
import { collectCall, collectInstall } from './injected/source.ts';
import { attachFrames, idSpace, resetIdSpace } from './live.ts';
import { domConfidence, pageSignature, shortHash } from './metrics.ts';
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
import type { Snapshot, SnapshotElement, SnapshotOptions } from './types.ts';

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export interface SnapshotCallOptions extends SnapshotOptions {
  /** Secret values (name → value) to replace with `%name%` in everything the snapshot returns. */
  secrets?: Record<string, string>;
  /**
   * May answer from the last read of this page if provably nothing changed since (held-read.ts),
   * and holds this one for the next such call. For read-only calls only.
   */
  reuse?: boolean;
}

type Busy = { busy: true };
const isBusy = (raw: RawCollect | Busy | undefined): raw is Busy => !!raw && 'busy' in raw;

/** What the page itself is asked to read with (the rest of the options apply here, after). */
const inPageArgs = (opts: SnapshotOptions, main: boolean) => ({
  ...(main && opts.selector ? { selector: opts.selector } : {}),
  ...(opts.ignore?.length ? { ignore: opts.ignore } : {}),
  text: opts.text ?? true,
});

/**
 * The URL each frame's document had when this process last installed the collector in it. A frame
 * not in here (or now at another URL: most likely a new document) gets the install at once: asking
 * first would cost a second round trip on every first read of a page. A same-document URL change
 * only costs sending the source again.
 */
const installedAt = new WeakMap<DriverFrame, string>();

async function collectFrame(
  frame: DriverFrame,
  opts: SnapshotOptions,
  main: boolean,
  quietMs?: number,
  watch?: string,
): Promise<RawCollect | Busy> {
  const args = inPageArgs(opts, main);
  const url = frame.url();
  const json =
    (installedAt.get(frame) === url
      ? await frame.evaluate<string | undefined>(collectCall(args, quietMs, watch))
      : undefined) ?? (await frame.evaluate<string>(collectInstall(args, quietMs, watch)));
  installedAt.set(frame, url);
  return JSON.parse(json) as RawCollect | Busy;
}

/**
 * A child frame whose document never committed (an aborted or blocked load) has no script context,
 * and an evaluate in it waits forever: such a frame is left out rather than hanging the snapshot.
 */
const FRAME_WAIT_MS = 2000;
function withinTime<T>(work: Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), FRAME_WAIT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** Slot key of each child frame's <iframe>, remembered: asking the browser costs round trips. */
const frameKeys = new WeakMap<DriverFrame, number>();

async function keyOf(frame: DriverFrame): Promise<number | undefined> {
  const known = frameKeys.get(frame);
  if (known !== undefined) return known;
  try {
    const handle = await frame.owner();
    if (!handle) return undefined;
    const key = await handle.call((e) => (e as Element & { __bfnKey?: number }).__bfnKey);
    await handle.dispose();
    if (key) frameKeys.set(frame, key);
    return key;
  } catch {
    // Detached between listing and asking: simply not part of this snapshot.
    return undefined;
  }
}

const intersect = (a: FrameCollect['clip'], b: FrameCollect['clip']): FrameCollect['clip'] => {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const w = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - x);
  const h = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - y);
  return { x, y, w, h };
};

/**
 * Walks every frame at once, then stitches them: each child frame goes under the <iframe> slot
 * its parent's walk recorded, with offsets and visible area carried down.
 */
async function collectAll(
  page: PageDriver,
  options: SnapshotOptions,
  quietMs?: number,
  watch?: string,
): Promise<{ collected: FrameCollect[]; live: DriverFrame[] } | undefined> {
  const main = page.mainFrame();
  const others = options.frames === false ? [] : page.frames().filter((f) => f !== main);
  const [mainRaw, ...childRaws] = await Promise.all([
    collectFrame(main, options, true, quietMs, watch).catch((err: Error) => {
      throw new SnapshotError(`could not read the page: ${err.message.split('\n')[0]}`);
    }),
    ...others.map((f) => withinTime(collectFrame(f, options, false).catch(() => undefined))),
  ]);
  // Only the top document's clock counts, as in `settle`.
  if (isBusy(mainRaw)) return undefined;
  if (mainRaw!.error) throw new SnapshotError(mainRaw!.error);
  const rawOf = new Map<DriverFrame, RawCollect>();
  others.forEach((f, i) => {
    const raw = childRaws[i];
    if (raw && !isBusy(raw)) rawOf.set(f, raw);
  });
  const viewport = page.viewport();
  const collected: FrameCollect[] = [
    {
      raw: mainRaw!,
      info: { index: 0, url: mainRaw!.url, xpath: '', offset: { x: 0, y: 0 } },
      clip: { x: 0, y: 0, w: viewport.width, h: viewport.height },
    },
  ];
  const live: DriverFrame[] = [main];
  for (let at = 0; at < collected.length; at++) {
    const parent = collected[at]!;
    if (parent.raw.frames.length === 0) continue;
    const children = live[at]!.children().filter((c) => rawOf.has(c));
    const keys = await Promise.all(children.map(keyOf));
    for (const slot of parent.raw.frames) {
      const child = children[keys.indexOf(slot.key)];
      if (!child) continue;
      const offset = { x: parent.info.offset.x + slot.x, y: parent.info.offset.y + slot.y };
      const raw = rawOf.get(child)!;
      collected.push({
        raw,
        info: {
          index: collected.length,
          url: raw.url,
          parent: at,
          xpath: parent.info.xpath ? `${parent.info.xpath} >> ${slot.xpath}` : slot.xpath,
          offset,
        },
        clip: intersect(parent.clip, { x: offset.x, y: offset.y, w: slot.w, h: slot.h }),
        parentLine: slot.line,
      });
      live.push(child);
    }
  }
  return { collected, live };
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
  return (await read(asDriver(page), options))!;
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
  const { lines, elements: allElements } = assemble(collected, idFor);
  const byId = new Map<number, SnapshotElement>(allElements.map((e) => [e.id, e]));
  const rendered = lines.map((l) => formatLine(l, l.id ? byId.get(l.id) : undefined));
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

  const keptLines: string[] = [];
  const keptIds = new Set<number>();
  lines.forEach((l, i) => {
    if (selection && !selection.keep[i]) return;
    keptLines.push(rendered[i]!);
    if (l.id) keptIds.add(l.id);
  });
  // Only what the model was shown is addressable: an id it could not have seen is a guess.
  const elements = selection ? allElements.filter((e) => keptIds.has(e.id)) : allElements;
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
  snap.stats.ms = Math.round((performance.now() - started) * 10) / 10;
  if (got.held)
    keepBuilt(got.held, { shape, keywords, trimmed: (selection?.omitted ?? 0) > 0, snapshot: snap });
  return snap;
}
