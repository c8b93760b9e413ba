/**
 * `RunStore` on local files (the default): `<root>/<tenant>/<run>/run.json`, `samples/`, `checkpoints/`,
 * `results/`, and `<root>/_buckets/` for rate limits. Safe across processes: updates hold a lock file,
 * results are written once by hard link, checkpoints only move forward. `progress.json` keeps the
 * run's counts as samples and results are written, so a status read opens one file, not the run.
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { keySegment } from './keys.ts';
import { readJsonFile, readJsonFiles, withFileLock, writeFileAtomic, writeFileOnce } from './local-files.ts';
import type {
  Checkpoint,
  RateDecision,
  RateLimit,
  ResultRecord,
  RunPatch,
  RunProgress,
  RunRecord,
  RunStore,
  SamplePatch,
  SampleRecord,
  WriteOnce,
} from './ports.ts';
import { emptyProgress, withResult, withSamples, withStatusChange } from './run-progress.ts';
import { type BucketState, pausedUntil, takeFrom } from './token-bucket.ts';

/** Writes one batch keeps in flight: a share of MAX_OPEN_STORE_FILES. */
const PER_LISTING = 8;

async function listJson<T>(dir: string): Promise<T[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  // Read a chunk at a time with turns of the event loop between: a 10,000-file listing never holds
  // more than one descriptor, nor the loop for more than about a millisecond.
  return readJsonFiles<T>(names.filter((n) => n.endsWith('.json')).map((n) => join(dir, n)));
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

  private progressFile(tenant: string, runId: string): string {
    return join(this.runDir(tenant, runId), 'progress.json');
  }

  async createRun(run: RunRecord): Promise<WriteOnce> {
    const ok = await writeFileOnce(this.runFile(run.tenant, run.runId), JSON.stringify(run, null, 2));
    if (ok) await writeFileAtomic(this.progressFile(run.tenant, run.runId), JSON.stringify(emptyProgress()));
    return ok ? 'written' : 'exists';
  }

  runProgress(tenant: string, runId: string): Promise<RunProgress | undefined> {
    return readJsonFile<RunProgress>(this.progressFile(tenant, runId));
  }

  /**
   * Applies a change to the kept progress. A run stored before progress was kept has none: it stays
   * without (readers count from the lists), rather than starting from a wrong zero.
   */
  private async moveProgress(
    tenant: string,
    runId: string,
    change: (p: RunProgress) => RunProgress,
  ): Promise<void> {
    const file = this.progressFile(tenant, runId);
    await withFileLock(file, async () => {
      const progress = await readJsonFile<RunProgress>(file);
      if (progress) await writeFileAtomic(file, JSON.stringify(change(progress)));
    });
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
    const runs = await readJsonFiles<RunRecord>(names.map((n) => join(dir, n, 'run.json')));
    return runs.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async putSamples(samples: SampleRecord[]): Promise<void> {
    const added = new Map<string, { tenant: string; runId: string; count: number; running: number }>();
    const mine = pLimit(PER_LISTING);
    const written = await Promise.all(
      samples.map((sample) =>
        mine(() =>
          writeFileOnce(
            this.itemFile(sample.tenant, sample.runId, 'samples', sample.sampleId),
            JSON.stringify(sample, null, 2),
          ),
        ),
      ),
    );
    for (const [i, sample] of samples.entries()) {
      if (!written[i]) continue;
      const key = `${sample.tenant}\n${sample.runId}`;
      const entry = added.get(key) ?? { tenant: sample.tenant, runId: sample.runId, count: 0, running: 0 };
      entry.count++;
      if (sample.status === 'running') entry.running++;
      added.set(key, entry);
    }
    for (const a of added.values())
      await this.moveProgress(a.tenant, a.runId, (p) => withSamples(p, a.count, a.running));
  }

  getSample(tenant: string, runId: string, sampleId: string): Promise<SampleRecord | undefined> {
    return readJsonFile<SampleRecord>(this.itemFile(tenant, runId, 'samples', sampleId));
  }

  async updateSample(tenant: string, runId: string, sampleId: string, patch: SamplePatch): Promise<void> {
    const file = this.itemFile(tenant, runId, 'samples', sampleId);
    // putResult takes the same lock: a status change and the sample's result never interleave.
    await withFileLock(file, async () => {
      const sample = await readJsonFile<SampleRecord>(file);
      if (!sample) throw new Error(`sample ${sampleId} of run ${runId} not found`);
      await writeFileAtomic(
        file,
        JSON.stringify({ ...sample, ...patch, updatedAt: new Date().toISOString() }, null, 2),
      );
      const to = patch.status;
      if (to && to !== sample.status && !(await this.hasResult(tenant, runId, sampleId)))
        await this.moveProgress(tenant, runId, (p) => withStatusChange(p, sample.status, to));
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

  private async hasResult(tenant: string, runId: string, sampleId: string): Promise<boolean> {
    return stat(this.itemFile(tenant, runId, 'results', sampleId)).then(
      () => true,
      () => false,
    );
  }

  async putResult(result: ResultRecord): Promise<WriteOnce> {
    const { tenant, runId, sampleId } = result;
    const file = this.itemFile(tenant, runId, 'results', sampleId);
    return withFileLock(this.itemFile(tenant, runId, 'samples', sampleId), async () => {
      if (!(await writeFileOnce(file, JSON.stringify(result, null, 2)))) return 'exists';
      const sample = await readJsonFile<SampleRecord>(this.itemFile(tenant, runId, 'samples', sampleId));
      await this.moveProgress(tenant, runId, (p) => withResult(p, result, sample?.status));
      return 'written';
    });
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
