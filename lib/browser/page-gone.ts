// Pure and free of Node: the edge worker explains a missing page by the same rule as the Node server.

/**
 * Why there is nothing to work on at a URL, or undefined: a 429 (the site refuses to serve us now),
 * or a 404 or 410 that the page did not navigate away from (a single-page app that serves its shell
 * as a 404 and routes by script does). Working on such a page only turns an error page into data.
 */
export function pageGone(status: number, answeredUrl: string, urlNow: string): string | undefined {
  if (status === 429) return 'the site answered HTTP 429 (too many requests)';
  if (status !== 404 && status !== 410) return undefined;
  if (urlNow !== answeredUrl) return undefined;
  return `the page answered HTTP ${status} (${status === 404 ? 'not found' : 'gone'})`;
}
