import { describe, expect, it } from 'vitest';
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
});
