import { readFile, writeFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { NAV_INTENT, pageHooks } from './init-scripts.ts';
import { isRemoteBrowser } from './launch.ts';
// Registers the Playwright adapter of the page-driver port: perception takes these pages as drivers.
import { prepareDriver } from './playwright-driver.ts';
import { markCarried, startScripts } from './start-scripts.ts';

export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

export interface JobContextOptions {
  /** Saved cookies + localStorage (an auth profile): an object, or a path to a JSON file. */
  storageState?: StorageState | string;
  viewport?: { width: number; height: number };
  /** Device pixels per CSS pixel (2 for a HiDPI screen); 1 when absent. */
  deviceScaleFactor?: number;
  userAgent?: string;
  locale?: string;
  /** Route every request through this proxy (the network guard proxy). */
  proxy?: { server: string; bypass?: string };
}

/**
 * One isolated context per job: its own cookies, storage and cache, closed when the job ends, so
 * nothing leaks between callers that share a warm browser.
 */
export async function newJobContext(
  browser: Browser,
  options: JobContextOptions = {},
): Promise<BrowserContext> {
  const storageState =
    typeof options.storageState === 'string'
      ? (JSON.parse(await readFile(options.storageState, 'utf8')) as StorageState)
      : options.storageState;
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 800 },
    ...(options.deviceScaleFactor ? { deviceScaleFactor: options.deviceScaleFactor } : {}),
    ...(options.userAgent ? { userAgent: options.userAgent } : {}),
    ...(options.locale ? { locale: options.locale } : {}),
    ...(storageState ? { storageState } : {}),
    ...(options.proxy ? { proxy: options.proxy } : {}),
    acceptDownloads: false,
  });
  await addPageScripts(context, isRemoteBrowser(browser));
  return context;
}

/**
 * Our scripts, in every document of `context` before its own code: the page hooks (closed shadow
 * roots, click listeners and the mutation clock are only seen from the start; no WebRTC in a
 * `remote` browser) with the start scripts, then the navigation note.
 */
export async function addPageScripts(context: BrowserContext, remote: boolean): Promise<void> {
  const start = startScripts();
  await context.addInitScript({ content: `${pageHooks(remote)};\n${start.source}` });
  markCarried(context, start.names);
  await context.addInitScript({ content: NAV_INTENT });
}

/** Saves the context's cookies and localStorage so a later job can start signed in. */
export async function saveStorageState(context: BrowserContext, path?: string): Promise<StorageState> {
  const state = await context.storageState();
  if (path) await writeFile(path, JSON.stringify(state, null, 2));
  return state;
}

export async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  // The driver's CDP session is made while the caller navigates, not on the page's first read.
  prepareDriver(page);
  page.setDefaultTimeout(10_000);
  page.setDefaultNavigationTimeout(30_000);
  return page;
}
