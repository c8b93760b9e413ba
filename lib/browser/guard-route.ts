import type { BrowserContext, Frame, Page, Request, Route } from 'playwright-core';
import { checkUrl, type GuardVerdict, type Resolver } from './guard.ts';
import { pausePageRequests } from './guard-fetch.ts';
import type { GuardPolicy } from './guard-policy.ts';
import { holdDocument, judgeDocument, releaseDocument } from './refused-frames.ts';

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
  /** Resolves once every request of `page` is held for the guard (guard-fetch.ts): navigate only then. */
  ready(page: Page): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Request-level guard for browsers we cannot route through our proxy (a remote CDP browser):
 * every request of the context — pages, popups, iframes, workers — is checked before it leaves.
 * Playwright hands redirect hops straight to the browser without asking the route; each page's
 * own Fetch pause (guard-fetch.ts) stops them before they leave. Where that cannot reach (a frame
 * in another process), a navigation hop is checked as it is followed, and what it loads is kept
 * from being read. The embedded browser uses the guard proxy (guard-proxy.ts) instead.
 */
export async function installNetworkGuard(
  context: BrowserContext,
  policy: GuardPolicy,
  opts: { resolve?: Resolver; onBlocked?: (b: BlockedRequest) => void } = {},
): Promise<NetworkGuard> {
  const blocked: BlockedRequest[] = [];
  // A request refused by one hook never reaches the other: each refusal is listed once.
  const note = (verdict: Exclude<GuardVerdict, { ok: true }>, resourceType: string) => {
    const entry = {
      url: verdict.url,
      rule: verdict.rule,
      message: verdict.message,
      resourceType,
      at: new Date().toISOString(),
    };
    blocked.push(entry);
    if (blocked.length > 200) blocked.shift();
    opts.onBlocked?.(entry);
  };
  const handler = async (route: Route, request: Request) => {
    const verdict = await checkUrl(request.url(), policy, opts.resolve);
    if (verdict.ok) {
      await route.continue().catch(() => undefined);
      return;
    }
    note(verdict, request.resourceType());
    await route.abort('blockedbyclient').catch(() => undefined);
  };
  // Redirect hops never reach the route: each is checked as the browser follows it. A child frame
  // sent to a refused address is never read (refused-frames.ts); a page sent there fails its call
  // (page-watch.ts). Either is then sent to about:blank.
  const verdictOf = (url: string) =>
    checkUrl(url, policy, opts.resolve).catch(
      (): GuardVerdict => ({ ok: false, rule: 'unchecked', message: `Blocked request to ${url}`, url }),
    );
  // A popup's first navigation is issued before its page has a frame: the page is sent away once
  // it shows the refused address.
  const refusedPopups = new Set<string>();
  const awayIfRefused = (page: Page) => {
    if (refusedPopups.has(page.url())) void page.goto('about:blank').catch(() => undefined);
  };
  const onPage = (page: Page) => {
    page.on('framenavigated', (f) => {
      if (f === page.mainFrame()) awayIfRefused(page);
    });
    awayIfRefused(page);
  };
  const onRequest = (request: Request) => {
    if (!request.isNavigationRequest() || !request.redirectedFrom()) return;
    const url = request.url();
    let frame: Frame;
    try {
      frame = request.frame();
    } catch {
      void verdictOf(url).then((verdict) => {
        if (verdict.ok) return;
        note(verdict, request.resourceType());
        refusedPopups.add(url);
        if (refusedPopups.size > 100) refusedPopups.delete(refusedPopups.values().next().value!);
        for (const page of context.pages()) awayIfRefused(page);
      });
      return;
    }
    const child = frame.parentFrame() !== null;
    if (child) holdDocument(frame, url);
    void verdictOf(url).then((verdict) => {
      if (child) judgeDocument(frame, url, verdict.ok);
      if (verdict.ok) return;
      note(verdict, request.resourceType());
      // A page is sent away too, for clients that read it without asking whether its call failed.
      frame.goto('about:blank').then(
        () => releaseDocument(frame, url),
        () => undefined,
      );
    });
  };
  await context.route('**/*', handler);
  context.on('request', onRequest);
  context.on('page', onPage);
  for (const page of context.pages()) onPage(page);
  const paused = pausePageRequests(context, async ({ url, resourceType }) => {
    const verdict = await checkUrl(url, policy, opts.resolve);
    if (!verdict.ok) note(verdict, resourceType);
    return verdict.ok;
  });
  return {
    blocked,
    lastBlocked: () => blocked[blocked.length - 1],
    ready: (page) => paused.ready(page),
    dispose: async () => {
      await paused.dispose();
      context.off('request', onRequest);
      context.off('page', onPage);
      await context.unroute('**/*', handler).catch(() => undefined);
    },
  };
}
