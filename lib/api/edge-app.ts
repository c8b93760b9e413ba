/**
 * The HTTP API of the edge worker (functions/edge.ts): `/v1/act`, `/v1/observe`, `/v1/extract` with
 * the Node server's schemas, keys, errors and OpenAPI entries (app-base.ts, op-routes.ts), over a
 * remote browser driven by raw CDP (lib/ops/portable.ts). No Node import anywhere on this path:
 * names resolve over DNS-over-HTTPS, the guard sits on the browser's Fetch domain, models are
 * called through fetch.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { admitCdpUrlWeb, wsUrlOf } from '../browser/cdp-admit-web.ts';
import { CdpConnectError, type CdpPolicy, CdpRefusedError, displayCdpUrl } from '../browser/cdp-guard.ts';
import type { WebSocketClass } from '../browser/cdp-session.ts';
import { checkEdgeUrl, type EdgeGuard, guardPage } from '../browser/edge-guard.ts';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { NetworkBlockedError, type Resolver } from '../browser/guard-rules.ts';
import type { PageDriver } from '../browser/page-driver.ts';
import { resolveModelConfig } from '../llm/config.ts';
import type { LlmClient } from '../llm/types.ts';
import { createWebLlmClient } from '../llm/web-client.ts';
import { explainGoneAct, goneError } from '../ops/gone.ts';
import { actOn, connectCdpDriver, extractOn, observeOn } from '../ops/portable.ts';
import type { ActionCacheLike, OpContext, OpLog } from '../ops/types.ts';
import { OpError } from '../ops/types.ts';
import { limitAnswer, registerOpRoutes, setUpBase } from './app-base.ts';
import { assertKeyRing, type KeyRing } from './key-ring.ts';
import { type Doing, deadline, noting, validationHook } from './op-routes.ts';
import type { OpRequest } from './run-op.ts';
import { DEFAULT_CALLS_PER_TENANT, TenantGate } from './tenant-gate.ts';

export interface EdgeAppDeps {
  keys: KeyRing;
  /** Which pages may load (BROWSERFN_ALLOW_HOSTS, BROWSERFN_ALLOW_PRIVATE). */
  policy: GuardPolicy;
  /** Browser endpoints callers may name in `cdpUrl` (BROWSERFN_CDP_ALLOW_HOSTS). */
  cdpPolicy: CdpPolicy;
  /** The operator's browser (BROWSERFN_CDP_URL): ws(s):// of a browser, or http(s):// of a DevTools endpoint. */
  browserUrl?: string | undefined;
  /** How the guard resolves names (DNS over HTTPS on workerd). */
  resolve: Resolver;
  /** The model settings, read as on Node (BROWSERFN_MODEL, OPENAI_API_KEY, …). */
  modelEnv: Record<string, string | undefined>;
  cacheFor?: (tenant: string) => ActionCacheLike | undefined;
  /** Whole-request deadline (default 60 s). */
  requestTimeoutMs?: number;
  /** Largest accepted body (default 1 MiB). */
  maxBodyBytes?: number;
  /** act / observe / extract calls one key may have in progress in this isolate (default 8). */
  maxCallsPerTenant?: number;
  log?: OpLog;
  /** The runtime's fetch (model calls, DevTools endpoints, DNS). */
  fetch?: typeof fetch;
  /** The WebSocket class for CDP; the runtime's global one by default. */
  WebSocket?: WebSocketClass;
}

type Env = { Variables: { tenant: string } };

const PAGE_TIMEOUT_MS = 30_000;
const OPS = new Set(['/v1/act', '/v1/observe', '/v1/extract']);

