import { describe, expect, it } from 'vitest';
import { FINISH_MARGIN_MS, MIN_SLICE_MS, nextSliceBudget } from '../../lib/runs/queue/consumer.ts';

describe('how long the next queued slice may work', () => {
  it('gets the whole configured budget in an invocation with time to spare', () => {
    expect(nextSliceBudget(300_000, 240_000)).toBe(240_000);
    expect(nextSliceBudget(900_000, 240_000)).toBe(240_000);
  });

  it('gets what is left after the finish margin when that is less', () => {
    expect(nextSliceBudget(200_000, 240_000)).toBe(200_000 - FINISH_MARGIN_MS);
  });

  it('is not started when too little would be left to do anything', () => {
    expect(nextSliceBudget(FINISH_MARGIN_MS + MIN_SLICE_MS - 1, 240_000)).toBeUndefined();
    expect(nextSliceBudget(10_000, 240_000)).toBeUndefined();
    expect(nextSliceBudget(FINISH_MARGIN_MS + MIN_SLICE_MS, 240_000)).toBe(MIN_SLICE_MS);
  });
});
