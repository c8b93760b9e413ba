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
import { openSession, type Session } from '../browser/session.ts';
import { createLlmClient } from '../llm/client.ts';
import { resolveModelConfig } from '../llm/config.ts';
import type { LlmClient } from '../llm/types.ts';
import type { ActionCacheLike, OpContext, OpLog, OpOptions } from '../ops/types.ts';
import { OpError } from '../ops/types.ts';

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
  return createLlmClient(config, {
    ...(fallback ? { fallback } : {}),
    ...(deps.log ? { log: deps.log } : {}),
  });
}

/** The caller's cdpUrl, checked against the operator's list and the address rules: 400 / 403 / 502. */
async function admitCdp(input: string, deps: OpDeps): Promise<string> {
  try {
    return await admitCdpUrl(input, deps.cdpPolicy ?? cdpPolicyFromEnv(deps.env ?? process.env));
  } catch (err) {
    if (err instanceof CdpRefusedError) throw new OpError(err.kind, err.message);
    if (err instanceof CdpConnectError) throw new OpError('navigation', err.message);
    throw err;
  }
}

/**
 * Opens a guarded page for one request, runs the op, and always closes the context, whatever
 * happens. The URL is checked against the network guard before the browser sees it.
 */
export async function withPage<T>(
  req: OpRequest,
  tenant: string,
  deps: OpDeps,
  signal: AbortSignal,
  op: (ctx: OpContext) => Promise<T>,
): Promise<T> {
  if (req.url) {
    const verdict = await checkUrl(req.url, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', verdict.message);
  }
  const cdpUrl = req.cdpUrl ? await admitCdp(req.cdpUrl, deps) : undefined;
  const llm = await modelFor(req, deps);
  const browser = deps.browser ? await deps.browser() : undefined;
  let session: Session | undefined;
  const onAbort = () => {
    void session?.close();
  };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    try {
      session = await openSession({
        ...(browser ? { browser } : {}),
        ...(cdpUrl ? { cdpUrl } : {}),
        ...(req.url ? { url: req.url } : {}),
        policy: deps.policy,
      });
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0] ?? '';
      if ((err as Error).name === 'NetworkBlockedError') throw new OpError('blocked', msg);
      if (err instanceof CdpConnectError) throw new OpError('navigation', msg);
      throw new OpError('navigation', `could not open ${req.url ?? displayCdpUrl(req.cdpUrl ?? '')}: ${msg}`);
    }
    const cache = deps.cacheFor?.(tenant);
    const ctx: OpContext = {
      page: session.page,
      checkNavigation: session.checkNavigation,
      ...(llm ? { llm } : {}),
      ...(req.variables ? { variables: req.variables } : {}),
      ...(req.options ? { options: req.options } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      ...(cache ? { cache } : {}),
    };
    return await op(ctx);
  } finally {
    signal.removeEventListener('abort', onAbort);
    await session?.close();
  }
}
