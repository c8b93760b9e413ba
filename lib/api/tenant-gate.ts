import { keySegment } from '../store/keys.ts';
import type { RateLimit, RunStore } from '../store/ports.ts';

/**
 * How many page-opening calls each API key may have in progress at once. Every such call holds
 * a browser context until it answers; without a cap, one caller's burst takes the machine's
 * memory and CPU from every other tenant. Counting only (no queue): a caller over its share is
 * told at once and retries, rather than waiting in a line it cannot see.
 */
export class TenantGate {
  private readonly inFlight = new Map<string, number>();

  constructor(readonly perTenant: number) {}

  /** A release function if the tenant is under its share (call it exactly once), else undefined. */
  enter(tenant: string): (() => void) | undefined {
    const now = this.inFlight.get(tenant) ?? 0;
    if (now >= this.perTenant) return undefined;
    this.inFlight.set(tenant, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(tenant) ?? 1) - 1;
      if (left > 0) this.inFlight.set(tenant, left);
      else this.inFlight.delete(tenant);
    };
  }

  active(tenant: string): number {
    return this.inFlight.get(tenant) ?? 0;
  }
}

/** The default share per key: a few pages at once each, on a machine several keys share. */
export const DEFAULT_CALLS_PER_TENANT = 8;

/**
 * Calls a key may start per second, kept in token buckets of a store every server instance shares
 * (the run store: files locally, DynamoDB on AWS). The in-process gate above cannot see other Lambda
 * instances; this can.
 */
export interface CallRate {
  buckets: Pick<RunStore, 'takeToken'>;
  limit: RateLimit;
}

export const callRateKey = (tenant: string) => `calls:${keySegment(tenant)}`;

/**
 * `BROWSERFN_CALLS_PER_SECOND_PER_KEY` as a limit (a burst of two seconds' worth, at least one call);
 * undefined when it is not set.
 */
export function callRateFromEnv(
  value: string | undefined,
  buckets: CallRate['buckets'],
): CallRate | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const rate = Number(value);
  if (!Number.isFinite(rate) || rate <= 0)
    throw new Error(`BROWSERFN_CALLS_PER_SECOND_PER_KEY must be a number above 0, got "${value}"`);
  return { buckets, limit: { ratePerSecond: rate, burst: Math.max(1, Math.ceil(rate * 2)) } };
}

/**
 * Takes one call from the tenant's bucket: undefined when granted, else the seconds to wait. A store
 * that cannot answer lets the call through (logged): the limiter must not take the API down with it,
 * and the in-process gate and the function's concurrency still bound the load.
 */
export async function callRateWait(
  rate: CallRate,
  tenant: string,
  log?: (e: { level: 'warn'; msg: string; [k: string]: unknown }) => void,
): Promise<number | undefined> {
  try {
    const decision = await rate.buckets.takeToken(callRateKey(tenant), rate.limit, Date.now());
    return decision.granted ? undefined : Math.max(1, Math.ceil(decision.waitMs / 1000));
  } catch (err) {
    log?.({ level: 'warn', msg: 'call rate not checked: the store did not answer', error: String(err) });
    return undefined;
  }
}
