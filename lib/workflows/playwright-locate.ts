/**
 * Perception's element lookups for the Node callers that still work on Playwright ElementHandles
 * (scenario verifications, workflow post-conditions, test support): the port's lookups, with the
 * Playwright handle and frame behind the driver element. Perception itself names no Playwright type.
 */
import type { ElementHandle, Frame, Page } from 'playwright-core';
import { nativeFrame, nativeHandle, playwrightDriver } from '../browser/playwright-driver.ts';
import { type Found, findElementById, findElementByXPath, type LocateFailure } from '../perception/locate.ts';
import type { ElementId, Snapshot } from '../perception/types.ts';

export interface Located {
  handle: ElementHandle<Element>;
  frame: Frame;
  /** How it was found: the live element of the snapshot, or the durable locator. */
  via: Found['via'];
}

function toLocated(found: Found | LocateFailure): Located | LocateFailure {
  if ('error' in found) return found;
  const handle = nativeHandle(found.element);
  const frame = nativeFrame(found.frame);
  if (!handle || !frame) return { error: 'this page is not driven by Playwright' };
  return { handle, frame, via: found.via };
}

/** `findElementByXPath` for Playwright callers: the element as an ElementHandle. */
export async function locateByXPath(page: Page, xpath: string): Promise<Located | LocateFailure> {
  return toLocated(await findElementByXPath(playwrightDriver(page), xpath));
}

/** `findElementById` for Playwright callers: the element as an ElementHandle. */
export async function locateById(
  page: Page,
  snapshot: Snapshot,
  id: ElementId,
): Promise<Located | LocateFailure> {
  return toLocated(await findElementById(playwrightDriver(page), snapshot, id));
}
