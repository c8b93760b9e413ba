import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { DEFER_CASES, RESOLVE_CASES } from '../cases/matcher-cases.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let browser: Browser;
let site: FixtureServer;
const snaps = new Map<string, Snapshot>();

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  const pages = new Set([...RESOLVE_CASES, ...DEFER_CASES].map((c) => c.page));
  for (const path of pages) {
    const { page, context } = await openPage(browser, site.url + path);
    await page.waitForTimeout(50);
    snaps.set(path, await snapshot(page));
    await context.close();
  }
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
});

describe('matcher on the fixture pages', () => {
  it('has the case table the issue asks for', () => {
    expect(RESOLVE_CASES.length).toBeGreaterThanOrEqual(60);
    expect(DEFER_CASES.length).toBeGreaterThanOrEqual(20);
  });

  it.each(RESOLVE_CASES)('$page: $instruction', ({ page, instruction, expect: want }) => {
    const snap = snaps.get(page)!;
    const decision = matchInstruction(instruction, snap);
    expect(decision.kind, JSON.stringify(decision.kind === 'defer' ? decision : {})).toBe('action');
    if (decision.kind !== 'action') return;
    expect(decision.action.method).toBe(want.method);
    if (want.args) expect(decision.action.args ?? []).toEqual(want.args);
    if ('role' in want) {
      const twins = snap.elements.filter((e) => e.role === want.role && e.name === want.name);
      const target = twins[(want.nth ?? 1) - 1];
      expect(target, `${want.role} "${want.name}" #${want.nth ?? 1}`).toBeTruthy();
      expect(decision.elementId).toBe(target!.id);
    } else {
      expect(decision.elementId).toBeUndefined();
    }
  });

  it.each(DEFER_CASES)('$page defers: $instruction ($why)', ({ page, instruction }) => {
    const decision = matchInstruction(instruction, snaps.get(page)!);
    expect(decision.kind, JSON.stringify(decision)).toBe('defer');
  });
});
