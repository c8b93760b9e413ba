import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Browser } from 'playwright-core';
import { admitCdpUrl } from '../browser/cdp-connect.ts';
import {
  CdpConnectError,
  type CdpPolicy,
  CdpRefusedError,
  cdpPolicyFromEnv,
  displayCdpUrl,
} from '../browser/cdp-guard.ts';
import { checkUrl } from '../browser/guard.ts';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { BrowserCrashedError, PageUnreachableError } from '../browser/page-watch.ts';
import { openSession, type Session } from '../browser/session.ts';
import { createLlmClient } from '../llm/client.ts';
import { resolveModelConfig } from '../llm/config.ts';
import type { LlmClient } from '../llm/types.ts';
import { goneError } from '../ops/gone.ts';
import type { ActionCacheLike, OpContext, OpLog, OpOptions } from '../ops/types.ts';
import { OpError } from '../ops/types.ts';
import { type Doing, noting } from './op-routes.ts';

export { type Doing, noting };

export interface OpRequest {
  url?: string | undefined;
  cdpUrl?: string | undefined;
  variables?: Record<string, string> | undefined;
  model?: string | { name: string; baseURL?: string | undefined; apiKey?: string | undefined } | undefined;
  options?: OpOptions | undefined;
}

export interface OpDeps {
  policy: GuardPolicy;
  /** Browser endpoints callers may name in `cdpUrl`; default from the env (none listed: none allowed). */
  cdpPolicy?: CdpPolicy;
  browser?: () => Promise<Browser>;
  cacheFor?: (tenant: string) => ActionCacheLike | undefined;
  env?: NodeJS.ProcessEnv;
  log?: OpLog;
}

