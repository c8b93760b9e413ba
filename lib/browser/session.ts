import type { Browser, BrowserContext, Page } from 'playwright-core';
import { type JobContextOptions, newJobContext, newPage } from './context.ts';
import { assertNavigable } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';
import { policyFromEnv } from './guard-policy.ts';
import { guardProxyFor, proxyOption } from './guard-proxy.ts';
import { installNetworkGuard, type NetworkGuard } from './guard-route.ts';
import { CLICK_LISTENER_HOOK, MUTATION_CLOCK, NAME_SHIM, SHADOW_ROOT_HOOK } from './init-scripts.ts';
import { launchBrowser } from './launch.ts';
import { guardedGoto } from './navigate.ts';
import { settle } from './settle.ts';

/**
 * One warm browser per process, shared by every job: a new context costs milliseconds, a new
 * browser a second. Relaunched if it dies.
 */
let shared: Promise<Browser> | undefined;

export function sharedBrowser(): Promise<Browser> {
  if (!shared) {
    shared = launchBrowser().then((b) => {
      b.on('disconnected', () => {
        shared = undefined;
      });
      return b;
    });
    shared.catch(() => {
      shared = undefined;
    });
  }
  return shared;
}

export async function closeSharedBrowser(): Promise<void> {
  const b = shared;
  shared = undefined;
  if (b) await (await b).close().catch(() => undefined);
}

export interface Session {
  page: Page;
  context: BrowserContext;
  /** Request-level guard (remote browsers); the embedded browser is guarded by the proxy instead. */
  guard?: NetworkGuard;
  policy: GuardPolicy;
  /** Checks a navigation target against the guard; throws NetworkBlockedError. */
  checkNavigation(url: string): Promise<void>;
  close(): Promise<void>;
}

export interface SessionOptions extends JobContextOptions {
  browser?: Browser;
  /** Attach to a remote browser over CDP for this job (keeps state across calls). */
  cdpUrl?: string;
  policy?: GuardPolicy;
  url?: string;
}

/**
 * A guarded page in a fresh isolated context. With `cdpUrl`, the remote browser's existing
 * context and page are reused so multi-call flows keep their state.
 */
export async function openSession(options: SessionOptions = {}): Promise<Session> {
  const policy = options.policy ?? policyFromEnv();
  let context: BrowserContext;
  let page: Page;
  let guard: NetworkGuard | undefined;
  let closeAll: () => Promise<void>;
  if (options.cdpUrl) {
    const remote = await launchBrowser({ cdpUrl: options.cdpUrl });
    context = remote.contexts()[0] ?? (await newJobContext(remote, options));
    page = context.pages()[0] ?? (await newPage(context));
    // The remote context was not made by us: give it our init scripts, now and for what loads next.
    await context.addInitScript({
      content: `${NAME_SHIM};\n${SHADOW_ROOT_HOOK}\n${CLICK_LISTENER_HOOK}\n${MUTATION_CLOCK};`,
    });
    await page.evaluate(`${NAME_SHIM};${MUTATION_CLOCK}`).catch(() => undefined);
    // A remote browser cannot reach our proxy: check each request as it leaves instead.
    guard = await installNetworkGuard(context, policy);
    // Detach without closing the remote browser: the caller's session lives on.
    closeAll = async () => {
      await guard?.dispose();
      await remote.close().catch(() => undefined);
    };
  } else {
    const browser = options.browser ?? (await sharedBrowser());
    const proxy = await guardProxyFor(policy);
    context = await newJobContext(browser, { ...options, ...(proxy ? { proxy: proxyOption(proxy) } : {}) });
    page = await newPage(context);
    closeAll = () => context.close().catch(() => undefined);
  }
  const session: Session = {
    page,
    context,
    ...(guard ? { guard } : {}),
    policy,
    checkNavigation: (url) => assertNavigable(url, policy),
    close: closeAll,
  };
  if (options.url) {
    try {
      await session.checkNavigation(options.url);
      await guardedGoto(page, options.url);
      await settle(page);
    } catch (err) {
      await session.close();
      throw err;
    }
  }
  return session;
}
