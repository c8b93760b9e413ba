import type { Frame, Page } from 'playwright-core';
import type { RawCollect } from './injected/collect.ts';
import { collectCall, collectInstall } from './injected/source.ts';
import { attachFrames, idCounter } from './live.ts';
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
import type { FrameInfo, Snapshot, SnapshotElement, SnapshotOptions } from './types.ts';

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export interface SnapshotCallOptions extends SnapshotOptions {
  /** Secret values (name → value) to replace with `%name%` in everything the snapshot returns. */
  secrets?: Record<string, string>;
}

interface Pending {
  frame: Frame;
  info: Omit<FrameInfo, 'index'>;
  clip: FrameCollect['clip'];
  parentIndex?: number;
  parentLine?: number;
}

async function collectFrame(frame: Frame, opts: SnapshotOptions, main: boolean, nextId: number) {
  const args = {
    nextId,
    main,
    ...(main && opts.selector ? { selector: opts.selector } : {}),
    ...(opts.ignore?.length ? { ignore: opts.ignore.join(', ') } : {}),
    text: opts.text ?? true,
  };
  const json =
    ((await frame.evaluate(collectCall(args))) as string | undefined) ??
    ((await frame.evaluate(collectInstall(args))) as string);
  return JSON.parse(json) as RawCollect;
}

/** Slot key of each child frame's <iframe>, remembered: asking the browser costs round trips. */
const frameKeys = new WeakMap<Frame, number>();

/** Which child Frame fills which <iframe> slot: the walker tagged each iframe element with a key. */
async function childFramesByKey(frame: Frame, wanted: Set<number>): Promise<Map<number, Frame>> {
  const out = new Map<number, Frame>();
  const unknown: Frame[] = [];
  for (const child of frame.childFrames()) {
    const key = frameKeys.get(child);
    if (key !== undefined && wanted.has(key)) out.set(key, child);
    else unknown.push(child);
  }
  if (out.size === wanted.size) return out;
  await Promise.all(
    unknown.map(async (child) => {
      try {
        const handle = await child.frameElement();
        const key = (await handle.evaluate((e) => (e as Element & { __bfnKey?: number }).__bfnKey)) as
          | number
          | undefined;
        await handle.dispose();
        if (key) {
          frameKeys.set(child, key);
          out.set(key, child);
        }
      } catch {
        // Frame detached between listing and asking: it is simply not part of this snapshot.
      }
    }),
  );
  return out;
}

const intersect = (a: FrameCollect['clip'], b: FrameCollect['clip']): FrameCollect['clip'] => {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const w = Math.max(0, Math.min(a.x + a.w, b.x + b.w) - x);
  const h = Math.max(0, Math.min(a.y + a.h, b.y + b.h) - y);
  return { x, y, w, h };
};

/**
 * Turns a live page into what a model reads: one walk per frame inside the page (no full AX tree
 * over CDP), stitched into one tree with one id space, then budgeted / chunked / redacted.
 */
export async function snapshot(page: Page, options: SnapshotCallOptions = {}): Promise<Snapshot> {
  const started = performance.now();
  const counter = idCounter(page);
  const collected: FrameCollect[] = [];
  const liveFrames: Frame[] = [];
  const viewport = page.viewportSize() ?? { width: 1280, height: 720 };
  const queue: Pending[] = [
    {
      frame: page.mainFrame(),
      info: { url: page.url(), xpath: '', offset: { x: 0, y: 0 } },
      clip: { x: 0, y: 0, w: viewport.width, h: viewport.height },
    },
  ];
  while (queue.length > 0) {
    const item = queue.shift()!;
    const main = item.parentIndex === undefined;
    let raw: RawCollect;
    try {
      raw = await collectFrame(item.frame, options, main, counter.next);
    } catch (err) {
      if (main) throw new SnapshotError(`could not read the page: ${(err as Error).message.split('\n')[0]}`);
      continue; // a child frame that navigated or detached mid-walk
    }
    if (raw.error && main) throw new SnapshotError(raw.error);
    counter.next = raw.nextId;
    const index = collected.length;
    const info: FrameInfo = { index, ...item.info, url: raw.url };
    if (item.parentIndex !== undefined) info.parent = item.parentIndex;
    collected.push({
      raw,
      info,
      clip: item.clip,
      ...(item.parentLine !== undefined ? { parentLine: item.parentLine } : {}),
    });
    liveFrames.push(item.frame);
    if (options.frames === false || raw.frames.length === 0) continue;
    const children = await childFramesByKey(item.frame, new Set(raw.frames.map((f) => f.key)));
    for (const slot of raw.frames) {
      const child = children.get(slot.key);
      if (!child) continue;
      const offset = { x: item.info.offset.x + slot.x, y: item.info.offset.y + slot.y };
      queue.push({
        frame: child,
        info: {
          url: child.url(),
          xpath: item.info.xpath ? `${item.info.xpath} >> ${slot.xpath}` : slot.xpath,
          offset,
        },
        clip: intersect(item.clip, { x: offset.x, y: offset.y, w: slot.w, h: slot.h }),
        parentIndex: index,
        parentLine: slot.line,
      });
    }
  }

  // Child frames handed out ids after the main frame did: the main frame keeps the page's high-water mark.
  if (collected.length > 1)
    await page
      .mainFrame()
      .evaluate(`globalThis.__bfnNextId = Math.max(globalThis.__bfnNextId || 1, ${counter.next})`)
      .catch(() => undefined);
  const { lines, elements: allElements } = assemble(collected);
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

  const snap: Snapshot = {
    url: mainRaw.url,
    title: mainRaw.title,
    tree,
    elements,
    urls,
    frames: collected.map((c) => c.info),
    stats: {
      nodes: collected.reduce((n, c) => n + c.raw.counts.nodes, 0),
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
  redactSecrets(snap, options.secrets);
  if (options.secrets) {
    snap.contentHash = shortHash(snap.tree);
    snap.stats.chars = snap.tree.length;
    snap.stats.tokens = estimateTokens(snap.tree);
  }
  attachFrames(snap, liveFrames);
  snap.stats.ms = Math.round((performance.now() - started) * 10) / 10;
  return snap;
}
