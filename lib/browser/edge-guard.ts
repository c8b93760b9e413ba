/**
 * The network guard where the browser is remote and we have no proxy in its path (the edge
 * worker): every request the page makes is put to the guard as it leaves the browser, through the
 * driver's request hook (the CDP Fetch domain), redirect hops included where the browser reports
 * them. A name the guard's own resolver cannot resolve is refused: the browser resolves names in
 * its own network, where such a name may well lead somewhere private.
 */
import type { GuardPolicy } from './guard-policy.ts';
import { checkUrl, type GuardVerdict, type Resolver } from './guard-rules.ts';
import type { OutgoingRequest, PageDriver } from './page-driver.ts';
import type { PageProblem } from './page-watch.ts';

/** checkUrl, plus: a name that does not resolve here is refused rather than let through. */
export async function checkEdgeUrl(
  input: string,
  policy: GuardPolicy,
  resolve: Resolver,
): Promise<GuardVerdict> {
  let unresolved: string | undefined;
  const noting: Resolver = async (host) => {
    try {
      return await resolve(host);
    } catch (err) {
      unresolved = host;
      throw err;
    }
  };
  const verdict = await checkUrl(input, policy, noting);
  // checkUrl lets an unresolvable name through (on Node the browser shares our resolver and fails too).
  if (!verdict.ok || unresolved === undefined) return verdict;
  return {
    ok: false,
    rule: 'name the guard could not resolve',
    url: input,
    message: `Blocked request to ${input}: ${unresolved} does not resolve for the guard, and the remote browser would resolve it in its own network. Allow it with BROWSERFN_ALLOW_HOSTS if this is intended.`,
  };
}

export interface EdgeBlocked {
  url: string;
  rule: string;
  message: string;
  navigation: boolean;
  redirect: boolean;
}

export interface EdgeGuard {
  blocked: EdgeBlocked[];
  /** A main-frame navigation refused since the last call (then cleared), as the ops' pageProblem. */
  problem(): Promise<PageProblem | undefined>;
  stop(): Promise<void>;
}

/** Arms the guard on a page: resolves once every request of the page goes through it. */
export async function guardPage(
  driver: PageDriver,
  policy: GuardPolicy,
  resolve: Resolver,
): Promise<EdgeGuard> {
  const blocked: EdgeBlocked[] = [];
  let pending: PageProblem | undefined;
  const mainFrame = () => driver.mainFrame().id;
  const stop = await driver.interceptRequests(async (req: OutgoingRequest) => {
    const verdict = await checkEdgeUrl(req.url, policy, resolve);
    if (verdict.ok) return { allow: true };
    const entry = {
      url: verdict.url,
      rule: verdict.rule,
      message: verdict.message,
      navigation: req.navigation,
      redirect: req.redirect,
    };
    blocked.push(entry);
    if (blocked.length > 200) blocked.shift();
    if (req.navigation && (req.frameId === undefined || req.frameId === mainFrame()))
      pending = { kind: 'blocked', url: verdict.url, message: verdict.message };
    return { allow: false, reason: verdict.message };
  });
  return {
    blocked,
    problem: async () => {
      const p = pending;
      pending = undefined;
      return p;
    },
    stop,
  };
}
