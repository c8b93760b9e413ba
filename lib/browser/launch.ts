import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import chromium from '@sparticuz/chromium';
import { type Browser, chromium as playwright } from 'playwright-core';
import { connectCdp } from './cdp-connect.ts';

/**
 * Flags we refuse from the embedded build's defaults:
 * - `--single-process`: closing one context would kill the whole browser, and we serve many.
 * - `--disable-web-security` / `--allow-running-insecure-content`: pages could read cross-origin
 *   responses, which turns a blocked-by-guard request into an exfiltration path.
 */
const DROPPED_FLAGS = new Set([
  '--single-process',
  '--disable-web-security',
  '--allow-running-insecure-content',
]);

/**
 * WebRTC sends STUN/TURN and connectivity checks over UDP straight from the browser, past the
 * guard proxy (which only sees HTTP and CONNECT). With this policy WebRTC uses no UDP unless a
 * proxy carries it, and ours does not: ICE falls back to TCP through the proxy, which checks it.
 * (`--webrtc-ip-handling-policy` alone is not honoured by this headless build; this one is.)
 */
export const WEBRTC_POLICY_FLAG = '--force-webrtc-ip-handling-policy=disable_non_proxied_udp';

/** Quiet flags: this machine (and Lambda) has no route to Google; background chatter only costs time. */
const EXTRA_FLAGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--mute-audio',
  '--hide-scrollbars',
  // Many pages run side by side, none of them "in front": none may be slowed down for it.
  '--disable-background-timer-throttling',
  '--disable-renderer-backgrounding',
  '--disable-backgrounding-occluded-windows',
  WEBRTC_POLICY_FLAG,
  // There is no GPU here or on Lambda: compositing through the emulated one (SwiftShader) made every
  // screenshot about twice as slow. WebGL keeps working on SwiftShader with this flag.
  '--disable-gpu',
];

export function chromiumArgs(base: readonly string[] = chromium.args): string[] {
  const args = base.filter((a) => !DROPPED_FLAGS.has(a));
  for (const flag of EXTRA_FLAGS) if (!args.includes(flag)) args.push(flag);
  return args;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Unpacks the embedded Chromium once per machine. Two processes unpacking at the same time race on
 * the same file (one execs it while the other still writes: ETXTBSY), so the unpack runs under a
 * lock directory; `mkdir` is atomic on every filesystem we run on.
 */
export async function embeddedExecutablePath(): Promise<string> {
  const override = process.env.BROWSERFN_CHROMIUM_PATH;
  if (override) return override;
  const lock = join(tmpdir(), 'browserfn-chromium.lock');
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock older than 60 s belongs to a process that died mid-unpack.
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > 60_000 || Date.now() > deadline) await rm(lock, { recursive: true, force: true });
      else await sleep(50);
    }
  }
  try {
    return await chromium.executablePath();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

export interface LaunchOptions {
  /** Connect to a remote browser over CDP instead (Browserbase, Steel, a local Chrome). */
  cdpUrl?: string;
  /** Extra Chromium flags. */
  args?: string[];
  headless?: boolean;
}

/** Playwright's words for a browser process that went away while it was being started. */
const diedStarting = (err: unknown) =>
  /has been closed|browser closed|target closed|process did exit|crash/i.test(
    err instanceof Error ? err.message : String(err),
  );

/** Browsers we reached over CDP: they run elsewhere, where our guard proxy's loopback address is not ours. */
const remoteBrowsers = new WeakSet<Browser>();

export function markRemote(browser: Browser): Browser {
  remoteBrowsers.add(browser);
  return browser;
}

/** A browser running elsewhere: its contexts are guarded request by request, not through our proxy. */
export const isRemoteBrowser = (browser: Browser) => remoteBrowsers.has(browser);

/** The embedded Chromium, or a remote one when `cdpUrl` / `BROWSERFN_CDP_URL` is set. */
export async function launchBrowser(options: LaunchOptions = {}): Promise<Browser> {
  const cdpUrl = options.cdpUrl ?? process.env.BROWSERFN_CDP_URL;
  if (cdpUrl) return markRemote(await connectCdp(cdpUrl));
  return launchEmbedded(options.args ?? [], options.headless ?? true);
}

/**
 * Starts the embedded Chromium with our flags plus `extraArgs`. One that dies while starting (seen
 * on a machine short of memory with many browsers starting at once) is started once more before
 * the failure is reported.
 */
export async function launchEmbedded(extraArgs: string[] = [], headless = true): Promise<Browser> {
  const executablePath = await embeddedExecutablePath();
  const launch = () =>
    playwright.launch({
      executablePath,
      headless,
      args: [...chromiumArgs(), ...extraArgs],
      // Lambda sends SIGTERM on shutdown; we close browsers ourselves.
      handleSIGINT: false,
      handleSIGTERM: false,
    });
  try {
    return await launch();
  } catch (err) {
    if (!diedStarting(err)) throw err;
    await sleep(250);
    return launch();
  }
}
