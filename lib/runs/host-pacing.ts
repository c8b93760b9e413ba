/**
 * Per-host pacing of a run's samples, shared by every worker of the tenant through the run store: the
 * spec's rate limit as a token bucket, and a host that answered "too many requests" paused until its
 * Retry-After for every sample that would load it.
 */
import { reportThrottle } from '../store/rate-gate.ts';
import type { RunDeps } from './run-deps.ts';
import { rateBucketKey, rateLimitFor, type TaskSpec } from './task-spec.ts';

type PacingDeps = Pick<RunDeps, 'runStore' | 'log'>;

/**
 * A sample's site said "too many requests": its host's bucket closes for this tenant's workers
 * until Retry-After (default 5 s, at most 10 min), and this worker waits that out if the slice has
 * the time; false (the sample then fails, saying so) when it has not.
 */
async function throttled(
  deps: PacingDeps,
  tenant: string,
  url: string,
  retryAfter: string | undefined,
  deadline: number,
): Promise<boolean> {
  const host = new URL(url).host.toLowerCase();
  const reopens = await reportThrottle(deps.runStore, rateBucketKey(tenant, host), retryAfter);
  deps.log?.({
    level: 'info',
    msg: 'site throttled us; host paused',
    tenant,
    host,
    ms: reopens - Date.now(),
  });
  // Enough left after the wait to load and read the page again.
  if (reopens + 10_000 > deadline) return false;
  await new Promise((r) => setTimeout(r, Math.max(0, reopens - Date.now())));
  return true;
}

/** `throttled`, then a token of the host's bucket (if the spec limits it) before asking again. */
export async function throttledThenPaced(
  deps: PacingDeps,
  tenant: string,
  spec: TaskSpec,
  url: string,
  retryAfter: string | undefined,
  deadline: number,
): Promise<boolean> {
  if (!(await throttled(deps, tenant, url, retryAfter, deadline))) return false;
  await pace(deps, tenant, spec, url, deadline);
  return true;
}

/** Waits for the per-host token bucket shared by every worker (no limit configured: no wait). */
export async function pace(
  deps: PacingDeps,
  tenant: string,
  spec: TaskSpec,
  url: string,
  deadline: number,
): Promise<void> {
  const limit = rateLimitFor(spec, url);
  if (!limit) {
    // No pace of its own, but a host that answered "too many requests" is paused for every sample
    // of the tenant: a read, so runs with no limit do not contend on the bucket.
    const host = new URL(url).host.toLowerCase();
    const until = await deps.runStore.bucketPausedUntil(rateBucketKey(tenant, host));
    const waitMs = until - Date.now();
    // A pause longer than the slice is not waited for here: the sample goes ahead, and meets the
    // site's own answer (and its Retry-After) if the host still turns it away.
    if (waitMs > 0 && Date.now() + waitMs < deadline) await new Promise((r) => setTimeout(r, waitMs));
    return;
  }
  for (;;) {
    const d = await deps.runStore.takeToken(rateBucketKey(tenant, limit.host), limit, Date.now());
    if (d.granted) return;
    if (Date.now() + d.waitMs > deadline)
      throw new Error(`rate limit for ${limit.host} left no time in this slice`);
    await new Promise((r) => setTimeout(r, d.waitMs));
  }
}
