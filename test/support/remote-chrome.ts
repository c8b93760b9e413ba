import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromiumArgs, embeddedExecutablePath } from '../../lib/browser/launch.ts';

export interface RemoteChrome {
  /** `ws://127.0.0.1:PORT/devtools/browser/…` as Chrome printed it. */
  wsUrl: string;
  port: number;
  close(): Promise<void>;
}

/**
 * A Chromium we did not launch through Playwright, reachable only over CDP on loopback — like a
 * Browserbase or Steel session. `without` drops flags of ours it should not have (a foreign browser
 * has none of them); `extra` adds flags of its own (site isolation, say).
 */
export async function startRemoteChrome(
  without: readonly string[] = [],
  extra: readonly string[] = [],
): Promise<RemoteChrome> {
  const profile = await mkdtemp(join(tmpdir(), 'bfn-remote-'));
  const args = [...chromiumArgs().filter((a) => !without.includes(a)), ...extra];
  const chrome: ChildProcess = spawn(
    await embeddedExecutablePath(),
    [...args, '--remote-debugging-port=0', `--user-data-dir=${profile}`, 'about:blank'],
    // Its own process group: closing it takes its renderer, GPU and network processes down too.
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  const exited = new Promise<void>((resolve) => chrome.once('exit', () => resolve()));
  const wsUrl = await new Promise<string>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`no DevTools URL in:\n${seen}`)), 20_000);
    chrome.stderr!.on('data', (d: Buffer) => {
      seen += d.toString();
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(seen);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  return {
    wsUrl,
    port: Number(new URL(wsUrl).port),
    close: async () => {
      try {
        process.kill(-chrome.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
      // A child process may still be flushing its cache into the profile for a moment.
      await rm(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}
