/**
 * Fetching a page's served HTML over plain HTTP, under the same network guard as the browser: every
 * request (each redirect hop included) goes through the guard proxy, which resolves the host itself,
 * checks each address against the operator's policy and connects to the address it checked — so
 * neither a redirect nor a DNS answer that changes between check and connect reaches a private,
 * loopback, link-local or metadata address. Bounded in time and size; only a 2xx HTML answer counts.
 * Used by workflows that read pages without a browser (lib/workflows/static-read.ts).
 */
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { ProxyAgent, request } from 'undici';
import { checkUrl } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';
import { BLOCKED_HEADER, type GuardProxy, guardProxyFor } from './guard-proxy.ts';

export interface StaticFetchOptions {
  policy: GuardPolicy;
  signal?: AbortSignal;
  /** The whole fetch, redirects included (default 10 s). */
  timeoutMs?: number;
  /** Bytes of body read at most; a larger page is not read statically (default 5 MiB). */
  maxBytes?: number;
  /** Redirect hops followed at most (default 5). */
  maxRedirects?: number;
  /** Headers sent on every hop (never logged). */
  headers?: Record<string, string>;
  /** A proxy of the caller's (tests): default the process's shared guard proxy for `policy`. */
  proxy?: GuardProxy;
}

export type StaticFetchResult =
  | { ok: true; url: string; status: number; body: Buffer; contentType: string }
  | {
      ok: false;
      /** One line, with the URL it concerned; no header values. */
      reason: string;
      /** `blocked`: the guard refused an address; `http`: the answer was not a 2xx HTML page. */
      kind: 'blocked' | 'http' | 'limit' | 'network';
      status?: number;
      /** A non-2xx answer's Retry-After, as sent (a 429 or 503 asking us to come back later). */
      retryAfter?: string;
    };

export const STATIC_USER_AGENT =
  'Mozilla/5.0 (compatible; browserfn-static/1; +https://github.com/browserfn)';
const HTML = /^\s*(text\/html|application\/xhtml\+xml)\b/i;
const REDIRECT = new Set([301, 302, 303, 307, 308]);

/** One client per guard proxy: its connections to the proxy are kept alive between fetches. */
const agents = new Map<string, ProxyAgent>();
function agentFor(proxy: GuardProxy): ProxyAgent {
  let a = agents.get(proxy.url);
  if (!a) {
    a = new ProxyAgent({ uri: proxy.url, connections: 64 });
    agents.set(proxy.url, a);
  }
  return a;
}

/** Closes the kept clients (the proxies themselves are closed by `closeGuardProxies`). */
export async function closeStaticAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.allSettled(all.map((a) => a.close()));
}

async function readCapped(body: AsyncIterable<Uint8Array>, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) return undefined;
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** The body as sent before its content-encoding, capped (a small gzip can unpack to gigabytes). */
function decode(raw: Buffer, encoding: string | undefined, max: number): Buffer | 'unknown' | undefined {
  const enc = (encoding ?? 'identity').trim().toLowerCase();
  const opts = { maxOutputLength: max };
  try {
    if (enc === 'identity' || enc === '') return raw;
    if (enc === 'gzip' || enc === 'x-gzip') return gunzipSync(raw, opts);
    if (enc === 'deflate') return inflateSync(raw, opts);
    if (enc === 'br') return brotliDecompressSync(raw, opts);
    return 'unknown';
  } catch {
    return undefined; // over the cap, or not what it said it was: not read statically
  }
}

/**
 * GET `url` and its redirects through the guard; `{ ok: true }` only for a 2xx HTML page read whole
 * within the limits. Never throws for what the site or the guard did: the caller falls back.
 */
export async function fetchHtml(url: string, opts: StaticFetchOptions): Promise<StaticFetchResult> {
  const timeout = AbortSignal.timeout(opts.timeoutMs ?? 10_000);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  const maxBytes = opts.maxBytes ?? 5 * 1024 * 1024;
  const proxy = opts.proxy ?? (await guardProxyFor(opts.policy));
  const dispatcher = agentFor(proxy);
  let current = url;
  try {
    for (let hop = 0; hop <= (opts.maxRedirects ?? 5); hop++) {
      // Checked here first for a clear answer; the proxy checks again and pins the address.
      const verdict = await checkUrl(current, opts.policy);
      if (!verdict.ok) return { ok: false, kind: 'blocked', reason: verdict.message };
      const res = await request(current, {
        method: 'GET',
        dispatcher,
        signal,
        headers: {
          'user-agent': STATIC_USER_AGENT,
          accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5',
          'accept-encoding': 'gzip, deflate, br',
          ...opts.headers,
        },
      });
      const header = (name: string) => {
        const v = res.headers[name];
        return Array.isArray(v) ? v[0] : v;
      };
      if (header(BLOCKED_HEADER)) {
        await res.body.dump();
        return { ok: false, kind: 'blocked', reason: `the network guard refused ${current}` };
      }
      if (REDIRECT.has(res.statusCode)) {
        await res.body.dump();
        const location = header('location');
        if (!location)
          return {
            ok: false,
            kind: 'http',
            status: res.statusCode,
            reason: `${current}: a redirect with no Location`,
          };
        current = new URL(location, current).toString();
        continue;
      }
      const type = header('content-type') ?? '';
      if (res.statusCode < 200 || res.statusCode >= 300) {
        await res.body.dump();
        return {
          ok: false,
          kind: 'http',
          status: res.statusCode,
          reason: `${current} answered ${res.statusCode}`,
          ...(header('retry-after') !== undefined ? { retryAfter: header('retry-after') } : {}),
        };
      }
      if (!HTML.test(type)) {
        await res.body.dump();
        return {
          ok: false,
          kind: 'http',
          status: res.statusCode,
          reason: `${current} is not HTML (${type.split(';')[0] || 'no content-type'})`,
        };
      }
      const declared = Number(header('content-length') ?? Number.NaN);
      if (declared > maxBytes) {
        res.body.destroy();
        return { ok: false, kind: 'limit', reason: `${current} is larger than ${maxBytes} bytes` };
      }
      const raw = await readCapped(res.body, maxBytes);
      const body = raw && decode(raw, header('content-encoding'), maxBytes);
      if (!body) {
        res.body.destroy();
        return {
          ok: false,
          kind: 'limit',
          reason: `${current} is larger than ${maxBytes} bytes (or does not unpack as its encoding says)`,
        };
      }
      if (body === 'unknown')
        return {
          ok: false,
          kind: 'http',
          reason: `${current} came in an encoding this reader does not know`,
        };
      return { ok: true, url: current, status: res.statusCode, body, contentType: type };
    }
    return { ok: false, kind: 'http', reason: `${url}: more than ${opts.maxRedirects ?? 5} redirects` };
  } catch (err) {
    if (timeout.aborted)
      return {
        ok: false,
        kind: 'limit',
        reason: `${current} took longer than ${opts.timeoutMs ?? 10_000} ms`,
      };
    const e = err as Error & { code?: string };
    // A CONNECT the proxy refused (https) surfaces as an error naming its 403.
    if (/\b403\b/.test(e.message) && /proxy/i.test(e.message))
      return { ok: false, kind: 'blocked', reason: `the network guard refused ${current}` };
    return {
      ok: false,
      kind: 'network',
      reason: `${current}: ${e.code ?? e.name}: ${e.message.split('\n')[0]}`,
    };
  }
}
