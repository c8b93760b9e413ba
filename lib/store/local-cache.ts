import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CacheEntry, CacheStore } from './cache.ts';

/** One JSON file per entry, written to a temp name and renamed, so a crash never leaves half a file. */
export class LocalCacheStore implements CacheStore {
  constructor(readonly dir: string) {}

  private file(key: string): string {
    if (!/^[a-f0-9]{16,64}$/.test(key)) throw new Error(`cache key must be hex, got "${key}"`);
    return join(this.dir, `${key}.json`);
  }

  async get(key: string): Promise<CacheEntry | undefined> {
    try {
      return JSON.parse(await readFile(this.file(key), 'utf8')) as CacheEntry;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      // A corrupt entry is a miss, not an outage.
      if (err instanceof SyntaxError) return undefined;
      throw err;
    }
  }

  async put(entry: CacheEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const target = this.file(entry.key);
    // Unique per write: concurrent writers of one key must never share (and steal) a temp file.
    const tmp = `${target}.${randomUUID()}.tmp`;
    await writeFile(tmp, JSON.stringify(entry, null, 2));
    await rename(tmp, target);
  }

  async delete(key: string): Promise<void> {
    await rm(this.file(key), { force: true });
  }
}
