import type { Browser, Frame, Page, Request, Response } from 'playwright-core';
import { checkUrl } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';
import { BLOCKED_HEADER } from './guard-proxy.ts';

/** Why the page on screen is not the page that was asked for. */
export interface PageProblem {
  kind: 'blocked' | 'unreachable';
  /** The URL the main frame tried to load. */
  url: string;
  message: string;
}

export interface PageWatch {
  /** HTTP status of the main frame's current document; undefined before the first response. */
  status(): number | undefined;
  /** The first refused or failed main-frame navigation since the last call, and clears it. */
  take(): Promise<PageProblem | undefined>;
  /** The browser or the page's renderer died (not closed by us). */
  crashed(): boolean;
  dispose(): void;
}

export interface WatchOptions {
  /** The session's guard policy: says whether a failed navigation was a refusal, and by which rule. */
  policy?: GuardPolicy;
  /** A file: URL the operator typed; every other file: navigation is refused. */
  allowedFile?: string;
  /**
   * Check each redirect hop of the main frame's navigation against the policy: no guard proxy sees
   * them (a remote browser). A refused one is the page's problem.
   */
  checkRedirects?: boolean;
}

const PROXY_FAILURE = /^browserfn guard proxy:\s*/;
const GUARD_REFUSAL = /^browserfn network guard:\s*/;
/** What the proxy answers (with the blocked header) when the name has no address: not a refusal. */
const NO_ADDRESS = /^cannot resolve /;

/** Chromium's network errors for a page it could not reach, in words. */
export function unreachableMessage(url: string, errorText: string): string {
  const code = /ERR_[A-Z_]+/.exec(errorText)?.[0] ?? errorText.split('\n')[0] ?? errorText;
  const why = /NAME_NOT_RESOLVED|NAME_RESOLUTION/.test(code)
    ? 'the name does not resolve (DNS)'
    : /CERT|SSL|TLS/.test(code)
      ? 'the TLS connection failed'
      : /TIMED_OUT|TIMEOUT/.test(code)
        ? 'the connection timed out'
        : /REFUSED|TUNNEL|RESET|CLOSED|UNREACHABLE|EMPTY_RESPONSE|ADDRESS/.test(code)
          ? 'nothing answered there'
          : 'the page did not load';
  return `could not reach ${url}: ${why} (${code})`;
}

const sameDocument = (a: string, b: string) => a.split('#')[0] === b.split('#')[0];

/** Proxy answers that stand for a refusal or a failed connection, not for the site's own page. */
async function proxyAnswer(response: Response): Promise<PageProblem | undefined> {
  const url = response.url();
  const status = response.status();
  if (status === 403 && response.headers()[BLOCKED_HEADER] === '1') {
    const text = (await response.text().catch(() => '')).replace(GUARD_REFUSAL, '');
    if (NO_ADDRESS.test(text))
      return { kind: 'unreachable', url, message: unreachableMessage(url, 'ERR_NAME_NOT_RESOLVED') };
    return { kind: 'blocked', url, message: text || `Blocked request to ${url} by the network guard` };
  }
  if (status === 502 && /^text\/plain/.test(response.headers()['content-type'] ?? '')) {
    const text = await response.text().catch(() => '');
    if (PROXY_FAILURE.test(text))
      return {
        kind: 'unreachable',
        url,
        message: `could not reach ${url}: ${text.replace(PROXY_FAILURE, '').split('\n')[0]}`,
      };
  }
  return undefined;
}

/**
 * Watches what the main frame of a page actually loads, so a navigation the guard refused or that
 * never reached its site (a meta refresh, a `Refresh` header, a script, a form, a clicked link) is
 * reported as such instead of its error page being read as the page.
 */
