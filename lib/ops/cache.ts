import type { Action } from '../actions/types.ts';
import { urlPattern } from '../perception/metrics.ts';
import { sha256Hex } from '../perception/sha256.ts';
import type { Snapshot } from '../perception/types.ts';
import type { CacheStore } from '../store/cache.ts';
import type { ActionCacheLike, CacheHit, CacheQuery } from './types.ts';

/** Case, spacing, quote style and trailing punctuation do not change what an instruction means. */
export function normalizeInstruction(text: string): string {
  return (
    text
      .toLowerCase()
      // Quotes only mark where a name starts and ends; `click "Sign in"` means `click Sign in`.
      .replace(/[“”«»„"‘’`]/g, '')
      .replace(/(^|\s)'|'(?=\s|$)/g, '$1')
      .replace(/\s+/g, ' ')
      .replace(/[.!?\s]+$/, '')
      .trim()
  );
}

/** Key parts: instruction, kind of page (URL pattern + structure), variable *names*. Never values. */
export function cacheKey(q: CacheQuery): string {
  const parts = [
    normalizeInstruction(q.instruction),
    urlPattern(q.url),
    q.signature,
    q.variableNames.join(','),
    // Only when set, so that every key made without it stays what it was.
    ...(q.guidance ? [`guidance:${sha256Hex(q.guidance)}`] : []),
  ];
  return sha256Hex(parts.join('\n')).slice(0, 32);
}

/** Only durable targets are worth keeping: ids die with their snapshot. */
const storable = (a: Action) => !a.target || !('id' in a.target);

/**
 * The cache is an optimisation: a store that fails (disk full, a race, a throttled table) makes a
 * lookup a miss and a write a no-op, never a failed call after the page was already acted on.
 */
export class ActionCache implements ActionCacheLike {
  constructor(
    readonly store: CacheStore,
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  private async quietly<T>(work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (err) {
      this.onError(err);
      return undefined;
    }
  }

  async lookup(q: CacheQuery): Promise<CacheHit | undefined> {
    const key = cacheKey(q);
    const entry = await this.quietly(() => this.store.get(key));
    if (!entry || entry.actions.length === 0) return undefined;
    await this.quietly(() =>
      this.store.put({ ...entry, hits: entry.hits + 1, updatedAt: new Date().toISOString() }),
    );
    return { actions: entry.actions, key };
  }

  async save(q: CacheQuery, actions: Action[], snapshot: Snapshot): Promise<void> {
    if (actions.length === 0 || !actions.every(storable)) return;
    const key = cacheKey(q);
    const now = new Date().toISOString();
    await this.quietly(() => this.write(key, q, actions, snapshot, now));
  }

  private async write(key: string, q: CacheQuery, actions: Action[], snapshot: Snapshot, now: string) {
    const old = await this.store.get(key);
    await this.store.put({
      key,
      instruction: normalizeInstruction(q.instruction),
      urlPattern: urlPattern(q.url),
      signature: snapshot.signature,
      variableNames: q.variableNames,
      actions: actions.map(({ method, target, to, args, description }) => ({
        method,
        ...(target ? { target } : {}),
        ...(to ? { to } : {}),
        ...(args ? { args } : {}),
        ...(description ? { description } : {}),
      })),
      createdAt: old?.createdAt ?? now,
      updatedAt: now,
      hits: old?.hits ?? 0,
    });
  }

  async forget(q: CacheQuery): Promise<void> {
    await this.quietly(() => this.store.delete(cacheKey(q)));
  }
}
