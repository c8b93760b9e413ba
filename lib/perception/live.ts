import type { DriverFrame, PageDriver } from '../browser/page-driver.ts';
import type { Snapshot } from './types.ts';

/**
 * Live handles that belong to a snapshot but must never be serialised with it: the driver frames
 * its `frame` indexes point at, each element's id inside its own frame, and the per-page id space.
 */
const framesOf = new WeakMap<Snapshot, DriverFrame[]>();
const localIdsOf = new WeakMap<Snapshot, Map<number, number>>();

export const attachFrames = (
  snapshot: Snapshot,
  frames: DriverFrame[],
  localIds: Map<number, number>,
): void => {
  framesOf.set(snapshot, frames);
  localIdsOf.set(snapshot, localIds);
};

export const liveFrame = (snapshot: Snapshot, index: number): DriverFrame | undefined =>
  framesOf.get(snapshot)?.[index];

/** The id the element carries inside its frame (what the in-page registry knows it by). */
export const localId = (snapshot: Snapshot, id: number): number | undefined =>
  localIdsOf.get(snapshot)?.get(id);

/**
 * One id space per page: every frame numbers its own elements, and this maps (frame, local id)
 * to a short page-wide id that stays the same for as long as the element lives.
 */
export interface PageIds {
  next: number;
  frames: WeakMap<DriverFrame, Map<number, number>>;
}

const pageIds = new WeakMap<PageDriver, PageIds>();

export function idSpace(page: PageDriver): PageIds {
  let ids = pageIds.get(page);
  if (!ids) {
    ids = { next: 1, frames: new WeakMap() };
    pageIds.set(page, ids);
  }
  return ids;
}

/** A new top document: every id starts over. */
export function resetIdSpace(page: PageDriver): PageIds {
  const ids = { next: 1, frames: new WeakMap<DriverFrame, Map<number, number>>() };
  pageIds.set(page, ids);
  return ids;
}
