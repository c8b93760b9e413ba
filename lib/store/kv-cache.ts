/**
 * The action cache on Cloudflare Workers KV: the edge worker's adapter of the CacheStore port. It
 * stands in for what local files (LocalCacheStore) are to the Node server and the run store's
 * table is on AWS: remembered successes, one JSON value per key, each tenant under a prefix of its
 * own. KV is eventually consistent (a write can take up to a minute to be seen in other places):
 * fine for a cache, whose miss only costs a model call; entries expire after 30 days unused.
 */
import type { CacheEntry, CacheStore } from './cache.ts';
import { tenantSegment } from './tenant-key.ts';

/** The part of a Workers KV namespace binding this adapter uses (no Workers types needed). */
export interface KvNamespace {
  get(key: string, type: 'text'): Promise<string | null>;
  put(key: string, value: string, options?: { expirationTtl?: number }): Promise<void>;
  delete(key: string): Promise<void>;
}

const TTL_S = 30 * 24 * 3600;

export class KvCacheStore implements CacheStore {
  private readonly prefix: string;

  constructor(
    private readonly kv: KvNamespace,
    tenant: string,
  ) {
    this.prefix = `cache/${tenantSegment(tenant)}/`;
  }

  private key(key: string): string {
    if (!/^[a-f0-9]{16,64}$/.test(key)) throw new Error(`cache key must be hex, got "${key}"`);
    return this.prefix + key;
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    const text = await this.kv.get(this.key(key), 'text');
    if (text === null) return undefined;
    try {
      return JSON.parse(text) as CacheEntry;
    } catch {
      // A corrupt entry is a miss, not an outage.
      return undefined;
    }
  }

  async put(entry: CacheEntry): Promise<void> {
    await this.kv.put(this.key(entry.key), JSON.stringify(entry), { expirationTtl: TTL_S });
  }

  async delete(key: string): Promise<void> {
    await this.kv.delete(this.key(key));
  }
}