/** The model for this call: the request's choice over the operator's settings; a caller's URL guarded. */
async function modelFor(req: OpRequest, deps: EdgeAppDeps): Promise<LlmClient | undefined> {
  const choice =
    typeof req.model === 'string' ? { model: req.model } : req.model ? { model: req.model.name } : {};
  const baseURL = typeof req.model === 'object' ? req.model.baseURL : undefined;
  const apiKey = typeof req.model === 'object' ? req.model.apiKey : undefined;
  if (baseURL) {
    const verdict = await checkEdgeUrl(baseURL, deps.policy, deps.resolve);
    if (!verdict.ok) throw new OpError('blocked', `model.baseURL: ${verdict.message}`);
  }
  let config: ReturnType<typeof resolveModelConfig>;
  try {
    config = resolveModelConfig(
      { ...choice, ...(baseURL ? { baseURL } : {}), ...(apiKey ? { apiKey } : {}) },
      deps.modelEnv,
    );
  } catch (err) {
    throw new OpError('invalid', `model: ${(err as Error).message}`);
  }
  if (!config) return undefined;
  const fallbackName = deps.modelEnv.BROWSERFN_FALLBACK_MODEL;
  const fallback = fallbackName ? resolveModelConfig({ model: fallbackName }, deps.modelEnv) : undefined;
  return createWebLlmClient(config, {
    ...(fallback ? { fallback } : {}),
    ...(baseURL ? { guard: deps.policy } : {}),
    ...(deps.log ? { log: deps.log } : {}),
    ...(deps.fetch ? { fetch: deps.fetch } : {}),
  });
}

/** The browser to drive: the caller's cdpUrl (checked) or the operator's; as a WebSocket URL. */
async function browserFor(req: OpRequest, deps: EdgeAppDeps): Promise<string> {
  const fetchImpl = deps.fetch ?? fetch;
  try {
    if (req.cdpUrl)
      return await admitCdpUrlWeb(req.cdpUrl, deps.cdpPolicy, { resolve: deps.resolve, fetch: fetchImpl });
    if (!deps.browserUrl)
      throw new OpError(
        'invalid',
        'cdpUrl: this worker has no browser of its own (BROWSERFN_CDP_URL is not set): send the cdpUrl of yours',
      );
    const own = new URL(deps.browserUrl);
    return own.protocol === 'ws:' || own.protocol === 'wss:'
      ? deps.browserUrl
      : await wsUrlOf(own, fetchImpl, 10_000);
  } catch (err) {
    if (err instanceof CdpRefusedError) throw new OpError(err.kind, err.message);
    if (err instanceof CdpConnectError) throw new OpError('unreachable', err.message);
    throw err;
  }
}

/** The first page load: a guard refusal is a 403, a page that could not be reached a 502. */
async function open(driver: PageDriver, guard: EdgeGuard, url: string): Promise<void> {
  let failure: unknown;
  try {
    await driver.goto(url, { timeoutMs: PAGE_TIMEOUT_MS });
  } catch (err) {
    failure = err;
  }
  const problem = await guard.problem();
  if (problem?.kind === 'blocked') throw new OpError('blocked', problem.message, undefined, problem.url);
  if (failure) {
    const msg = ((failure as Error).message ?? '').split('\n')[0] ?? '';
    if ((failure as Error).name === 'TimeoutError')
      throw new OpError('timeout', `the page ${url} did not load within ${PAGE_TIMEOUT_MS} ms`);
    throw new OpError('unreachable', `could not open ${url}: ${msg}`, undefined, url);
  }
  await driver.settle({ timeoutMs: 5_000 });
}

/**
 * One call on a fresh tab of the remote browser: the URL and the browser are checked before
 * anything connects, the guard is armed before the page loads, and the tab is closed whatever
 * happens (at once when the deadline passes).
 */
