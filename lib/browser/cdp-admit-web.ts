/**
 * A caller's `cdpUrl` on a runtime without Node sockets (the edge worker): the same rules as
 * cdp-connect.ts (the operator's list, the address checks, an http(s) endpoint's WebSocket URL
 * checked too), with the runtime's `fetch` for `/json/version`. What differs: fetch resolves the
 * name again itself, so the connection cannot be pinned to the address that was checked.
 */
import { CdpConnectError, type CdpPolicy, checkCdpUrl, displayCdpUrl } from './cdp-guard.ts';
import type { Resolver } from './guard-rules.ts';

const MAX_VERSION_BYTES = 64 * 1024;

/** The browser WebSocket URL an http(s) DevTools endpoint names (`/json/version`), no redirects followed. */
export async function wsUrlOf(endpoint: URL, fetchImpl: typeof fetch, timeoutMs: number): Promise<string> {
  const path = `${endpoint.pathname.endsWith('/') ? endpoint.pathname : `${endpoint.pathname}/`}json/version`;
  const url = new URL(`${path}${endpoint.search}`, endpoint);
  const fail = (reason: string) =>
    new CdpConnectError(
      `cdpUrl: could not connect to the browser at ${displayCdpUrl(endpoint.href)}: ${reason}`,
    );
  let res: Response;
  try {
    res = await fetchImpl(url.toString(), { redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw fail((err as Error).name === 'TimeoutError' ? 'timed out' : 'connection failed');
  }
  if (res.status !== 200) throw fail('it did not answer as a Chrome DevTools endpoint');
  const text = await res.text();
  if (text.length > MAX_VERSION_BYTES) throw fail('it did not answer as a Chrome DevTools endpoint');
  let ws: unknown;
  try {
    ws = (JSON.parse(text) as { webSocketDebuggerUrl?: unknown }).webSocketDebuggerUrl;
  } catch {
    ws = undefined;
  }
  if (typeof ws !== 'string' || !/^wss?:\/\//i.test(ws))
    throw fail('it did not answer as a Chrome DevTools endpoint');
  return ws;
}

/** `input` checked against the policy and turned into the WebSocket URL to connect to. */
export async function admitCdpUrlWeb(
  input: string,
  policy: CdpPolicy,
  opts: { resolve: Resolver; fetch?: typeof fetch; timeoutMs?: number },
): Promise<string> {
  const admitted = await checkCdpUrl(input, policy, opts.resolve);
  if (admitted.url.protocol === 'ws:' || admitted.url.protocol === 'wss:') return input;
  const ws = await wsUrlOf(admitted.url, opts.fetch ?? fetch, opts.timeoutMs ?? 10_000);
  await checkCdpUrl(ws, policy, opts.resolve);
  return ws;
}
