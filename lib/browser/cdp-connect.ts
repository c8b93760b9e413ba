import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { type Browser, chromium as playwright } from 'playwright-core';
import { CdpConnectError, type CdpPolicy, checkCdpUrl, displayCdpUrl } from './cdp-guard.ts';
import { type Resolver, systemResolver } from './guard.ts';
// Registers the Playwright adapter of the page-driver port: perception takes these pages as drivers.
import './playwright-driver.ts';

function reasonOf(err: unknown): string {
  const e = err as NodeJS.ErrnoException | undefined;
  const text = `${e?.code ?? ''} ${e?.message ?? ''}`;
  if (/ECONNREFUSED/.test(text)) return 'connection refused';
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'host not found';
  if (/ECONNRESET|socket hang up|EPIPE/.test(text)) return 'connection closed by the other end';
  if (/timed? ?out|ETIMEDOUT/i.test(text)) return 'timed out';
  if (/certificate|TLS|SSL/i.test(text)) return 'TLS handshake failed';
  return 'it did not answer as a Chrome DevTools endpoint';
}

export function cdpFailure(url: string, err: unknown): CdpConnectError {
  return new CdpConnectError(
    `cdpUrl: could not connect to the browser at ${displayCdpUrl(url)}: ${reasonOf(err)}`,
  );
}

/** `connectOverCDP`, with every failure turned into a CdpConnectError of our own words. */
export async function connectCdp(url: string, timeoutMs = 30_000): Promise<Browser> {
  try {
    return await playwright.connectOverCDP(url, { timeout: timeoutMs });
  } catch (err) {
    throw cdpFailure(url, err);
  }
}

const MAX_VERSION_BYTES = 64 * 1024;

/**
 * Asks an http(s) endpoint for its browser WebSocket URL (`/json/version`), connecting to the
 * address the guard checked, following no redirect and reading at most 64 KiB.
 */
function fetchWsUrl(url: URL, ip: string | undefined, timeoutMs: number): Promise<string> {
  const path = `${url.pathname.endsWith('/') ? url.pathname : `${url.pathname}/`}json/version/${url.search}`;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(
      {
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || (url.protocol === 'https:' ? 443 : 80),
        path,
        timeout: timeoutMs,
        agent: false,
        ...(ip
          ? {
              lookup: (_host: string, _opts: unknown, cb: (e: null, a: string, f: number) => void) =>
                cb(null, ip, net.isIPv6(ip) ? 6 : 4),
            }
          : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.destroy();
          reject(new Error(`status ${res.statusCode}`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_VERSION_BYTES) res.destroy(new Error('answer too large'));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          try {
            const ws = (
              JSON.parse(Buffer.concat(chunks).toString('utf8')) as { webSocketDebuggerUrl?: unknown }
            ).webSocketDebuggerUrl;
            if (typeof ws === 'string' && /^wss?:\/\//i.test(ws)) resolve(ws);
            else reject(new Error('no webSocketDebuggerUrl'));
          } catch {
            reject(new Error('not JSON'));
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}

/**
 * A caller's `cdpUrl`, checked and turned into the WebSocket URL to connect to. An http(s)
 * endpoint names its WebSocket URL itself; that one is checked as well, so an allowed endpoint
 * cannot hand us an address the caller could not have named.
 */
export async function admitCdpUrl(
  input: string,
  policy: CdpPolicy,
  opts: { resolve?: Resolver; timeoutMs?: number } = {},
): Promise<string> {
  const resolve = opts.resolve ?? systemResolver;
  const admitted = await checkCdpUrl(input, policy, resolve);
  if (admitted.url.protocol === 'ws:' || admitted.url.protocol === 'wss:') return input;
  let ws: string;
  try {
    ws = await fetchWsUrl(admitted.url, admitted.ip, opts.timeoutMs ?? 10_000);
  } catch (err) {
    throw cdpFailure(input, err);
  }
  await checkCdpUrl(ws, policy, resolve);
  return ws;
}
