import type { Page, Response } from 'playwright-core';
import { NetworkBlockedError } from './guard.ts';
import { BLOCKED_HEADER } from './guard-proxy.ts';

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
 * Why there is nothing to work on at a URL, or undefined: a 404 or 410 that the page did not
 * navigate away from (a single-page app that serves its shell as a 404 and routes by script does).
 * Working on such a page only turns an error page into data.
 */
export function pageGone(status: number, answeredUrl: string, urlNow: string): string | undefined {
  if (status !== 404 && status !== 410) return undefined;
  if (urlNow !== answeredUrl) return undefined;
  return `the page answered HTTP ${status} (${status === 404 ? 'not found' : 'gone'})`;
}
