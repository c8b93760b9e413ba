import type { Page } from 'playwright-core';
import type { Snapshot } from '../../lib/perception/types.ts';
import { locateById, locateByXPath } from '../../lib/workflows/playwright-locate.ts';

/**
 * For every element of a snapshot: does its durable locator find the very element the snapshot
 * saw? Returns the ids whose locator fails or lands elsewhere.
 */
export async function locatorMismatches(page: Page, snap: Snapshot): Promise<string[]> {
  const bad: string[] = [];
  for (const el of snap.elements) {
    const live = await locateById(page, snap, el.id);
    const viaPath = await locateByXPath(page, el.locator.xpath);
    if ('error' in live || 'error' in viaPath) {
      bad.push(`[${el.id}] ${el.role} "${el.name}": ${'error' in viaPath ? viaPath.error : 'lost'}`);
      continue;
    }
    const same =
      live.frame === viaPath.frame &&
      (await live.handle.evaluate((a, b) => a === b, viaPath.handle).catch(() => false));
    if (!same) bad.push(`[${el.id}] ${el.role} "${el.name}": ${el.locator.xpath} finds another element`);
    await live.handle.dispose();
    await viaPath.handle.dispose();
  }
  return bad;
}
