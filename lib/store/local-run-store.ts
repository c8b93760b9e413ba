/**
 * `RunStore` on local files (the default): `<root>/<tenant>/<run>/run.json`, `samples/`, `checkpoints/`,
 * `results/`, and `<root>/_buckets/` for rate limits. Safe across processes: updates hold a lock file,
 * results are written once by hard link, checkpoints only move forward.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { keySegment } from './keys.ts';
import { readJsonFile, withFileLock, writeFileAtomic, writeFileOnce } from './local-files.ts';
import type {
  Checkpoint,
  RateDecision,
  RateLimit,
  ResultRecord,
  RunPatch,
  RunRecord,
  RunStore,
  SamplePatch,
  SampleRecord,
  WriteOnce,
} from './ports.ts';
import { type BucketState, pausedUntil, takeFrom } from './token-bucket.ts';

async function listJson<T>(dir: string): Promise<T[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const items = await Promise.all(
    names.filter((n) => n.endsWith('.json')).map((n) => readJsonFile<T>(join(dir, n))),
  );
  return items.filter((x): x is Awaited<T> => x !== undefined) as T[];
}

export class LocalRunStore implements RunStore {
  constructor(readonly root: string) {}

  private runDir(tenant: string, runId: string): string {
    return join(this.root, keySegment(tenant), keySegment(runId));
  }
  private runFile(tenant: string, runId: string): string {
    return join(this.runDir(tenant, runId), 'run.json');
  }
  private itemFile(tenant: string, runId: string, kind: string, sampleId: string): string {
    return join(this.runDir(tenant, runId), kind, `${keySegment(sampleId)}.json`);
  }

  async createRun(run: RunRecord): Promise<WriteOnce> {
    const ok = await writeFileOnce(this.runFile(run.tenant, run.runId), JSON.stringify(run, null, 2));
    return ok ? 'written' : 'exists';
  }

  getRun(tenant: string, runId: string): Promise<RunRecord | undefined> {
    return readJsonFile<RunRecord>(this.runFile(tenant, runId));
  }

  async updateRun(tenant: string, runId: string, patch: RunPatch): Promise<void> {
    const file = this.runFile(tenant, runId);
    await withFileLock(file, async () => {
      const run = await readJsonFile<RunRecord>(file);
      if (!run) throw new Error(`run ${runId} not found`);
      await writeFileAtomic(
        file,
        JSON.stringify({ ...run, ...patch, updatedAt: new Date().toISOString() }, null, 2),
      );
    });
  }

  async listRuns(tenant: string): Promise<RunRecord[]> {
    const dir = join(this.root, keySegment(tenant));
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    const runs = await Promise.all(names.map((n) => readJsonFile<RunRecord>(join(dir, n, 'run.json'))));
    return runs
      .filter((r): r is RunRecord => r !== undefined)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async putSamples(samples: SampleRecord[]): Promise<void> {
    for (const sample of samples) {
      await writeFileOnce(
        this.itemFile(sample.tenant, sample.runId, 'samples', sample.sampleId),
        JSON.stringify(sample, null, 2),
      );
    }
  }

  getSample(tenant: string, runId: string, sampleId: string): Promise<SampleRecord | undefined> {
    return readJsonFile<SampleRecord>(this.itemFile(tenant, runId, 'samples', sampleId));
  }

  async updateSample(tenant: string, runId: string, sampleId: string, patch: SamplePatch): Promise<void> {
    const file = this.itemFile(tenant, runId, 'samples', sampleId);
    await withFileLock(file, async () => {
      const sample = await readJsonFile<SampleRecord>(file);
      if (!sample) throw new Error(`sample ${sampleId} of run ${runId} not found`);
      await writeFileAtomic(
        file,
        JSON.stringify({ ...sample, ...patch, updatedAt: new Date().toISOString() }, null, 2),
      );
    });
  }

  async listSamples(tenant: string, runId: string): Promise<SampleRecord[]> {
    const samples = await listJson<SampleRecord>(join(this.runDir(tenant, runId), 'samples'));
    return samples.sort((a, b) => a.sampleId.localeCompare(b.sampleId));
  }

  async saveCheckpoint(
    tenant: string,
    runId: string,
    sampleId: string,
    checkpoint: Checkpoint,
  ): Promise<boolean> {
    const file = this.itemFile(tenant, runId, 'checkpoints', sampleId);
    return withFileLock(file, async () => {
      const stored = await readJsonFile<Checkpoint>(file);
      if (stored && stored.seq >= checkpoint.seq) return false;
      await writeFileAtomic(file, JSON.stringify(checkpoint));
      return true;
    });
  }

  loadCheckpoint(tenant: string, runId: string, sampleId: string): Promise<Checkpoint | undefined> {
    return readJsonFile<Checkpoint>(this.itemFile(tenant, runId, 'checkpoints', sampleId));
  }

  async putResult(result: ResultRecord): Promise<WriteOnce> {
    const file = this.itemFile(result.tenant, result.runId, 'results', result.sampleId);
    return (await writeFileOnce(file, JSON.stringify(result, null, 2))) ? 'written' : 'exists';
  }

  getResult(tenant: string, runId: string, sampleId: string): Promise<ResultRecord | undefined> {
    return readJsonFile<ResultRecord>(this.itemFile(tenant, runId, 'results', sampleId));
  }

  async listResults(tenant: string, runId: string): Promise<ResultRecord[]> {
    const results = await listJson<ResultRecord>(join(this.runDir(tenant, runId), 'results'));
    return results.sort((a, b) => a.sampleId.localeCompare(b.sampleId));
  }

  private bucketFile(key: string): string {
    return join(this.root, '_buckets', `${keySegment(key)}.json`);
  }

  async takeToken(key: string, limit: RateLimit, nowMs: number): Promise<RateDecision> {
    const file = this.bucketFile(key);
    return withFileLock(file, async () => {
      const { decision, next } = takeFrom(await readJsonFile<BucketState>(file), limit, nowMs);
      await writeFileAtomic(file, JSON.stringify(next));
      return decision;
    });
  }

  async bucketPausedUntil(key: string): Promise<number> {
    return (await readJsonFile<BucketState>(this.bucketFile(key)))?.pausedUntilMs ?? 0;
  }

  async pauseBucket(key: string, untilMs: number): Promise<void> {
    const file = this.bucketFile(key);
    await withFileLock(file, async () => {
      await writeFileAtomic(
        file,
        JSON.stringify(pausedUntil(await readJsonFile<BucketState>(file), untilMs, Date.now())),
      );
    });
  }
}