/** The model for this call: per-call choice over env; undefined when none is configured. */
export async function modelFor(req: OpRequest, deps: OpDeps): Promise<LlmClient | undefined> {
  const choice =
    typeof req.model === 'string' ? { model: req.model } : req.model ? { model: req.model.name } : {};
  const extra =
    typeof req.model === 'object'
      ? {
          ...(req.model.baseURL ? { baseURL: req.model.baseURL } : {}),
          ...(req.model.apiKey ? { apiKey: req.model.apiKey } : {}),
        }
      : {};
  if (extra.baseURL) {
    // A caller-chosen model URL is a request from our network like any page load: guard it too.
    const verdict = await checkUrl(extra.baseURL, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', `model.baseURL: ${verdict.message}`);
  }
  let config: ReturnType<typeof resolveModelConfig>;
  try {
    config = resolveModelConfig({ ...choice, ...extra }, deps.env ?? process.env);
  } catch (err) {
    throw new OpError('invalid', `model: ${(err as Error).message}`);
  }
  if (!config) return undefined;
  const env = deps.env ?? process.env;
  const fallback = env.BROWSERFN_FALLBACK_MODEL
    ? resolveModelConfig({ model: env.BROWSERFN_FALLBACK_MODEL }, env)
    : undefined;
  // A URL the caller chose is held to the guard on every connection; the operator's own is not.
  const guard = extra.baseURL ? deps.policy : undefined;
  const key = createHash('sha256')
    .update(JSON.stringify([config, fallback ?? null, guard ?? null]))
    .digest('base64');
  const known = clientsOf(deps);
  const cached = known.get(key);
  if (cached) return cached;
  const client = createLlmClient(config, {
    ...(fallback ? { fallback } : {}),
    ...(guard ? { guard } : {}),
    ...(deps.log ? { log: deps.log } : {}),
  });
  known.set(key, client);
  return client;
}

/**
 * Model clients are stateless between calls but not free to make (each wraps a provider SDK
 * client): one per distinct model, key and URL is kept, per server, and reused.
 */
const CLIENTS_KEPT = 32;
const clientsByDeps = new WeakMap<OpDeps, LRUCache<string, LlmClient>>();
function clientsOf(deps: OpDeps): LRUCache<string, LlmClient> {
  let known = clientsByDeps.get(deps);
  if (!known) {
    known = new LRUCache({ max: CLIENTS_KEPT });
    clientsByDeps.set(deps, known);
  }
  return known;
}

/** The caller's cdpUrl, checked against the operator's list and the address rules: 400 / 403 / 502. */
export async function admitCdp(input: string, deps: OpDeps): Promise<string> {
  try {
    return await admitCdpUrl(input, deps.cdpPolicy ?? cdpPolicyFromEnv(deps.env ?? process.env));
  } catch (err) {
    if (err instanceof CdpRefusedError) throw new OpError(err.kind, err.message);
    if (err instanceof CdpConnectError) throw new OpError('unreachable', err.message);
    throw err;
  }
}

const crashedError = (url: string | undefined) =>
  new OpError(
    'browser_crashed',
    `the browser went away while working on ${url ?? 'the page'}; retry the request (the embedded browser is started again for it)`,
  );

/** Errors of opening the first page, as the kinds a caller can act on. */
function openFailure(err: unknown, req: OpRequest): OpError {
  const e = err as Error;
  const msg = e.message.split('\n')[0] ?? '';
  if (e.name === 'NetworkBlockedError')
    return new OpError('blocked', msg, undefined, (e as { url?: string }).url);
  if (e instanceof PageUnreachableError) return new OpError('unreachable', msg, undefined, e.url);
  if (e instanceof BrowserCrashedError) return crashedError(req.url);
  return new OpError('navigation', `could not open ${req.url ?? displayCdpUrl(req.cdpUrl ?? '')}: ${msg}`);
}

/**
 * Opens a guarded page for one request, runs the op, and always closes the context, whatever
 * happens. The URL is checked against the network guard before the browser sees it. Results
 * carry the HTTP status of the page; a browser that dies on the way is one retryable error.
 */
export async function withPage<T>(
  req: OpRequest,
  tenant: string,
  deps: OpDeps,
  signal: AbortSignal,
  op: (ctx: OpContext) => Promise<T>,
  doing: Doing = { what: 'working' },
): Promise<T & { status?: number }> {
  if (req.url) {
    const verdict = await checkUrl(req.url, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
  }
  const cdpUrl = req.cdpUrl ? await admitCdp(req.cdpUrl, deps) : undefined;
  const llm = await modelFor(req, deps);
  const browser = deps.browser ? await deps.browser() : undefined;
  let session: Session | undefined;
  const onAbort = () => {
    void session?.close();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  // Our own abort (the deadline) closes the page on purpose; a remote browser is judged by its session.
  const dead = () =>
    !signal.aborted &&
    (session?.crashed() || (!req.cdpUrl && browser !== undefined && !browser.isConnected()));
  try {
    try {
      doing.what = `the page ${req.url ?? req.cdpUrl} to load`;
      session = await openSession({
        ...(browser ? { browser } : {}),
        ...(cdpUrl ? { cdpUrl } : {}),
        ...(req.url ? { url: req.url } : {}),
        policy: deps.policy,
      });
    } catch (err) {
      if (err instanceof CdpConnectError)
        throw new OpError('unreachable', (err as Error).message.split('\n')[0] ?? '');
      throw dead() ? crashedError(req.url) : openFailure(err, req);
    }
    // The caller has had its 504: nothing may be done on a page that opened after it.
    if (signal.aborted) throw new OpError('timeout', 'the request deadline passed while the page opened');
    doing.what = `the page ${req.url ?? req.cdpUrl}`;
    const cache = deps.cacheFor?.(tenant);
    const s = session;
    const ctx: OpContext = {
      page: s.page,
      checkNavigation: s.checkNavigation,
      pageProblem: () => s.problem(),
      signal,
      ...(llm ? { llm: noting(llm, doing) } : {}),
      ...(req.variables ? { variables: req.variables } : {}),
      ...(req.options ? { options: req.options } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      ...(cache ? { cache } : {}),
    };
    let result: T;
    try {
      result = await op(ctx);
    } catch (err) {
      // Whatever the error says (a page that could not be read, a target closed), its cause was
      // the browser going away; on a page that answered 404/410, the page not being there.
      if (dead()) throw crashedError(req.url);
      throw (req.url ? goneError(s.status(), req.url) : undefined) ?? err;
    }
    if (dead()) throw crashedError(req.url);
    const status = s.status();
    return status === undefined ? (result as T & { status?: number }) : { ...result, status };
  } finally {
    signal.removeEventListener('abort', onAbort);
    await session?.close();
  }
}
