import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../lib/store/cache.ts';
import { LocalCacheStore } from '../../lib/store/local-cache.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-local-cache-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entry = (hits: number): CacheEntry => ({
  key: 'ab'.repeat(16),
  instruction: 'click sign in',
  urlPattern: 'http://127.0.0.1/login.html',
  signature: 'sig',
  variableNames: [],
  actions: [{ method: 'click', target: { locator: `#b${hits}` }, description: `write ${hits}` }],
  createdAt: new Date(0).toISOString(),
  updatedAt: new Date().toISOString(),
  hits,
});

describe('LocalCacheStore', () => {
  it('survives 50 concurrent writes of one key: no error, one valid entry, no temp files left', async () => {
    const store = new LocalCacheStore(join(dir, 'race'));
    const results = await Promise.allSettled(Array.from({ length: 50 }, (_, i) => store.put(entry(i))));
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    const text = await readFile(join(dir, 'race', `${'ab'.repeat(16)}.json`), 'utf8');
    const saved = JSON.parse(text) as CacheEntry;
    expect(saved.hits).toBeGreaterThanOrEqual(0);
    expect(saved.actions[0]!.description).toBe(`write ${saved.hits}`);
    expect(await readdir(join(dir, 'race'))).toEqual([`${'ab'.repeat(16)}.json`]);
    expect((await store.get(saved.key))?.hits).toBe(saved.hits);
  });
});