export function watchPage(page: Page, browser: Browser | null, options: WatchOptions = {}): PageWatch {
  let status: number | undefined;
  let problem: Promise<PageProblem | undefined> | undefined;
  let crashed = false;
  // A popup's first navigation has no frame yet (`frame()` throws): it is not this page's main frame's.
  const isMain = (r: Request) => {
    try {
      return r.isNavigationRequest() && r.frame() === page.mainFrame();
    } catch {
      return false;
    }
  };
  const record = (p: Promise<PageProblem | undefined>) => {
    // The first problem wins: later ones are consequences (the error page, a retry).
    const before = problem;
    problem = (async () => (await before) ?? (await p))();
  };

  let refusedFile: string | undefined;
  /** A file: page may open another file: page (the browser allows it): only the typed one is ours. */
  const fileCheck = (url: string) => {
    if (!/^file:/i.test(url) || url === refusedFile) return;
    if (options.allowedFile && sameDocument(url, options.allowedFile)) return;
    refusedFile = url;
    record(
      Promise.resolve({
        kind: 'blocked',
        url,
        message: `Blocked request to ${url}: file URLs are not allowed`,
      }),
    );
  };
  // A remote browser's main frame redirected to a refused address: the page's problem (its child
  // frames are guard-route.ts's).
  const redirectCheck = (r: Request, policy: GuardPolicy) => {
    const url = r.url();
    record(
      checkUrl(url, policy).then(
        (v) => (v.ok ? undefined : { kind: 'blocked' as const, url, message: v.message }),
        () => ({ kind: 'blocked' as const, url, message: `Blocked request to ${url} by the network guard` }),
      ),
    );
  };
  const onRequest = (r: Request) => {
    if (isMain(r)) fileCheck(r.url());
    if (options.checkRedirects && options.policy && isMain(r) && r.redirectedFrom())
      redirectCheck(r, options.policy);
  };
  const onNavigated = (f: Frame) => {
    if (f === page.mainFrame()) fileCheck(f.url());
  };
  const onResponse = (r: Response) => {
    if (!isMain(r.request())) return;
    status = r.status();
    record(proxyAnswer(r));
  };
  const onFailed = (r: Request) => {
    if (!isMain(r)) return;
    const error = r.failure()?.errorText ?? '';
    // Another navigation took over, or a download: nothing failed.
    if (/ERR_ABORTED/.test(error)) return;
    const url = r.url();
    record(
      (async (): Promise<PageProblem> => {
        // A refused CONNECT or a request the route guard aborted looks like a network error to
        // the browser; the policy says whether it was ours.
        const verdict = options.policy ? await checkUrl(url, options.policy) : undefined;
        if (verdict && !verdict.ok) return { kind: 'blocked', url, message: verdict.message };
        // The browser's own refusal: a redirect to file: or another scheme a web page may not reach.
        if (/ERR_UNSAFE_REDIRECT/.test(error))
          return {
            kind: 'blocked',
            url,
            message: `Blocked redirect from ${url} to a local file or an unsafe scheme`,
          };
        if (/ERR_BLOCKED_BY_CLIENT/.test(error))
          return { kind: 'blocked', url, message: `Blocked request to ${url} by the network guard` };
        return { kind: 'unreachable', url, message: unreachableMessage(url, error) };
      })(),
    );
  };
  const onCrash = () => {
    crashed = true;
  };
  page.on('request', onRequest);
  page.on('framenavigated', onNavigated);
  page.on('response', onResponse);
  page.on('requestfailed', onFailed);
  page.on('crash', onCrash);
  browser?.on('disconnected', onCrash);
  return {
    status: () => status,
    take: async () => {
      const p = problem;
      problem = undefined;
      return p ? await p : undefined;
    },
    crashed: () => crashed || (browser ? !browser.isConnected() : false),
    dispose: () => {
      page.off('request', onRequest);
      page.off('framenavigated', onNavigated);
      page.off('response', onResponse);
      page.off('requestfailed', onFailed);
      page.off('crash', onCrash);
      browser?.off('disconnected', onCrash);
    },
  };
}

/** The page asked for could not be reached (refused connection, DNS, TLS): nothing was loaded. */
export class PageUnreachableError extends Error {
  override name = 'PageUnreachableError';
  constructor(
    readonly url: string,
    message: string,
  ) {
    super(message);
  }
}

/** The browser (or the page's renderer) died while we were using it. */
export class BrowserCrashedError extends Error {
  override name = 'BrowserCrashedError';
}
