import type { Frame } from 'playwright-core';

/**
 * Child frames sent to a document the network guard refuses, after the fact. A remote browser
 * follows redirect hops without asking us (guard-route.ts), so a frame redirected to an address
 * the policy does not allow loads it anyway; what it shows is never read. The frame is left out of
 * the page driver's `frames()` from the moment the hop is seen: while the guard decides, it shows
 * its old document or the new one, and leaving the old one unread for a moment is the safe side.
 * Allowed, it is read again at once; refused, once it has been sent to about:blank.
 *
 * Kept per frame: the held document's URL (no fragment), refused or still being checked.
 */
const held = new WeakMap<Frame, string>();

const withoutFragment = (url: string) => url.split('#')[0]!;

/** A redirect hop of the frame's navigation, as the guard starts checking it. */
export function holdDocument(frame: Frame, url: string): void {
  held.set(frame, withoutFragment(url));
}

/** The guard's answer for a hop held by `holdDocument` (a later hop may have taken its place). */
export function judgeDocument(frame: Frame, url: string, allowed: boolean): void {
  if (allowed) releaseDocument(frame, url);
}

export const isRefused = (frame: Frame): boolean => held.has(frame);

/** A refused frame was sent to a document of ours (about:blank): it may be read again. */
export function releaseDocument(frame: Frame, url: string): void {
  if (held.get(frame) === withoutFragment(url)) held.delete(frame);
}
