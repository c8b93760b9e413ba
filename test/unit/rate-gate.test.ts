import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { RateDecision, RateLimit } from '../../lib/store/ports.ts';
import {
  DEFAULT_THROTTLE_MS,
  MAX_RETRY_AFTER_MS,
  parseRetryAfter,
  rateKey,
  reportThrottle,
  waitForToken,
} from '../../lib/store/rate-gate.ts';

/** A bucket that answers from a script and records what it was asked. */
function scriptedBuckets(answers: RateDecision[]) {
  const calls: { key: string; limit: RateLimit; nowMs: number }[] = [];
  const pauses: { key: string; untilMs: number }[] = [];
  return {
    calls,
    pauses,
    async takeToken(key: string, limit: RateLimit, nowMs: number) {
      calls.push({ key, limit, nowMs });
      return answers.shift() ?? { granted: true, waitMs: 0 };
    },
    async pauseBucket(key: string, untilMs: number) {
      pauses.push({ key, untilMs });
    },
  };
}

describe('Retry-After', () => {
  const now = Date.parse('2026-11-23T12:00:00Z');
  it('reads delay-seconds and HTTP dates', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Mon, 23 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 23 Nov 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('ignores what is absent or unreadable', () => {
    for (const bad of [undefined, null, '', 'soon', '1.5', '-3', '12 seconds']) {
      expect(parseRetryAfter(bad, now)).toBeUndefined();
    }
  });

  it('pauses the domain for everyone, by default 5 s and at most 10 min', async () => {
    const buckets = scriptedBuckets([]);
    expect(await reportThrottle(buckets, 'shop.example.test', '30', now)).toBe(now + 30_000);
    expect(await reportThrottle(buckets, 'shop.example.test', undefined, now)).toBe(
      now + DEFAULT_THROTTLE_MS,
    );
    expect(await reportThrottle(buckets, 'shop.example.test', '86400', now)).toBe(now + MAX_RETRY_AFTER_MS);
    expect(buckets.pauses.map((p) => p.untilMs - now)).toEqual([
      30_000,
      DEFAULT_THROTTLE_MS,
      MAX_RETRY_AFTER_MS,
    ]);
    expect(buckets.pauses.every((p) => p.key === 'shop.example.test')).toBe(true);
  });
});

describe('waitForToken', () => {
  it('sleeps as long as the bucket says, then takes the token', async () => {
    const buckets = scriptedBuckets([
      { granted: false, waitMs: 100 },
      { granted: false, waitMs: 40 },
    ]);
    let clock = 1_000;
    const slept: number[] = [];
    const waited = await waitForToken(
      buckets,
      'a.example.test',
      { ratePerSecond: 2 },
      {
        now: () => clock,
        sleep: async (ms) => {
          slept.push(ms);
          clock += ms;
        },
      },
    );
    expect(buckets.calls).toHaveLength(3);
    expect(slept[0]).toBeGreaterThanOrEqual(100);
    expect(slept[0]).toBeLessThan(105);
    expect(slept[1]).toBeGreaterThanOrEqual(40);
    expect(waited).toBe(slept[0]! + slept[1]!);
    expect(buckets.calls.map((c) => c.nowMs)).toEqual([1_000, 1_000 + slept[0]!, 1_000 + waited]);
  });

  it('stops waiting when its signal aborts', async () => {
    const buckets = scriptedBuckets(Array.from({ length: 100 }, () => ({ granted: false, waitMs: 60_000 })));
    const controller = new AbortController();
    const waiting = waitForToken(
      buckets,
      'a.example.test',
      { ratePerSecond: 1 },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('slice deadline')), 20);
    await expect(waiting).rejects.toThrow('slice deadline');
    expect(buckets.calls).toHaveLength(1);
  });

  it('holds every worker back after one of them was throttled (real local bucket)', async () => {
    const store = new LocalRunStore(await mkdtemp(join(tmpdir(), 'bfn-gate-')));
    const limit = { ratePerSecond: 50 };
    await waitForToken(store, 'slow.example.test', limit);
    await reportThrottle(store, 'slow.example.test', '1');
    const started = Date.now();
    await Promise.all([1, 2].map(() => waitForToken(store, 'slow.example.test', limit)));
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    // Another domain is not held back by it.
    expect(await waitForToken(store, 'fast.example.test', limit)).toBeLessThan(500);
  });

  it('keys buckets by host name', () => {
    expect(rateKey('https://Shop.Example.test:8443/p/1?q=2')).toBe('shop.example.test');
    expect(rateKey('Shop.Example.test')).toBe('shop.example.test');
  });
});
