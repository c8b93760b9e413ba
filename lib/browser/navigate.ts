import type { Page, Response } from 'playwright-core';
import { NetworkBlockedError } from './guard.ts';
import { BLOCKED_HEADER } from './guard-proxy.ts';
import { pageGone } from './page-gone.ts';

export { pageGone };

/**
 * `page.goto` that turns a guard refusal into a NetworkBlockedError: either the request-level
 * guard aborted it (ERR_BLOCKED_BY_CLIENT) or the proxy refused a redirect hop (its 403 answer).
 */
export async function guardedGoto(page: Page, url: string, timeout = 30_000): Promise<Response | null> {
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout });
  } catch (err) {
    const msg = (err as Error).message;
    if (/ERR_BLOCKED_BY_CLIENT/.test(msg))
      throw new NetworkBlockedError(url, 'blocked', `Blocked request to ${url} by the network guard`);
    throw err;
  }
  const refused = response ? await blockedBy(response) : undefined;
  if (refused) throw new NetworkBlockedError(response!.url(), 'redirect', refused);
  return response;
}

export async function blockedBy(response: Response): Promise<string | undefined> {
  if (response.status() !== 403 || response.headers()[BLOCKED_HEADER] !== '1') return undefined;
  const text = await response.text().catch(() => '');
  return text.replace(/^browserfn network guard:\s*/, '') || `Blocked request to ${response.url()}`;
}

/**
 * Called when a site answers "too many requests": pauses the host for the caller's other workers
 * and waits out the pause. True when the page may be asked for again now, false when there is no
 * time left to wait.
 */
export type OnThrottle = (url: string, retryAfter: string | undefined) => Promise<boolean>;

/** The site asks us to slow down: a 429, or a 503 that says when to come back. */
export function throttledBy(
  status: number,
  headers: Record<string, string>,
): { retryAfter?: string } | undefined {
  const retryAfter = headers['retry-after'];
  if (status === 429 || (status === 503 && retryAfter !== undefined))
    return retryAfter !== undefined ? { retryAfter } : {};
  return undefined;
}

/** What a site that asks us to slow down (see throttledBy) said, in a result's words. */
export const throttleReason = (status: number): string =>
  status === 429
    ? 'the site answered HTTP 429 (too many requests)'
    : `the site answered HTTP ${status} and asked us to come back later (Retry-After)`;

/** Why a loaded page has nothing to work on (`pageGone`, or a site still asking us to come back later). */
export function pageUnusable(response: Response, urlNow: string): string | undefined {
  const status = response.status();
  if (status === 503 && throttledBy(status, response.headers())) return throttleReason(status);
  return pageGone(status, response.url(), urlNow);
}

/** Tries a throttled page again at most this many times in one go. */
const THROTTLE_RETRIES = 3;

/**
 * `guardedGoto`, asking again (after `onThrottle` has waited) while the site answers that it is
 * being asked too often. The last answer is returned whatever it is.
 */
export async function pacedGoto(page: Page, url: string, onThrottle?: OnThrottle): Promise<Response | null> {
  let response = await guardedGoto(page, url);
  for (let i = 0; i < THROTTLE_RETRIES && onThrottle && response; i++) {
    const throttle = throttledBy(response.status(), response.headers());
    if (!throttle || !(await onThrottle(url, throttle.retryAfter))) break;
    response = await guardedGoto(page, url);
  }
  return response;
}
