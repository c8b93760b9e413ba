/**
 * The per-domain token bucket as a pure function: adapters store `BucketState` and call `takeFrom`
 * under their own concurrency control (a lock file locally, a conditional write on `version` in DynamoDB).
 */
import type { RateDecision, RateLimit } from './ports.ts';

export interface BucketState {
  tokens: number;
  updatedMs: number;
  /** Closed for everyone until then (a 429 or Retry-After seen by any worker). */
  pausedUntilMs: number;
  /** Bumped on every write; the DynamoDB adapter conditions its write on it. */
  version: number;
}

export function takeFrom(
  state: BucketState | undefined,
  limit: RateLimit,
  nowMs: number,
): { decision: RateDecision; next: BucketState } {
  if (!(limit.ratePerSecond > 0)) throw new Error('rate limit ratePerSecond must be a positive number');
  const burst = Math.max(1, limit.burst ?? 1);
  const current = state ?? { tokens: burst, updatedMs: nowMs, pausedUntilMs: 0, version: 0 };
  const elapsed = Math.max(0, nowMs - current.updatedMs);
  const tokens = Math.min(burst, current.tokens + (elapsed * limit.ratePerSecond) / 1000);
  const version = current.version + 1;
  // Callers on other machines (or a slow request) can arrive with an earlier clock than the last
  // writer's; the bucket's time never moves back, or the same interval would be refilled twice.
  const updatedMs = Math.max(current.updatedMs, nowMs);
  if (current.pausedUntilMs > nowMs) {
    return {
      decision: { granted: false, waitMs: current.pausedUntilMs - nowMs },
      next: { ...current, tokens, updatedMs, version },
    };
  }
  if (tokens >= 1) {
    return {
      decision: { granted: true, waitMs: 0 },
      next: { tokens: tokens - 1, updatedMs, pausedUntilMs: current.pausedUntilMs, version },
    };
  }
  return {
    decision: {
      granted: false,
      waitMs: Math.ceil(((1 - tokens) * 1000) / limit.ratePerSecond) + (updatedMs - nowMs),
    },
    next: { ...current, tokens, updatedMs, version },
  };
}

export function pausedUntil(state: BucketState | undefined, untilMs: number, nowMs: number): BucketState {
  const current = state ?? { tokens: 0, updatedMs: nowMs, pausedUntilMs: 0, version: 0 };
  return {
    ...current,
    // A pause also empties the bucket so the burst after it is not a stampede.
    tokens: 0,
    updatedMs: Math.max(current.updatedMs, nowMs),
    pausedUntilMs: Math.max(current.pausedUntilMs, untilMs),
    version: current.version + 1,
  };
}
