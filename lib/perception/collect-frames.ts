/**
 * Reading every frame of a page: the collector run in each frame's document (installed there on
 * the first read, one round trip either way), the main frame's payload parsed, and child frames
 * put under the <iframe> slot their parent's walk recorded, with offsets and visible area carried
 * down. snapshot.ts turns what this gives into the outline.
 */
import type { DriverFrame, PageDriver } from '../browser/page-driver.ts';
import { addStartScript } from '../browser/start-scripts.ts';
import type { RawCollect } from './injected/payload.ts';
import { collectCall, collectInstall, collectorAtStart } from './injected/source.ts';
import { phaseEnd, phaseFigure, phaseStart } from './read-phases.ts';
import { readText } from './read-text.ts';
import type { FrameCollect } from './tree.ts';
import type { SnapshotOptions } from './types.ts';

export class SnapshotError extends Error {
  override name = 'SnapshotError';
}

export type Busy = { busy: true };
export const isBusy = (raw: RawCollect | Busy | undefined): raw is Busy => !!raw && 'busy' in raw;

/** What the page itself is asked to read with (the rest of the options apply here, after). */
export const inPageArgs = (opts: SnapshotOptions, main: boolean) => ({
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

/**
 * Contexts made from now on define the collector in each top-level document at its start: the
 * first read of a page there sends only the call (a page that took it away gets the install).
 */
export const COLLECTOR_START = 'collector';
addStartScript(COLLECTOR_START, collectorAtStart());

/** A frame's answer: busy, or its read (lines and elements still packed: assemble.ts reads them). */
const fromJson = (sent: string): RawCollect | Busy => JSON.parse(readText(sent)) as RawCollect | Busy;

async function collectFrame(
  frame: DriverFrame,
  opts: SnapshotOptions,
  main: boolean,
  quietMs?: number,
  watch?: string,
  atStart = false,
): Promise<RawCollect | Busy> {
  const args = inPageArgs(opts, main);
  const url = frame.url();
  // The payload is one big string: the adapter may carry it by a shorter path than its evaluate.
  const text = (expression: string) =>
    frame.evaluateText ? frame.evaluateText(expression) : frame.evaluate<string | undefined>(expression);
  let t = main ? phaseStart() : 0;
  const asked = t && performance.timeOrigin + t;
  const json =
    (installedAt.get(frame) === url || atStart ? await text(collectCall(args, quietMs, watch)) : undefined) ??
    (await text(collectInstall(args, quietMs, watch)));
  installedAt.set(frame, url);
  if (json === undefined) throw new Error('the page gave no read');
  if (!main) return fromJson(json);
  t = phaseEnd('evaluate', t);
  const received = t && performance.timeOrigin + t;
  const raw = fromJson(json);
  phaseEnd('parse', t);
  phaseFigure('payloadChars', json.length);
  if (!isBusy(raw) && raw.timing) {
    const [install, walk, startedAt] = raw.timing;
    phaseFigure('inPageInstall', install);
    phaseFigure('inPageWalk', walk);
    // Epoch clocks of two processes on one machine: good to a millisecond or so.
    if (asked && startedAt) phaseFigure('inPageQueue', startedAt - asked);
    if (startedAt && raw.sentAt) phaseFigure('inPageStringify', raw.sentAt - startedAt - install - walk);
    if (received && raw.sentAt) phaseFigure('backToNode', received - raw.sentAt);
  }
  return raw;
}

/**
 * A child frame whose document never committed (an aborted or blocked load) has no script context,
 * and an evaluate in it waits forever: such a frame is left out rather than hanging the snapshot.
 */
const FRAME_WAIT_MS = 2000;
export function withinTime<T>(work: Promise<T>): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), FRAME_WAIT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Frames that did not answer within FRAME_WAIT_MS, and the URL they had then (a `javascript:` src
 * whose document never commits, a frame stuck loading): not waited for again until that changes,
 * or every read of the page would wait the whole time for them.
 */
const stuck = new WeakMap<DriverFrame, string>();

async function readChild(
  frame: DriverFrame,
  options: SnapshotOptions,
): Promise<RawCollect | Busy | undefined> {
  const url = frame.url();
  const got = await withinTime(collectFrame(frame, options, false).catch(() => null));
  if (got === undefined) stuck.set(frame, url);
  return got ?? undefined;
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

/** Frames whose <iframe> had no key when looked up (no slot then), and the slot keys each parent had. */
const keyless = new WeakSet<DriverFrame>();
const slotsSeen = new WeakMap<DriverFrame, Set<number>>();

/**
 * Which child frame fills each of the parent's slots, by the key the parent's walk put on the
 * <iframe>. Keys once known are remembered; looking one up costs round trips, so it is done only
 * when it can change the answer: a child never looked up, or a slot key the parent never had
 * before (an <iframe> that became a slot). A 0×0 or hidden iframe has no slot and no key, and a
 * slot whose document failed to load has no frame to read: neither is looked up on every read.
 */
async function matchSlots(
  parentFrame: DriverFrame,
  slots: RawCollect['frames'],
  children: DriverFrame[],
): Promise<{ byKey: Map<number, DriverFrame>; newSlot: boolean }> {
  const byKey = new Map<number, DriverFrame>();
  if (slots.length === 0) {
    // No <iframe> of this document is shown: none of its frames is read again until one is.
    for (const c of children) keyless.add(c);
    return { byKey, newSlot: false };
  }
  const unknown: DriverFrame[] = [];
  const slotKeys = new Set(slots.map((s) => s.key));
  for (const c of children) {
    const known = frameKeys.get(c);
    if (known === undefined) unknown.push(c);
    else if (slotKeys.has(known)) byKey.set(known, c);
    // Its <iframe> is known and is no slot (0×0, hidden): not read again until a new slot shows.
    else keyless.add(c);
  }
  const seen = slotsSeen.get(parentFrame) ?? new Set<number>();
  const newSlot = slots.some((s) => !byKey.has(s.key) && !seen.has(s.key));
  const newChild = unknown.some((c) => !keyless.has(c));
  if (unknown.length > 0 && (newSlot || newChild)) {
    const keys = await Promise.all(unknown.map(keyOf));
    unknown.forEach((c, i) => {
      const key = keys[i];
      if (key === undefined) keyless.add(c);
      else if (!byKey.has(key)) byKey.set(key, c);
    });
  }
  for (const s of slots) seen.add(s.key);
  slotsSeen.set(parentFrame, seen);
  return { byKey, newSlot };
}

/** A frame whose own <iframe>, or an ancestor's, had no slot when last looked up: nothing of it is shown. */
function unslotted(frame: DriverFrame): boolean {
  for (let f: DriverFrame | undefined = frame; f; f = f.parent()) if (keyless.has(f)) return true;
  return false;
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
export async function collectAll(
  page: PageDriver,
  options: SnapshotOptions,
  quietMs?: number,
  watch?: string,
): Promise<{ collected: FrameCollect[]; live: DriverFrame[] } | undefined> {
  const main = page.mainFrame();
  // A frame showing the browser's own error page (its document failed to load) holds nothing of
  // the site's: asking it costs round trips on every read.
  const candidates =
    options.frames === false
      ? []
      : page.frames().filter(
          (f) =>
            f !== main &&
            // No document yet, the browser's error page, or one that did not answer last time.
            f.url() !== '' &&
            !f.url().startsWith('chrome-error:') &&
            stuck.get(f) !== f.url(),
        );
  // Nor is a frame read whose <iframe> was no slot at the last look (a tracker's 0×0 one): it is
  // read after all, in a second round, only when its parent shows a slot it never had before.
  const skipped = new Set(candidates.filter(unslotted));
  const others = candidates.filter((f) => !skipped.has(f));
  const [mainRaw, ...childRaws] = await Promise.all([
    collectFrame(main, options, true, quietMs, watch, page.hasStartScript?.(COLLECTOR_START)).catch(
      (err: Error) => {
        throw new SnapshotError(`could not read the page: ${err.message.split('\n')[0]}`);
      },
    ),
    ...others.map((f) => readChild(f, options)),
  ]);
  const t = phaseStart();
  // Only the top document's clock counts, as in `settle`.
  if (isBusy(mainRaw)) return undefined;
  if (mainRaw!.error) throw new SnapshotError(mainRaw!.error);
  const rawOf = new Map<DriverFrame, RawCollect>();
  // A same-origin child says which <iframe> holds it (OWNER in source.ts): no lookup for it.
  const learn = (f: DriverFrame, raw: RawCollect & { owner?: number }) => {
    rawOf.set(f, raw);
    if (raw.owner) frameKeys.set(f, raw.owner);
  };
  others.forEach((f, i) => {
    const raw = childRaws[i];
    if (raw && !isBusy(raw)) learn(f, raw);
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
    const frame = live[at]!;
    let { byKey, newSlot } = await matchSlots(
      frame,
      parent.raw.frames,
      frame.children().filter((c) => rawOf.has(c)),
    );
    const held = frame.children().filter((c) => skipped.has(c));
    if (newSlot && held.length > 0) {
      const raws = await Promise.all(held.map((f) => readChild(f, options)));
      held.forEach((f, i) => {
        skipped.delete(f);
        keyless.delete(f);
        const raw = raws[i];
        if (raw && !isBusy(raw)) learn(f, raw);
      });
      ({ byKey } = await matchSlots(
        frame,
        parent.raw.frames,
        frame.children().filter((c) => rawOf.has(c)),
      ));
    }
    for (const slot of parent.raw.frames) {
      const child = byKey.get(slot.key);
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
  phaseEnd('frames', t);
  return { collected, live };
}
