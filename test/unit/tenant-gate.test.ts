import { describe, expect, it } from 'vitest';
import { callRateFromEnv, callRateKey, callRateWait, TenantGate } from '../../lib/api/tenant-gate.ts';
import { rateBucketKey } from '../../lib/runs/task-spec.ts';

describe('TenantGate', () => {
  it('lets each tenant in up to its share, and counts a release once however often it is called', () => {
    const gate = new TenantGate(2);
    const a1 = gate.enter('a');
    const a2 = gate.enter('a');
    expect(a1).toBeTypeOf('function');
    expect(a2).toBeTypeOf('function');
    expect(gate.enter('a')).toBeUndefined();
    expect(gate.enter('b')).toBeTypeOf('function');
    a1!();
    a1!();
    expect(gate.active('a')).toBe(1);
    const a3 = gate.enter('a');
    expect(a3).toBeTypeOf('function');
    expect(gate.enter('a')).toBeUndefined();
    a2!();
    a3!();
    expect(gate.active('a')).toBe(0);
  });
});

describe('BROWSERFN_CALLS_PER_SECOND_PER_KEY', () => {
  const buckets = { takeToken: async () => ({ granted: true, waitMs: 0 }) };

  it('is off when unset, and a rate with two seconds of burst when set', () => {
    expect(callRateFromEnv(undefined, buckets)).toBeUndefined();
    expect(callRateFromEnv(' ', buckets)).toBeUndefined();
    expect(callRateFromEnv('2', buckets)?.limit).toEqual({ ratePerSecond: 2, burst: 4 });
    expect(callRateFromEnv('0.2', buckets)?.limit).toEqual({ ratePerSecond: 0.2, burst: 1 });
  });

  it('names the variable and what it takes when the value is wrong', () => {
    for (const bad of ['0', '-1', 'fast'])
      expect(() => callRateFromEnv(bad, buckets)).toThrow(
        `BROWSERFN_CALLS_PER_SECOND_PER_KEY must be a number above 0, got "${bad}"`,
      );
  });

  it('keeps each key in a bucket of its own, apart from the hosts runs pace', () => {
    expect(callRateKey('acme')).not.toBe(callRateKey('other'));
    expect(callRateKey('acme')).not.toBe(rateBucketKey('acme', 'acme'));
  });
});

describe('taking a call from the key’s bucket', () => {
  const limit = { ratePerSecond: 1, burst: 2 };

  it('says how many seconds to wait when the bucket is empty, at least one', async () => {
    const full = { takeToken: async () => ({ granted: true, waitMs: 0 }) };
    const empty = (waitMs: number) => ({ takeToken: async () => ({ granted: false, waitMs }) });
    expect(await callRateWait({ buckets: full, limit }, 'acme')).toBeUndefined();
    expect(await callRateWait({ buckets: empty(30), limit }, 'acme')).toBe(1);
    expect(await callRateWait({ buckets: empty(2400), limit }, 'acme')).toBe(3);
  });

  it('lets the call through, and says so in the log, when the store does not answer', async () => {
    const down = {
      takeToken: async (): Promise<never> => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    };
    const logged: string[] = [];
    expect(await callRateWait({ buckets: down, limit }, 'acme', (e) => logged.push(String(e.error)))).toBe(
      undefined,
    );
    expect(logged).toEqual(['Error: ProvisionedThroughputExceededException']);
  });
});
