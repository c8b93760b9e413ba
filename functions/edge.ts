/**
 * The edge entry: a Cloudflare Workers (workerd) `fetch` handler serving /v1/act, /v1/observe and
 * /v1/extract over a remote browser (lib/api/edge-app.ts). Configuration comes from the worker's
 * bindings (vars and secrets), named as the Node server's environment variables; the action cache
 * lives in the KV namespace bound as BROWSERFN_CACHE. Nothing reachable from here imports Node
 * (test/unit/edge-bundle.test.ts bundles it to prove it).
 */
import { createEdgeApp } from '../lib/api/edge-app.ts';
import { keysFromList } from '../lib/api/key-ring.ts';
import { cdpPolicyFromEnv } from '../lib/browser/cdp-guard.ts';
import { DEFAULT_DOH_URL, dohResolver } from '../lib/browser/doh-resolver.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { ActionCache } from '../lib/ops/cache.ts';
import { KvCacheStore, type KvNamespace } from '../lib/store/kv-cache.ts';

/** The worker's bindings: string vars / secrets, and the optional KV namespace for the cache. */
export type EdgeEnv = Record<string, unknown> & { BROWSERFN_CACHE?: KvNamespace };

/** Workers' execution context: waitUntil keeps the isolate while a timed-out call closes its tab. */
interface ExecutionContextLike {
  waitUntil(work: Promise<unknown>): void;
  passThroughOnException?(): void;
}

const text = (env: EdgeEnv): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') out[k] = v;
  return out;
};

const log = (e: Record<string, unknown>) => console.log(JSON.stringify(e));

/** One app per set of bindings (an isolate keeps its bindings; a new deploy gets a new isolate). */
let built: { env: EdgeEnv; app: ReturnType<typeof createEdgeApp> } | undefined;

function appFor(env: EdgeEnv) {
  if (built?.env === env) return built;
  const vars = text(env);
  const kv = env.BROWSERFN_CACHE;
  const caches = new Map<string, ActionCache>();
  const timeout = Number(vars.BROWSERFN_REQUEST_TIMEOUT_MS);
  const app = createEdgeApp({
    keys: keysFromList(vars.BROWSERFN_API_KEYS),
    policy: policyFromEnv(vars),
    cdpPolicy: cdpPolicyFromEnv(vars),
    browserUrl: vars.BROWSERFN_CDP_URL?.trim() || undefined,
    resolve: dohResolver(vars.BROWSERFN_DOH_URL?.trim() || DEFAULT_DOH_URL),
    modelEnv: vars,
    ...(timeout > 0 ? { requestTimeoutMs: timeout } : {}),
    log,
    ...(kv
      ? {
          cacheFor: (tenant: string) => {
            let cache = caches.get(tenant);
            if (!cache) {
              cache = new ActionCache(new KvCacheStore(kv, tenant), (err) =>
                log({ level: 'warn', msg: 'action cache', error: String(err) }),
              );
              caches.set(tenant, cache);
            }
            return cache;
          },
        }
      : {}),
  });
  built = { env, app };
  return built;
}

export default {
  fetch(request: Request, env: EdgeEnv, ctx?: ExecutionContextLike): Response | Promise<Response> {
    let app: ReturnType<typeof createEdgeApp>;
    try {
      app = appFor(env).app;
    } catch (err) {
      // A bad BROWSERFN_API_KEYS (and the like) is the operator's to fix: one line, never a key.
      log({ level: 'error', msg: 'configuration', error: (err as Error).message });
      return Response.json(
        { error: { kind: 'configuration', message: (err as Error).message } },
        { status: 500 },
      );
    }
    return app.fetch(request, env, ctx as never);
  },
};
