import type { Frame, Page } from 'playwright-core';
import type { Snapshot } from './types.ts';

/**
 * Live handles that belong to a snapshot but must never be serialised with it: the Playwright
 * frames its `frame` indexes point at, each element's id inside its own frame, and the per-page
 * id space.
 */
const framesOf = new WeakMap<Snapshot, Frame[]>();
const localIdsOf = new WeakMap<Snapshot, Map<number, number>>();

export const attachFrames = (snapshot: Snapshot, frames: Frame[], localIds: Map<number, number>): void => {
  framesOf.set(snapshot, frames);
  localIdsOf.set(snapshot, localIds);
};

export const liveFrame = (snapshot: Snapshot, index: number): Frame | undefined =>
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
  frames: WeakMap<Frame, Map<number, number>>;
}

const pageIds = new WeakMap<Page, PageIds>();

export function idSpace(page: Page): PageIds {
  let ids = pageIds.get(page);
  if (!ids) {
    ids = { next: 1, frames: new WeakMap() };
    pageIds.set(page, ids);
  }
  return ids;
}

/** A new top document: every id starts over. */
export function resetIdSpace(page: Page): PageIds {
  const ids = { next: 1, frames: new WeakMap<Frame, Map<number, number>>() };
  pageIds.set(page, ids);
  return ids;
}
