/**
 * The per-host rate buckets of the run table: one item per bucket, changed only by compare-and-set on
 * its `version` (DynamoDB Local stand-ins have no transactions); the bucket arithmetic is
 * token-bucket.ts's.
 */
import { bucketKey, bucketToItem, itemToBucket } from './dynamo-items.ts';
import type { DynamoTable } from './dynamo-table.ts';
import type { RateDecision, RateLimit } from './ports.ts';
import { type BucketState, pausedUntil, takeFrom } from './token-bucket.ts';

/** Compare-and-set attempts on a hot rate bucket before answering "not now" instead. */
const BUCKET_ATTEMPTS = 12;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class DynamoRateBuckets {
  constructor(private readonly table: DynamoTable) {}

  /** Writes `next` only if the bucket is still the `state` it was computed from. */
  private async swap(key: string, state: BucketState | undefined, next: BucketState): Promise<boolean> {
    const { written } = await this.table.putIf(
      bucketToItem(key, next),
      state ? '#version = :version' : 'attribute_not_exists(pk)',
      state
        ? {
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': state.version },
          }
        : {},
    );
    return written;
  }

  private async read(key: string): Promise<BucketState | undefined> {
    const item = await this.table.get(bucketKey(key));
    return item ? itemToBucket(item) : undefined;
  }

  async takeToken(key: string, limit: RateLimit, nowMs: number): Promise<RateDecision> {
    for (let attempt = 0; attempt < BUCKET_ATTEMPTS; attempt++) {
      const state = await this.read(key);
      const { decision, next } = takeFrom(state, limit, nowMs);
      // A refusal changes nothing another taker needs to see: no write, no contention.
      if (!decision.granted) return decision;
      if (await this.swap(key, state, next)) return decision;
      // Another worker took from the bucket between our read and write: read it again.
      await sleep(Math.random() * (5 + attempt * 5));
    }
    // Constant contention means others are being served; come back shortly rather than fail.
    return { granted: false, waitMs: 20 + Math.round(Math.random() * 30) };
  }

  async pausedUntil(key: string): Promise<number> {
    return (await this.read(key))?.pausedUntilMs ?? 0;
  }

  async pause(key: string, untilMs: number): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const state = await this.read(key);
      if (await this.swap(key, state, pausedUntil(state, untilMs, Date.now()))) return;
      await sleep(Math.random() * (5 + attempt * 5));
    }
    throw new Error(`could not pause rate bucket ${key}: it kept changing under 50 attempts`);
  }
}