async function withDriver<T>(
  req: OpRequest,
  tenant: string,
  deps: EdgeAppDeps,
  signal: AbortSignal,
  doing: Doing,
  op: (driver: PageDriver, ctx: Omit<OpContext, 'page'>) => Promise<T>,
): Promise<T & { status?: number }> {
  if (req.url) {
    const verdict = await checkEdgeUrl(req.url, deps.policy, deps.resolve);
    if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
  }
  const wsUrl = await browserFor(req, deps);
  const llm = await modelFor(req, deps);
  doing.what = `the browser at ${displayCdpUrl(wsUrl)}`;
  let page: Awaited<ReturnType<typeof connectCdpDriver>>;
  try {
    // A caller's own browser session keeps its page across calls (as on Node); ours gives a new tab.
    page = await connectCdpDriver(wsUrl, {
      attach: req.cdpUrl ? 'existing' : 'new',
      ...(deps.WebSocket ? { WebSocket: deps.WebSocket } : {}),
    });
  } catch (err) {
    throw new OpError(
      'unreachable',
      `could not connect to the browser at ${displayCdpUrl(wsUrl)}: ${((err as Error).message ?? '').split('\n')[0]}`,
    );
  }
  const onAbort = () => void page.close();
  signal.addEventListener('abort', onAbort, { once: true });
  let guard: EdgeGuard | undefined;
  try {
    guard = await guardPage(page.driver, deps.policy, deps.resolve);
    if (req.url) {
      doing.what = `the page ${req.url} to load`;
      await open(page.driver, guard, req.url);
    }
    if (signal.aborted) throw new OpError('timeout', 'the request deadline passed while the page opened');
    doing.what = `the page ${req.url ?? displayCdpUrl(wsUrl)}`;
    const cache = deps.cacheFor?.(tenant);
    const result: T = await op(page.driver, {
      signal,
      checkNavigation: async (url) => {
        const v = await checkEdgeUrl(url, deps.policy, deps.resolve);
        if (!v.ok) throw new NetworkBlockedError(v.url, v.rule, v.message);
      },
      pageProblem: () => (guard as EdgeGuard).problem(),
      ...(llm ? { llm: noting(llm, doing) } : {}),
      ...(req.variables ? { variables: req.variables } : {}),
      ...(req.options ? { options: req.options } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      ...(cache ? { cache } : {}),
    }).catch((err: unknown) => {
      // An op that could not go on, on a page that answered 404/410: the page not being there.
      throw (req.url ? goneError(page.status(), req.url) : undefined) ?? err;
    });
    // The page's HTTP status, as the Node server reports it (a 404 page is still read).
    const status = page.status();
    return status === undefined ? (result as T & { status?: number }) : { ...result, status };
  } finally {
    signal.removeEventListener('abort', onAbort);
    // An attached session's page lives on: it must not stay paused on our Fetch hook.
    await guard?.stop().catch(() => undefined);
    await page.close();
  }
}

/** A call answered by its deadline still closes its tab: Workers keep the isolate for that. */
function keepAlive(c: Context<Env>, work: Promise<unknown>): void {
  try {
    c.executionCtx.waitUntil(work);
  } catch {
    // Not on Workers (no execution context): the work finishes on its own.
  }
}

export function createEdgeApp(deps: EdgeAppDeps): OpenAPIHono<Env> {
  assertKeyRing(deps.keys);
  const app = new OpenAPIHono<Env>({ defaultHook: validationHook });
  const timeoutMs = deps.requestTimeoutMs ?? 60_000;

  setUpBase(app, {
    keys: deps.keys,
    log: deps.log,
    maxBodyBytes: deps.maxBodyBytes,
    methodsOf: (path) => (OPS.has(path) ? ['POST'] : path === '/healthz' ? ['GET', 'HEAD'] : undefined),
    info: {
      title: 'browserfn (edge worker)',
      version: '0.1.0',
      description:
        'act, observe and extract on a remote browser over CDP, from a Workers runtime. The runs, agent, workflow and Stagehand routes of the Node server are not served here.',
    },
  });
  // Counted per isolate: Workers run many, so this bounds one isolate's share, not the key's total.
  const gate = new TenantGate(deps.maxCallsPerTenant ?? DEFAULT_CALLS_PER_TENANT);
  app.use('/v1/*', async (c, next) => {
    if (c.req.method !== 'POST' || !OPS.has(c.req.path)) return next();
    const leave = gate.enter(c.get('tenant'));
    if (!leave)
      return limitAnswer(
        c,
        `this API key already has ${gate.perTenant} calls in progress here, the most one key may have at once; send this one again when one of them has answered`,
      );
    try {
      await next();
    } finally {
      leave();
    }
  });

  const run = <T>(
    c: Context<Env>,
    body: OpRequest,
    op: (driver: PageDriver, ctx: Omit<OpContext, 'page'>) => Promise<T>,
  ) =>
    deadline(
      timeoutMs,
      (signal, doing) => withDriver(body, c.get('tenant'), deps, signal, doing, op),
      (work) => keepAlive(c, work),
    );

  registerOpRoutes(app, {
    act: async (c, body, input) =>
      explainGoneAct(
        await run(c, body, (driver, ctx) => actOn(driver, input as Parameters<typeof actOn>[1], ctx)),
      ),
    observe: (c, body) => run(c, body, (driver, ctx) => observeOn(driver, body.instruction, ctx)),
    extract: (c, body) =>
      run(c, body, (driver, ctx) => extractOn(driver, body.instruction, body.schema, ctx)),
  });
  return app;
}
