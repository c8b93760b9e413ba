import type { Browser, BrowserContext, Page } from 'playwright-core';
import { addPageScripts, type JobContextOptions, newJobContext, newPage } from './context.ts';
import { assertNavigable, NetworkBlockedError } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';
import { policyFromEnv } from './guard-policy.ts';
import { guardProxyFor, proxyOption } from './guard-proxy.ts';
import { installNetworkGuard, type NetworkGuard } from './guard-route.ts';
import { MUTATION_CLOCK, NAME_SHIM, NAV_INTENT, NO_WEBRTC } from './init-scripts.ts';
import { isRemoteBrowser, launchBrowser } from './launch.ts';
import { guardedGoto } from './navigate.ts';
import { BrowserCrashedError, type PageProblem, PageUnreachableError, watchPage } from './page-watch.ts';
import { settle } from './settle.ts';
import { startScripts } from './start-scripts.ts';

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
  /** A main-frame navigation that was refused or failed since the last call (then cleared). */
  problem(): Promise<PageProblem | undefined>;
  /** HTTP status of the document on screen. */
  status(): number | undefined;
  /** The browser died under this session (not closed by us). */
  crashed(): boolean;
  close(): Promise<void>;
}

export interface SessionOptions extends JobContextOptions {
  browser?: Browser;
  /** Attach to a remote browser over CDP for this job (keeps state across calls). */
  cdpUrl?: string;
  policy?: GuardPolicy;
  url?: string;
  /**
   * A `file:` URL the operator typed (CLI only): the one local page this session may open. The
   * API never sets it, and no page may navigate to any other `file:` URL.
   */
  allowedFile?: string;
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
  let browser: Browser | null;
  if (options.cdpUrl) {
    const remote = await launchBrowser({ cdpUrl: options.cdpUrl });
    browser = remote;
    const theirs = remote.contexts()[0];
    // A context we make has our scripts already (newJobContext).
    context = theirs ?? (await newJobContext(remote, options));
    page = context.pages()[0] ?? (await newPage(context));
    if (theirs) {
      // Not made by us: our scripts for what loads next, and in the page already open what still
      // helps there. The start scripts too: over a remote link, a first read that need not send
      // the collector saves the most.
      await addPageScripts(context, true);
      await page
        .evaluate(`${NO_WEBRTC};${NAME_SHIM};${MUTATION_CLOCK};${startScripts().source};${NAV_INTENT}`)
        .catch(() => undefined);
    }
    // A remote browser cannot reach our proxy: check each request as it leaves instead.
    guard = await installNetworkGuard(context, policy);
    // Detach without closing the remote browser: the caller's session lives on.
    closeAll = async () => {
      await guard?.dispose();
      await remote.close().catch(() => undefined);
    };
  } else {
    browser = options.browser ?? (await sharedBrowser());
    if (isRemoteBrowser(browser)) {
      // BROWSERFN_CDP_URL: a browser elsewhere cannot reach our proxy; check each request instead.
      context = await newJobContext(browser, options);
      guard = await installNetworkGuard(context, policy).catch(async (err) => {
        await context.close().catch(() => undefined);
        throw err;
      });
    } else {
      const proxy = await guardProxyFor(policy);
      context = await newJobContext(browser, { ...options, ...(proxy ? { proxy: proxyOption(proxy) } : {}) });
    }
    closeAll = async () => {
      await guard?.dispose();
      await context.close().catch(() => undefined);
    };
    page = await newPage(context).catch(async (err) => {
      await closeAll();
      throw err;
    });
  }
  // Not one request of the page leaves before the guard holds them all (hops included).
  if (guard)
    await guard.ready(page).catch(async (err) => {
      await closeAll();
      throw err;
    });
  const watch = watchPage(page, browser, {
    policy,
    // No guard proxy between a remote browser and the web: its redirect hops are checked here.
    checkRedirects: !!guard,
    ...(options.allowedFile ? { allowedFile: options.allowedFile } : {}),
  });
  const session: Session = {
    page,
    context,
    ...(guard ? { guard } : {}),
    policy,
    checkNavigation: (url) => assertNavigable(url, policy),
    problem: () => watch.take(),
    status: () => watch.status(),
    crashed: () => watch.crashed(),
    close: async () => {
      watch.dispose();
      await closeAll();
    },
  };
  if (options.url) {
    try {
      if (options.url !== options.allowedFile) await session.checkNavigation(options.url);
      await open(session, options.url);
    } catch (err) {
      const crashed = session.crashed();
      await session.close();
      throw crashed ? new BrowserCrashedError(`the browser closed while opening ${options.url}`) : err;
    }
  }
  return session;
}

/** Loads the first page; a refusal or a failed connection anywhere on the way is an error naming the URL. */
async function open(session: Session, url: string): Promise<void> {
  let failure: unknown;
  try {
    await guardedGoto(session.page, url);
  } catch (err) {
    failure = err;
  }
  const problem = await session.problem();
  // A remote browser's guard stopped the navigation or one of its redirect hops: name the address
  // it refused, which the page's own failure (the URL asked for) does not.
  const refused = session.guard?.blocked.findLast((b) => b.resourceType === 'document');
  if (refused && (problem?.kind === 'blocked' || failure instanceof NetworkBlockedError))
    throw new NetworkBlockedError(refused.url, refused.rule, refused.message);
  if (problem?.kind === 'blocked') throw new NetworkBlockedError(problem.url, 'navigation', problem.message);
  if (problem?.kind === 'unreachable') throw new PageUnreachableError(problem.url, problem.message);
  if (failure) throw failure;
  await settle(session.page);
  // A meta refresh or a script may have sent the page on right after it loaded.
  const later = await session.problem();
  if (later?.kind === 'blocked') throw new NetworkBlockedError(later.url, 'navigation', later.message);
  if (later?.kind === 'unreachable') throw new PageUnreachableError(later.url, later.message);
}
