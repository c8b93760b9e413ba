/**
 * The per-domain rate limit as used by samples and queue consumers: wait for a token from the shared
 * bucket before each request to a site, and close the bucket for everyone when the site says "slow
 * down" (HTTP 429 / 503 with Retry-After).
 */
import type { RateLimit, RunStore } from './ports.ts';

type Buckets = Pick<RunStore, 'takeToken' | 'pauseBucket'>;

export interface WaitOptions {
  signal?: AbortSignal;
  /** Clock and timer, replaceable in tests. */
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Sleeps `ms`, rejecting with the signal's reason as soon as it aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Bucket key of a URL or host: its lower-cased host name, so all paths of a site share one limit. */
export function rateKey(urlOrHost: string): string {
  try {
    return new URL(urlOrHost).hostname.toLowerCase();
  } catch {
    return urlOrHost.toLowerCase();
  }
}

/**
 * Resolves once a token for `key` was taken; returns how long it waited. Rejects with the signal's
 * reason when aborted (a slice nearing its deadline, a cancelled run).
 */
export async function waitForToken(
  store: Buckets,
  key: string,
  limit: RateLimit,
  options: WaitOptions = {},
): Promise<number> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? abortableSleep;
  const started = now();
  for (;;) {
    options.signal?.throwIfAborted();
    const decision = await store.takeToken(key, limit, now());
    if (decision.granted) return now() - started;
    // A little jitter, so takers refused together do not all come back in the same millisecond.
    await sleep(Math.max(1, decision.waitMs) + Math.floor(Math.random() * 5), options.signal);
  }
}

/** Longest pause one header can impose: a site cannot park a domain for days by mistake. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** Pause when a site throttles without saying for how long. */
export const DEFAULT_THROTTLE_MS = 5_000;

/**
 * Milliseconds to wait from a Retry-After value: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // An HTTP date always names a weekday or month in letters; a bare decimal like "1.5" is not valid.
  if (!/[A-Za-z]/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * A site throttled us: close the domain's bucket for everyone until Retry-After says (default 5 s,
 * at most 10 min). Returns the time the bucket reopens.
 */
export async function reportThrottle(
  store: Buckets,
  key: string,
  retryAfter: string | null | undefined,
  nowMs: number = Date.now(),
): Promise<number> {
  const waitMs = Math.min(MAX_RETRY_AFTER_MS, parseRetryAfter(retryAfter, nowMs) ?? DEFAULT_THROTTLE_MS);
  const untilMs = nowMs + waitMs;
  await store.pauseBucket(key, untilMs);
  return untilMs;
}
