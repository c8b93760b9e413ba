import type { BrowserContext, Request, Route } from 'playwright-core';
import { checkUrl, type Resolver } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';

export interface BlockedRequest {
  url: string;
  rule: string;
  message: string;
  resourceType: string;
  at: string;
}

export interface NetworkGuard {
  blocked: BlockedRequest[];
  lastBlocked(): BlockedRequest | undefined;
  dispose(): Promise<void>;
}

/**
 * Request-level guard for browsers we cannot route through our proxy (a remote CDP browser):
 * every request of the context — pages, popups, iframes, workers — is checked before it leaves.
 * Playwright hands redirect hops straight to the browser without asking us, so this cannot stop
 * them: page-watch.ts checks each as it is followed and keeps what it loads from being read. The
 * embedded browser uses the guard proxy (guard-proxy.ts), which stops them before they leave.
 */
export async function installNetworkGuard(
  context: BrowserContext,
  policy: GuardPolicy,
  opts: { resolve?: Resolver; onBlocked?: (b: BlockedRequest) => void } = {},
): Promise<NetworkGuard> {
  const blocked: BlockedRequest[] = [];
  const handler = async (route: Route, request: Request) => {
    const verdict = await checkUrl(request.url(), policy, opts.resolve);
    if (verdict.ok) {
      await route.continue().catch(() => undefined);
      return;
    }
    const entry = {
      url: verdict.url,
      rule: verdict.rule,
      message: verdict.message,
      resourceType: request.resourceType(),
      at: new Date().toISOString(),
    };
    blocked.push(entry);
    if (blocked.length > 200) blocked.shift();
    opts.onBlocked?.(entry);
    await route.abort('blockedbyclient').catch(() => undefined);
  };
  await context.route('**/*', handler);
  return {
    blocked,
    lastBlocked: () => blocked[blocked.length - 1],
    dispose: () => context.unroute('**/*', handler).catch(() => undefined),
  };
}
