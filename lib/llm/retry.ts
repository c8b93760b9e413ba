import { LlmError } from './types.ts';

export interface BackoffOptions {
  baseMs: number;
  capMs: number;
  /** Longest retry-after we accept (default 60 s): a provider asking for minutes means "give up". */
  retryAfterCapMs?: number;
}

/**
 * Wait before retry `attempt` (1-based): full-jitter exponential backoff, or what the provider
 * asked for in retry-after when that is longer. `random` is injectable so tests can pin it.
 */
export function backoffDelay(
  attempt: number,
  opts: BackoffOptions,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const exp = Math.min(opts.capMs, opts.baseMs * 2 ** (attempt - 1));
  const jittered = Math.round(random() * exp);
  if (retryAfterMs === undefined) return jittered;
  return Math.max(Math.min(retryAfterMs, opts.retryAfterCapMs ?? 60_000), jittered);
}

/** retry-after (seconds or HTTP date) / retry-after-ms headers → milliseconds. */
export function parseRetryAfter(
  headers: Headers | Record<string, string | undefined> | undefined,
): number | undefined {
  if (!headers) return undefined;
  const get = (k: string) => (headers instanceof Headers ? headers.get(k) : headers[k]) ?? undefined;
  const ms = get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = get('retry-after');
  if (!s) return undefined;
  if (Number.isFinite(Number(s))) return Number(s) * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

export const isRetryable = (err: unknown): boolean =>
  err instanceof LlmError &&
  (err.kind === 'rate_limit' || err.kind === 'server' || err.kind === 'timeout' || err.kind === 'network');

/** Resolves after `ms`, or false at once when the signal aborts (then there is nothing to retry for). */
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(t);
      resolve(false);
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Runs `fn` with retries on rate limits, server errors, timeouts and network errors. */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  opts: BackoffOptions & {
    retries: number;
    signal?: AbortSignal;
    onRetry?: (err: LlmError, waitMs: number) => void;
  },
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!isRetryable(err) || attempt >= opts.retries || opts.signal?.aborted) throw err;
      const e = err as LlmError;
      const wait = backoffDelay(attempt + 1, opts, e.retryAfterMs);
      opts.onRetry?.(e, wait);
      if (!(await sleep(wait, opts.signal))) throw err;
    }
  }
}
