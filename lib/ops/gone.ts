import { pageGone } from '../browser/page-gone.ts';
import { type ActResult, OpError } from './types.ts';

/**
 * A failed act on a page that answered 404/410 failed because the page is not there, not because
 * the instruction could not be resolved: one rule, so the API and the CLI say the same thing.
 */
export function explainGoneAct<R extends ActResult & { status?: number }>(acted: R): R {
  if (acted.success || acted.status === undefined) return acted;
  const gone = pageGone(acted.status, acted.url, acted.url);
  if (!gone) return acted;
  const message = `${gone}, so there was nothing to act on`;
  return { ...acted, message, ...(acted.error ? { error: { ...acted.error, message } } : {}) };
}

/**
 * An op that threw on a page that answered 404/410 (no model to ask, nothing matched) threw
 * because the page is not there: the error to give instead, or undefined to keep the original.
 */
export function goneError(status: number | undefined, url: string): OpError | undefined {
  const gone = status === undefined ? undefined : pageGone(status, url, url);
  return gone ? new OpError('navigation', `${gone}, so there was nothing to work on (${url})`) : undefined;
}
