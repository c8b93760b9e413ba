import { asDriver, type DriverElement, type DriverFrame, type PageInput } from '../browser/page-driver.ts';
import { resolveExpression } from './injected/source.ts';
import { liveFrame, localId } from './live.ts';
import type { DurableLocator, ElementId, Snapshot, SnapshotElement } from './types.ts';
import { elementById } from './types.ts';

/** An element found through the page-driver port. */
export interface Found {
  element: DriverElement;
  frame: DriverFrame;
  /** How it was found: the live element of the snapshot, or the durable locator. */
  via: 'id' | 'xpath' | 'role-name';
}

export type LocateFailure = { error: string };

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

/**
 * Finds the element a durable locator means within a snapshot: the same XPath with the same role
 * and name; or, when the page moved things around, the one element with that role and name.
 * Pure, so cache replays can check "is this still the element we meant" without touching the page.
 */
export function findByLocator(snapshot: Snapshot, locator: DurableLocator): SnapshotElement | undefined {
  const sameIdentity = (e: SnapshotElement) => e.role === locator.role && norm(e.name) === norm(locator.name);
  const byPath = snapshot.elements.find((e) => e.locator.xpath === locator.xpath);
  if (byPath && sameIdentity(byPath)) return byPath;
  const twins = snapshot.elements.filter(sameIdentity);
  if (twins.length === 1) return twins[0];
  // Several twins (e.g. repeated "Add to cart"): only the exact path can tell them apart.
  return undefined;
}

/** Parses `xpath >> xpath` chains written by hand (`//button[1]`) as well as our own. */
export function toLocator(input: DurableLocator | string): DurableLocator {
  return typeof input === 'string' ? { xpath: input, role: '', name: '' } : input;
}

async function markedElement(frame: DriverFrame): Promise<DriverElement | undefined> {
  return frame.element('globalThis.__bfnTarget');
}

/** Walks the chain frame by frame: each time the path reaches an <iframe>, continue in its document. */
export async function findElementByXPath(input: PageInput, xpath: string): Promise<Found | LocateFailure> {
  let frame: DriverFrame = asDriver(input).mainFrame();
  let segments = xpath.split(' >> ');
  for (let hops = 0; hops < 10; hops++) {
    const res = await frame.evaluate<{ found: boolean; frameHop?: number; error?: string }>(
      resolveExpression(segments.join(' >> '), true),
    );
    if (!res.found) return { error: res.error ?? `nothing matches ${xpath}` };
    const element = await markedElement(frame);
    if (!element) return { error: `element for ${xpath} vanished` };
    if (res.frameHop === undefined) return { element, frame, via: 'xpath' };
    const child = await element.contentFrame();
    await element.dispose();
    if (!child) return { error: `iframe in ${xpath} has no document` };
    frame = child;
    segments = segments.slice(res.frameHop);
  }
  return { error: `too many frame hops in ${xpath}` };
}

/**
 * The element behind a snapshot id: the very element the walker saw if it is still attached,
 * else its durable locator (the page re-rendered it).
 */
/**
 * How many fresh reads a lookup by id makes when the element keeps being replaced between a read
 * and the lookup (a page re-rendering without end): then it fails, it never spins.
 */
export const ID_REREADS = 3;

export async function findElementById(
  input: PageInput,
  snapshot: Snapshot,
  id: ElementId,
  rereads = ID_REREADS,
): Promise<Found | LocateFailure> {
  const page = asDriver(input);
  const el = elementById(snapshot, id);
  if (!el) return { error: `element [${id}] is not in the snapshot` };
  const frame = liveFrame(snapshot, el.frame);
  // Inside its frame the element is known by its own, frame-local id.
  const local = localId(snapshot, id) ?? id;
  if (frame && !frame.isDetached()) {
    const element = await frame
      .element((n: number) => {
        const reg = (globalThis as unknown as { __bfnEls?: Map<number, Element> }).__bfnEls;
        const node = reg?.get(n);
        return node?.isConnected ? node : null;
      }, local)
      .catch(() => undefined);
    if (element) return { element, frame, via: 'id' };
  }
  // The element the model saw is gone (re-rendered or removed). Its old path may now point at a
  // neighbour, so only accept what a fresh read says is the same role and name.
  if (rereads <= 0)
    return {
      error: `element [${id}] (${el.role} "${el.name}") was replaced again each time the page was read (${ID_REREADS} reads): the page keeps re-rendering it`,
    };
  const { snapshot: read } = await import('./snapshot.ts');
  const fresh = await read(page, { text: false });
  const again = findByLocator(fresh, el.locator);
  if (!again) return { error: `element [${id}] (${el.role} "${el.name}") is no longer on the page` };
  const found = await findElementById(page, fresh, again.id, rereads - 1);
  return 'error' in found ? found : { ...found, via: 'role-name' };
}
