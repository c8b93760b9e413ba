import net from 'node:net';
import { type Browser, chromium as playwright } from 'playwright-core';
import { launchEmbedded, markRemote } from '../../browser/launch.ts';

/** The embedded Chromium with a CDP WebSocket: Playwright drives it, the CDP proxy dials it. */
export interface DebuggableBrowser {
  browser: Browser;
  /** `ws://127.0.0.1:PORT/devtools/browser/…`: loopback only, never handed to a client. */
  wsEndpoint: string;
  /**
   * A remote browser cannot reach our guard proxy: its contexts are guarded request by request
   * instead, redirect hops as the browser follows them (guard-route.ts).
   */
  remote: boolean;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

/**
 * Launches the embedded Chromium as Playwright does, plus a debugging port on loopback. Pages of
 * guarded contexts cannot reach that port: their traffic, loopback included, goes through the
 * guard proxy, which refuses loopback addresses that are not allow-listed.
 */
export async function launchDebuggableBrowser(): Promise<DebuggableBrowser> {
  let lastError: unknown;
  // The port is picked before Chromium binds it; another process could take it in between.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const browser = await launchEmbedded([
      `--remote-debugging-port=${port}`,
      '--remote-debugging-address=127.0.0.1',
    ]);
    try {
      const version = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as {
        webSocketDebuggerUrl?: string;
        'User-Agent'?: string;
      };
      // Make sure the port answering is the browser we just launched.
      if (version.webSocketDebuggerUrl && version['User-Agent']?.includes(browser.version()))
        return { browser, wsEndpoint: version.webSocketDebuggerUrl, remote: false };
      lastError = new Error(`port ${port} is answered by another browser`);
    } catch (err) {
      lastError = err;
    }
    await browser.close().catch(() => undefined);
  }
  throw new Error(
    `could not open a debugging port for the embedded browser: ${(lastError as Error).message}`,
  );
}

/**
 * A browser someone else runs (Browserbase, Steel, a Chrome with --remote-debugging-port), by its
 * `ws://…/devtools/browser/…` or `http://host:port` endpoint.
 */
export async function connectDebuggableBrowser(cdpUrl: string): Promise<DebuggableBrowser> {
  let wsEndpoint = cdpUrl;
  if (/^https?:/i.test(cdpUrl)) {
    const res = await fetch(new URL('/json/version', cdpUrl));
    const version = (await res.json()) as { webSocketDebuggerUrl?: string };
    if (!version.webSocketDebuggerUrl) throw new Error(`${cdpUrl} does not announce a CDP WebSocket`);
    wsEndpoint = version.webSocketDebuggerUrl;
  }
  const browser = markRemote(await playwright.connectOverCDP(wsEndpoint, { timeout: 30_000 }));
  return { browser, wsEndpoint, remote: true };
}

let shared: Promise<DebuggableBrowser> | undefined;

/**
 * One debuggable browser per process for every Stagehand session (a context each): the embedded
 * one, or the remote browser named by `BROWSERFN_CDP_URL`.
 */
export function sharedDebuggableBrowser(): Promise<DebuggableBrowser> {
  if (!shared) {
    const remote = process.env.BROWSERFN_CDP_URL;
    const p = (remote ? connectDebuggableBrowser(remote) : launchDebuggableBrowser()).then((d) => {
      d.browser.on('disconnected', () => {
        if (shared === p) shared = undefined;
      });
      return d;
    });
    p.catch(() => {
      if (shared === p) shared = undefined;
    });
    shared = p;
  }
  return shared;
}

export async function closeSharedDebuggableBrowser(): Promise<void> {
  const p = shared;
  shared = undefined;
  if (p) await (await p).browser.close().catch(() => undefined);
}
