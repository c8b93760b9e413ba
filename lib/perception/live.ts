import type { Frame, Page } from 'playwright-core';
import type { Snapshot } from './types.ts';

/**
 * Live handles that belong to a snapshot but must never be serialised with it: the Playwright
 * frames its `frame` indexes point at, and per-page id counters.
 */
const framesOf = new WeakMap<Snapshot, Frame[]>();
const idCounters = new WeakMap<Page, { next: number }>();

export const attachFrames = (snapshot: Snapshot, frames: Frame[]): void => {
  framesOf.set(snapshot, frames);
};

export const liveFrame = (snapshot: Snapshot, index: number): Frame | undefined =>
  framesOf.get(snapshot)?.[index];

export function idCounter(page: Page): { next: number } {
  let c = idCounters.get(page);
  if (!c) {
    c = { next: 1 };
    idCounters.set(page, c);
  }
  return c;
}
