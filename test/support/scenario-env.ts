/**
 * The set-up the scenario tests share (scenarios, set-of-marks, explore, repair): Chromium, the
 * file's fixture site and the scripted model started together once per file, an LLM client on the
 * model that never retries (a scripted answer is right or the test is wrong), and a fresh context's
 * page on a path of the site.
 */
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { startBrowser } from './browser.ts';
import { type ScriptedModel, startScriptedModel } from './llm-server.ts';
import { modelConfig } from './ops-env.ts';

export interface ScenarioTestEnv<S> {
  browser: Browser;
  site: S;
  llm: ScriptedModel;
  model: LlmClient;
  /** A page of a fresh context, loaded at `path` of the site. */
  pageAt(path: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startScenarioTestEnv<S extends { url: string; close(): Promise<void> }>(
  startSite: () => Promise<S>,
  context: BrowserContextOptions = {},
): Promise<ScenarioTestEnv<S>> {
  const [browser, site, llm] = await Promise.all([startBrowser(), startSite(), startScriptedModel()]);
  return {
    browser,
    site,
    llm,
    model: createLlmClient({ ...modelConfig(llm, 'openai'), maxRetries: 0 }),
    pageAt: async (path) => {
      const page = await (await browser.newContext(context)).newPage();
      await page.goto(`${site.url}${path}`);
      return page;
    },
    close: async () => {
      await closeGuardProxies();
      await browser.close();
      await site.close();
      await llm.close();
    },
  };
}
