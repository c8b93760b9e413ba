/**
 * `RunMemoryStore` on local files: `<root>/<tenant>/<run>/memory/<sample>.json`, beside the run's
 * other records. Each entry is written once by hard link (`writeFileOnce`), so concurrent samples
 * (even in several processes) each keep their own file and none is lost or replaced.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { keySegment } from './keys.ts';
import { readJsonFile, writeFileOnce } from './local-files.ts';
import { boundedEntry, type RunMemoryEntry, type RunMemoryStore } from './run-memory-ports.ts';

export class LocalRunMemoryStore implements RunMemoryStore {
  constructor(readonly root: string) {}

  private dir(tenant: string, runId: string): string {
    return join(this.root, keySegment(tenant), keySegment(runId), 'memory');
  }

  async append(tenant: string, runId: string, entry: RunMemoryEntry): Promise<boolean> {
    const file = join(this.dir(tenant, runId), `${keySegment(entry.sampleId)}.json`);
    return writeFileOnce(file, JSON.stringify(boundedEntry(entry)));
  }

  async list(tenant: string, runId: string): Promise<RunMemoryEntry[]> {
    const dir = this.dir(tenant, runId);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const entries: RunMemoryEntry[] = [];
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const entry = await readJsonFile<RunMemoryEntry>(join(dir, name));
      if (entry) entries.push(entry);
    }
    return entries.sort((a, b) => a.writtenAt.localeCompare(b.writtenAt));
  }
}
