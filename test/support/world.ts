import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { startBrowser } from './browser.ts';
import { type FixtureServer, startFixtureServer } from './fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from './llm-server.ts';

/** What most e2e files start once: a real Chromium, the fixture sites, the scripted model server. */
export interface World {
  browser: Browser;
  site: FixtureServer;
  llm: ScriptedModel;
}

/**
 * Starts the world once for the file and hands it to `bind`; the model's script and its recorded
 * requests are reset before every test. Everything is closed after the file.
 */
export function useWorld(bind: (world: World) => void): void {
  let world: World | undefined;
  beforeAll(async () => {
    const [browser, site, llm] = await Promise.all([
      startBrowser(),
      startFixtureServer(),
      startScriptedModel(),
    ]);
    world = { browser, site, llm };
    bind(world);
  });
  afterAll(async () => {
    await closeGuardProxies();
    await world?.browser.close();
    await world?.site.close();
    await world?.llm.close();
  });
  beforeEach(() => {
    if (!world) return;
    world.llm.requests.length = 0;
    world.llm.setHandler(undefined);
  });
}
