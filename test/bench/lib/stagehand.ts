import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Stagehand } from '@browserbasehq/stagehand';
import { waitQuiet } from './quiet.ts';

type StagehandPage = Awaited<ReturnType<Stagehand['context']['newPage']>>;

export interface PeerSnapshot {
  /** The text a model reads (`formattedTree`). */
  text: string;
  /** Entries in the id → XPath map. */
  ids: number;
  /** Entries in the id → URL map. */
  urls: number;
}

export interface StagehandTab {
  goto(url: string): Promise<void>;
  /** Load + the shared quiet rule (see quiet.ts). */
  settle(): Promise<number>;
  snapshot(): Promise<PeerSnapshot>;
  close(): Promise<void>;
}

export interface StagehandPeer {
  version: string;
  /** Flags Stagehand was asked to pass to Chromium (its own defaults come on top). */
  args: string[];
  open(url: string): Promise<StagehandTab>;
  close(): Promise<void>;
}

function wrap(page: StagehandPage): StagehandTab {
  return {
    async goto(url) {
      await page.goto(url, { waitUntil: 'load', timeoutMs: 30_000 });
    },
    settle: () => waitQuiet((expr) => page.evaluate(expr)),
    async snapshot() {
      const s = await page.snapshot({ includeIframes: true });
      return {
        text: s.formattedTree,
        ids: Object.keys(s.xpathMap).length,
        urls: Object.keys(s.urlMap).length,
      };
    },
    close: () => page.close(),
  };
}

/**
 * Stagehand v3 in `LOCAL` mode, launching our embedded Chromium binary. No model, no API key:
 * `page.snapshot()` is pure CDP work and makes no network calls.
 */
export async function startStagehand(options: {
  executablePath: string;
  args: string[];
  viewport: { width: number; height: number };
  version: string;
}): Promise<StagehandPeer> {
  const stagehand = new Stagehand({
    env: 'LOCAL',
    verbose: 0,
    disablePino: true,
    disableAPI: true,
    logger: () => {},
    localBrowserLaunchOptions: {
      executablePath: options.executablePath,
      headless: true,
      args: options.args,
      viewport: options.viewport,
    },
  });
  await stagehand.init();
  // The launch leaves an about:blank tab behind; it is never used for measuring.
  return {
    version: options.version,
    args: options.args,
    async open(url) {
      // A fresh tab per page: Stagehand's per-tab state grows in a reused tab.
      const tab = wrap(await stagehand.context.newPage());
      await tab.goto(url);
      return tab;
    },
    close: () => stagehand.close({ force: true }),
  };
}

/** The installed Stagehand's version, as its package says (the benches print it beside their figures). */
export function installedStagehandVersion(): string {
  const path = createRequire(import.meta.url).resolve('@browserbasehq/stagehand/package.json');
  return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
}
