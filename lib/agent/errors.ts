/**
 * Infrastructure errors (the browser died, the model is unreachable, DNS, timeouts) count toward the
 * circuit breaker and make a stop retryable; logic errors (no such element, a refused id, an
 * impossible task) are the model's to fix and never trip it.
 */
import { isRetryable } from '../llm/retry.ts';
import { LlmError } from '../llm/types.ts';

export type ErrorClass = 'infra' | 'logic';

const INFRA =
  /Target (page, context or browser )?(has been )?closed|browser has disconnected|Browser closed|crash|net::ERR_(NAME_NOT_RESOLVED|CONNECTION|INTERNET|NETWORK|TIMED_OUT|ADDRESS|SSL|CERT|EMPTY_RESPONSE|PROXY)|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up|Navigation timeout|page\.goto: Timeout/i;

export function classify(err: unknown): ErrorClass {
  if (err instanceof LlmError) return isRetryable(err) ? 'infra' : 'logic';
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return INFRA.test(text) ? 'infra' : 'logic';
}

/** The page (or the browser under it) is gone: a new page is needed before anything else. */
export const isPageGone = (err: unknown): boolean =>
  /Target (page, context or browser )?(has been )?closed|browser has disconnected|Browser closed|crash/i.test(
    err instanceof Error ? err.message : String(err),
  );

export const firstLine = (err: unknown): string =>
  ((err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '').slice(0, 300);

/** Rejects after `ms` with a timeout error; the work itself is not cancelled, only no longer waited for. */
export async function withTimeout<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
