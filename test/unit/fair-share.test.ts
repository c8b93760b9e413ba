import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FairShare } from '../../lib/api/fair-share.ts';

describe('FairShare', () => {
  it('gives a freed slot to the key with the fewest reads running, not to the longest queue', async () => {
    const share = new FairShare(2);
    const order: string[] = [];
    const take = (key: string, label: string) =>
      share.take(key).then((release) => {
        order.push(label);
        return release;
      });
    // Key a fills both slots and queues three more; key b queues one after them.
    const a1 = await take('a', 'a1');
    const a2 = await take('a', 'a2');
    const waiting = [take('a', 'a3'), take('a', 'a4'), take('a', 'a5'), take('b', 'b1')];
    expect(share.use('a')).toEqual({ running: 2, waiting: 3 });
    expect(share.use('b')).toEqual({ running: 0, waiting: 1 });
    a1();
    const b1 = await waiting[3]!;
    expect(order).toEqual(['a1', 'a2', 'b1']);
    a2();
    const a3 = await waiting[0]!;
    // a keeps its own order; a release called twice frees one slot only.
    b1();
    b1();
    const a4 = await waiting[1]!;
    expect(order).toEqual(['a1', 'a2', 'b1', 'a3', 'a4']);
    expect(share.use('a')).toEqual({ running: 2, waiting: 1 });
    a3();
    a4();
    (await waiting[2]!)();
    expect(share.use('a')).toEqual({ running: 0, waiting: 0 });
  });

  it('refuses a slot count that is not a whole number of at least one', () => {
    expect(() => new FairShare(0)).toThrow(/slots: a whole number ≥ 1, got 0/);
  });

  describe('each key held to its share of the server time', () => {
    // The share's clock is the faked Date: it moves with the faked timers.
    beforeEach(() => {
      vi.useFakeTimers();
    });
    afterEach(() => vi.useRealTimers());
    const now = () => Date.now();
    const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);
    const settled = async <T>(p: Promise<T>) => {
      let done = false;
      void p.then(() => {
        done = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      return done;
    };

    it('a key that spent its burst waits until its credit grows back; another key goes at once', async () => {
      // A quarter of the time, 10 ms at once, 1 ms per read for the HTTP work around it.
      const share = new FairShare(4, { share: 0.25, burstMs: 10, overheadMs: 1, now });
      // Key a reads for 10 ms: its credit of 10 is gone (11 counted, so -1).
      const first = await share.take('a');
      await pass(10);
      first();
      const held = share.take('a');
      expect(await settled(held)).toBe(false);
      expect(share.use('a')).toEqual({ running: 0, waiting: 1 });
      // Key b has its own credit: its read is not held behind a's.
      const b = share.take('b');
      expect(await settled(b)).toBe(true);
      (await b)();
      // -1 ms of credit at 0.25 ms per ms: back above zero after 4 ms, and a's read runs.
      await pass(3);
      expect(await settled(held)).toBe(false);
      await pass(2);
      expect(await settled(held)).toBe(true);
      (await held)();
    });

    it('ten polls in a loop get a quarter of the time: about 2.5 reads per 10 ms of 1 ms reads, once the burst is spent', async () => {
      const share = new FairShare(4, { share: 0.25, burstMs: 10, overheadMs: 0, now });
      let reads = 0;
      let polling = true;
      const poll = async () => {
        while (polling) {
          const release = await share.take('a');
          await new Promise((r) => setTimeout(r, 1));
          reads++;
          release();
        }
      };
      const pollers = Array.from({ length: 10 }, poll);
      // 1,000 ms of polling: the 10 ms burst, then 250 ms of reads.
      await pass(1000);
      polling = false;
      await pass(100);
      await Promise.all(pollers);
      expect(reads).toBeGreaterThan(200);
      expect(reads).toBeLessThan(300);
    });

    it('a key that stays away gets its full burst back and is forgotten', async () => {
      const share = new FairShare(1, { share: 0.5, burstMs: 4, overheadMs: 0, now });
      const release = await share.take('a');
      await pass(20);
      release();
      // Far in debt: -16 ms, back after 32 ms at half the time.
      const next = share.take('a');
      await pass(31);
      expect(await settled(next)).toBe(false);
      await pass(2);
      (await next)();
      await pass(100);
      expect(share.use('a')).toEqual({ running: 0, waiting: 0 });
      expect(await settled(share.take('a'))).toBe(true);
    });

    it('refuses a share outside (0, 1]', () => {
      expect(() => new FairShare(1, { share: 0 })).toThrow(/share: above 0 and at most 1, got 0/);
      expect(() => new FairShare(1, { share: 1.5 })).toThrow(/share/);
    });
  });
});
