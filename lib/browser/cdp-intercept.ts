/**
 * The guard's hook on the raw-CDP driver: every request of every session of the tab pauses on the
 * Fetch domain, is put to the hook, and goes on or fails as `BlockedByClient`. A hook that throws
 * blocks the request: the guard never lets through what it could not check.
 */
import type { CdpSession } from './cdp-session.ts';
import type { RequestHook } from './page-driver.ts';

type P = Record<string, unknown>;

/** Answers one `Fetch.requestPaused` with the hook's verdict (no hook: the request goes on). */
export async function answerPaused(s: CdpSession, p: P, hook: RequestHook | undefined): Promise<void> {
  const request = p.request as { url: string; method: string };
  let verdict: Awaited<ReturnType<RequestHook>> = { allow: true };
  try {
    if (hook)
      verdict = await hook({
        url: request.url,
        method: request.method,
        resourceType: p.resourceType as string,
        navigation: p.resourceType === 'Document',
        redirect: p.redirectedRequestId !== undefined,
        ...(p.frameId ? { frameId: p.frameId as string } : {}),
      });
  } catch {
    verdict = { allow: false, reason: 'the guard could not check the request' };
  }
  const requestId = p.requestId as string;
  if (verdict.allow) await s.send('Fetch.continueRequest', { requestId }).catch(() => undefined);
  else
    await s.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(() => undefined);
}

/**
 * Pauses every request of these sessions. The page's own session must take it (else the call
 * fails); a frame or worker session that is going away may not, and its requests go with it.
 */
export async function pauseRequests(sessions: Iterable<CdpSession>, page: CdpSession): Promise<void> {
  const enable = (s: CdpSession) => s.send('Fetch.enable', { patterns: [{ urlPattern: '*' }] });
  await Promise.all([...sessions].map((s) => (s === page ? enable(s) : enable(s).catch(() => undefined))));
}

export async function stopPausing(sessions: Iterable<CdpSession>): Promise<void> {
  await Promise.all([...sessions].map((s) => s.send('Fetch.disable').catch(() => undefined)));
}
