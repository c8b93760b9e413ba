import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { newJobContext, newPage } from '../../browser/context.ts';
import type { GuardPolicy } from '../../browser/guard-policy.ts';
import { guardProxyFor, proxyOption } from '../../browser/guard-proxy.ts';
import { installNetworkGuard } from '../../browser/guard-route.ts';
import type { DebuggableBrowser } from './browser.ts';
import type { SessionResources } from './sessions.ts';

export interface SessionContext extends SessionResources {
  context: BrowserContext;
  /** The browser's own CDP endpoint, dialled by the proxy for this session's clients. */
  wsEndpoint: string;
}

const targetIds = new WeakMap<Page, string>();

/** The CDP target id of a Playwright page; in Chrome it is also the id of its main frame. */
export async function targetIdOf(page: Page): Promise<string> {
  const known = targetIds.get(page);
  if (known) return known;
  const cdp = await page.context().newCDPSession(page);
  try {
    const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as { targetInfo: { targetId: string } };
    targetIds.set(page, targetInfo.targetId);
    return targetInfo.targetId;
  } finally {
    await cdp.detach().catch(() => undefined);
  }
}

/** One CDP session per page, kept: a goto asks it once instead of attaching and detaching each time. */
const pageSessions = new WeakMap<Page, Promise<CDPSession>>();

/**
 * The main frame's loader id: Chromium gives a navigation's document request the same id, which is
 * what the SDK asks `Network.getResponseBody` for when a script reads `(await page.goto()).text()`.
 */
export async function mainLoaderId(page: Page): Promise<string> {
  const ask = async () => {
    let session = pageSessions.get(page);
    if (!session) {
      session = page.context().newCDPSession(page);
      pageSessions.set(page, session);
    }
    const { frameTree } = (await (await session).send('Page.getFrameTree')) as {
      frameTree: { frame: { loaderId: string } };
    };
    return frameTree.frame.loaderId;
  };
  try {
    return await ask();
  } catch {
    // A session that went away (the target was swapped): one fresh try.
    pageSessions.delete(page);
    return ask();
  }
}

/**
 * A session's browser context: isolated, every request through the guard proxy (pages a CDP client
 * opens in it included; on a remote browser, every request checked by a route), downloads off,
 * one blank page for the SDK to find when it connects.
 */
export async function openSessionContext(
  debuggable: DebuggableBrowser,
  policy: GuardPolicy,
  viewport?: { width: number; height: number },
): Promise<SessionContext> {
  const proxy = debuggable.remote ? undefined : await guardProxyFor(policy);
  const context = await newJobContext(debuggable.browser, {
    ...(proxy ? { proxy: proxyOption(proxy) } : {}),
    ...(viewport ? { viewport } : {}),
  });
  try {
    const guard = proxy ? undefined : await installNetworkGuard(context, policy);
    const page = await newPage(context);
    await guard?.ready(page);
    const cdp = await context.newCDPSession(page);
    const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as {
      targetInfo: { targetId: string; browserContextId?: string };
    };
    await cdp.detach().catch(() => undefined);
    if (!targetInfo.browserContextId) throw new Error('the browser did not report a context id');
    targetIds.set(page, targetInfo.targetId);
    return {
      context,
      contextId: targetInfo.browserContextId,
      wsEndpoint: debuggable.wsEndpoint,
      release: async () => {
        await guard?.dispose();
        await context.close().catch(() => undefined);
      },
    };
  } catch (err) {
    await context.close().catch(() => undefined);
    throw err;
  }
}

/**
 * The page the SDK means by `frameId` (its page's main-frame id, equal to the target id). A page
 * the client has just opened over CDP may take a moment to reach Playwright: look again briefly.
 */
export async function pageFor(
  context: BrowserContext,
  frameId: string | undefined,
): Promise<Page | undefined> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pages = context.pages().filter((p) => !p.isClosed());
    if (!frameId) return pages[pages.length - 1];
    for (const page of pages) {
      const id = await targetIdOf(page).catch(() => undefined);
      if (id === frameId) return page;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}
