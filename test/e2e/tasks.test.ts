import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { TASKS } from '../fixtures/tasks.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { runTask } from '../support/tasks.ts';

let browser: Browser;
let site: FixtureServer;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await closeGuardProxies();
});

describe('single-action tasks through act, no model', () => {
  it.each(TASKS.filter((t) => t.resolvable))('$page: done right ($form)', async (task) => {
    const run = await runTask(browser, site, task);
    expect(run.outcome, `${run.instruction} → ${run.detail}`).toBe('right');
  });

  it.each(TASKS.filter((t) => !t.resolvable))('$page: never done wrongly ($form)', async (task) => {
    const run = await runTask(browser, site, task);
    expect(['deferred', 'right'], `${run.instruction} → ${run.detail}`).toContain(run.outcome);
  });
});
