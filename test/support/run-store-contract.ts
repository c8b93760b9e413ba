/**
 * One set of cases for every RunStore / EvidenceStore adapter (local files, DynamoDB + S3): the port's
 * promises hold the same way whichever adapter a run is given. Each case uses its own tenant, so one
 * store (and one emulator) serves the whole file.
 */
import { createHash, randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { evidenceKey, runEvidencePrefix, sampleEvidenceKey } from '../../lib/store/keys.ts';
import { parseManifest } from '../../lib/store/manifest.ts';
import { ManifestWriter, manifestKey, sealManifest, verifyRun } from '../../lib/store/manifest-store.ts';
import type {
  EvidenceStore,
  JsonObject,
  ResultRecord,
  RunRecord,
  RunStore,
  SampleRecord,
} from '../../lib/store/ports.ts';
import { waitForToken } from '../../lib/store/rate-gate.ts';

export interface StoresUnderTest {
  runs: RunStore;
  evidence: EvidenceStore;
  /** Called after 150 results of ~8 KB were written to one run: lets an adapter's suite check its pages. */
  checkPagedRun?: (tenant: string, runId: string) => Promise<void>;
}

const now = () => new Date().toISOString();
const tenantName = () => `tenant-${randomUUID().slice(0, 8)}`;
const sha = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');

export const runRecord = (tenant: string, runId: string, createdAt = now()): RunRecord => ({
  tenant,
  runId,
  status: 'queued',
  spec: { goal: 'collect prices', maxSteps: 10 },
  sampleCount: 1,
  createdAt,
  updatedAt: createdAt,
});

export const sampleRecord = (tenant: string, runId: string, sampleId: string): SampleRecord => ({
  tenant,
  runId,
  sampleId,
  url: `http://127.0.0.1/${sampleId}`,
  input: { city: 'Lyon' },
  status: 'pending',
  attempts: 0,
  updatedAt: now(),
});

export const resultRecord = (
  tenant: string,
  runId: string,
  sampleId: string,
  data: JsonObject = {},
): ResultRecord => ({
  tenant,
  runId,
  sampleId,
  status: 'done',
  reason: 'goal reached',
  data,
  usage: { tokens: 12 },
  evidence: [],
  writtenAt: now(),
});

/** A string of `bytes` characters that does not compress to nothing (not that stores compress). */
const filler = (bytes: number, seed: string) =>
  createHash('sha256')
    .update(seed)
    .digest('hex')
    .repeat(Math.ceil(bytes / 64))
    .slice(0, bytes);

export function describeStoreContract(label: string, setup: () => Promise<StoresUnderTest>): void {
  describe(`${label}: RunStore and EvidenceStore contract`, () => {
    let runs: RunStore;
    let evidence: EvidenceStore;
    let checkPagedRun: StoresUnderTest['checkPagedRun'];
    beforeAll(async () => {
      ({ runs, evidence, checkPagedRun } = await setup());
    });

    it('creates a run once, patches it, and lists runs by creation time', async () => {
      const t = tenantName();
      expect(await runs.createRun(runRecord(t, 'r2', '2026-01-02T00:00:00.000Z'))).toBe('written');
      expect(await runs.createRun({ ...runRecord(t, 'r2'), status: 'failed' })).toBe('exists');
      expect(await runs.createRun(runRecord(t, 'r1', '2026-01-03T00:00:00.000Z'))).toBe('written');
      expect((await runs.getRun(t, 'r2'))?.status).toBe('queued');

      await runs.updateRun(t, 'r2', { status: 'failed', reason: 'browser crashed', totals: { done: 1 } });
      await runs.updateRun(t, 'r2', { status: 'running', reason: undefined, manifestHead: 'ab'.repeat(32) });
      const run = await runs.getRun(t, 'r2');
      expect(run).toMatchObject({ status: 'running', totals: { done: 1 }, manifestHead: 'ab'.repeat(32) });
      expect(run?.reason).toBeUndefined();
      expect(run?.spec).toEqual({ goal: 'collect prices', maxSteps: 10 });

      expect((await runs.listRuns(t)).map((r) => r.runId)).toEqual(['r2', 'r1']);
      expect(await runs.getRun(t, 'missing')).toBeUndefined();
      await expect(runs.updateRun(t, 'missing', { status: 'done' })).rejects.toThrow(/not found/);
    });

    it('keeps tenants apart even when their names escape alike', async () => {
      const suffix = randomUUID().slice(0, 6);
      const tenants = [`a/b${suffix}`, `a_b${suffix}`, `a b${suffix}`, `a~2Fb${suffix}`];
      for (const [i, t] of tenants.entries()) {
        expect(await runs.createRun({ ...runRecord(t, 'same'), sampleCount: i })).toBe('written');
        await runs.putSamples([sampleRecord(t, 'same', 's1')]);
        expect(await runs.putResult(resultRecord(t, 'same', 's1', { tenant: t }))).toBe('written');
        await evidence.put(evidenceKey(t, 'same', 'note.txt'), t);
      }
      for (const [i, t] of tenants.entries()) {
        expect((await runs.getRun(t, 'same'))?.sampleCount).toBe(i);
        expect(await runs.listRuns(t)).toHaveLength(1);
        expect((await runs.listResults(t, 'same')).map((r) => r.data)).toEqual([{ tenant: t }]);
        expect(await runs.listSamples(t, 'same')).toHaveLength(1);
        const key = evidenceKey(t, 'same', 'note.txt');
        expect(key.startsWith(runEvidencePrefix(t, 'same'))).toBe(true);
        expect(Buffer.from((await evidence.get(key)) ?? []).toString()).toBe(t);
        expect(await evidence.list(runEvidencePrefix(t, 'same'))).toEqual([key]);
      }
    });

    it('adds samples without overwriting progress, and patches them', async () => {
      const t = tenantName();
      await runs.putSamples([sampleRecord(t, 'r', 's2'), sampleRecord(t, 'r', 's1')]);
      await runs.updateSample(t, 'r', 's1', { status: 'running', attempts: 1 });
      // A resumed run puts the same samples again: s1 keeps its progress, s3 is new.
      await runs.putSamples([sampleRecord(t, 'r', 's1'), sampleRecord(t, 'r', 's3')]);
      const samples = await runs.listSamples(t, 'r');
      expect(samples.map((s) => [s.sampleId, s.status, s.attempts])).toEqual([
        ['s1', 'running', 1],
        ['s2', 'pending', 0],
        ['s3', 'pending', 0],
      ]);
      await runs.updateSample(t, 'r', 's2', { status: 'failed', reason: 'page returned 500' });
      expect(await runs.getSample(t, 'r', 's2')).toMatchObject({
        status: 'failed',
        reason: 'page returned 500',
      });
      expect((await runs.getSample(t, 'r', 's2'))?.input).toEqual({ city: 'Lyon' });
      await expect(runs.updateSample(t, 'r', 'nope', { status: 'done' })).rejects.toThrow(/not found/);
    });

    it('writes a result exactly once under 50 concurrent writers', async () => {
      const t = tenantName();
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          runs.putResult({ ...resultRecord(t, 'r', 's1', { writer: n }), reason: `writer ${n}` }),
        ),
      );
      expect(outcomes.filter((o) => o === 'written')).toHaveLength(1);
      const stored = await runs.listResults(t, 'r');
      expect(stored).toHaveLength(1);
      // The stored result is the one whose write succeeded, whole (not a mix of writers).
      const winner = (stored[0]?.data as { writer: number }).writer;
      expect(stored[0]?.reason).toBe(`writer ${winner}`);
      expect(await runs.getResult(t, 'r', 's1')).toEqual(stored[0]);
    });

    it('moves checkpoints forward only, whatever order saves arrive in', async () => {
      const t = tenantName();
      const cp = (seq: number) => ({ seq, state: { step: seq }, savedAt: now() });
      expect(await runs.saveCheckpoint(t, 'r', 's', cp(2))).toBe(true);
      expect(await runs.saveCheckpoint(t, 'r', 's', cp(1))).toBe(false);
      expect(await runs.saveCheckpoint(t, 'r', 's', cp(2))).toBe(false);
      expect((await runs.loadCheckpoint(t, 'r', 's'))?.state).toEqual({ step: 2 });
      const seqs = [7, 3, 12, 5, 9, 11, 4, 10, 6, 8];
      await Promise.all(seqs.map((seq) => runs.saveCheckpoint(t, 'r', 's', cp(seq))));
      expect(await runs.loadCheckpoint(t, 'r', 's')).toMatchObject({ seq: 12, state: { step: 12 } });
      expect(await runs.loadCheckpoint(t, 'r', 'other')).toBeUndefined();
    });

    it('round-trips a checkpoint and a result larger than a DynamoDB item', async () => {
      const t = tenantName();
      const big = filler(450_000, t);
      expect(await runs.saveCheckpoint(t, 'r', 's', { seq: 1, state: { page: big }, savedAt: now() })).toBe(
        true,
      );
      expect((await runs.loadCheckpoint(t, 'r', 's'))?.state).toEqual({ page: big });
      const bigger = `${big}more`;
      expect(
        await runs.saveCheckpoint(t, 'r', 's', { seq: 2, state: { page: bigger }, savedAt: now() }),
      ).toBe(true);
      expect(await runs.loadCheckpoint(t, 'r', 's')).toMatchObject({ seq: 2, state: { page: bigger } });
      expect(await runs.saveCheckpoint(t, 'r', 's', { seq: 1, state: { page: 'old' }, savedAt: now() })).toBe(
        false,
      );

      expect(await runs.putResult(resultRecord(t, 'r', 's', { html: big }))).toBe('written');
      expect(await runs.putResult(resultRecord(t, 'r', 's', { html: 'second' }))).toBe('exists');
      expect((await runs.getResult(t, 'r', 's'))?.data).toEqual({ html: big });
      expect((await runs.listResults(t, 'r')).map((r) => r.data)).toEqual([{ html: big }]);
    });

    it('lists samples and results past one query page (1 MB, over 100 items)', async () => {
      const t = tenantName();
      const ids = Array.from({ length: 150 }, (_, i) => `s${String(i).padStart(3, '0')}`);
      await runs.putSamples(ids.map((id) => sampleRecord(t, 'r', id)));
      // 150 × 8 KB ≈ 1.2 MB of results: more than one 1 MB page.
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < ids.length) {
            const id = ids[next++] as string;
            await runs.putResult(resultRecord(t, 'r', id, { id, text: filler(8_000, id) }));
          }
        }),
      );
      await checkPagedRun?.(t, 'r');
      expect((await runs.listSamples(t, 'r')).map((s) => s.sampleId)).toEqual(ids);
      const results = await runs.listResults(t, 'r');
      expect(results.map((r) => r.sampleId)).toEqual(ids);
      expect(results.every((r) => (r.data as { text: string }).text === filler(8_000, r.sampleId))).toBe(
        true,
      );
    });

    it('grants one token at a time and honours a pause', async () => {
      const domain = `${randomUUID().slice(0, 8)}.example.test`;
      const at = 50_000;
      const decisions = await Promise.all(
        Array.from({ length: 10 }, () => runs.takeToken(domain, { ratePerSecond: 1 }, at)),
      );
      expect(decisions.filter((d) => d.granted)).toHaveLength(1);
      expect((await runs.takeToken(domain, { ratePerSecond: 1 }, at + 1_000)).granted).toBe(true);

      const paused = `${randomUUID().slice(0, 8)}.example.test`;
      const wall = Date.now();
      await runs.pauseBucket(paused, wall + 60_000);
      const refused = await runs.takeToken(paused, { ratePerSecond: 100 }, wall + 1_000);
      expect(refused.granted).toBe(false);
      expect(refused.waitMs).toBe(59_000);
      expect((await runs.takeToken(paused, { ratePerSecond: 100 }, wall + 60_001)).granted).toBe(true);
    });

    it('never grants above the rate to 4 concurrent takers over 2 seconds', async () => {
      const domain = `${randomUUID().slice(0, 8)}.example.test`;
      const limit = { ratePerSecond: 10 };
      const grants: number[] = [];
      // Record each grant at the bucket time it was granted for (the clock value the taker passed).
      const recording = {
        takeToken: async (key: string, l: typeof limit, nowMs: number) => {
          const decision = await runs.takeToken(key, l, nowMs);
          if (decision.granted) grants.push(nowMs);
          return decision;
        },
        pauseBucket: runs.pauseBucket.bind(runs),
      };
      const end = Date.now() + 2_000;
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (Date.now() < end) await waitForToken(recording, domain, limit);
        }),
      );
      grants.sort((a, b) => a - b);
      let busiest = 0;
      for (let i = 0, j = 0; j < grants.length; j++) {
        while ((grants[j] as number) - (grants[i] as number) >= 1_000) i++;
        busiest = Math.max(busiest, j - i + 1);
      }
      // Burst 1 plus 10 per second: at most 11 grants fall in any one-second window.
      expect(busiest).toBeLessThanOrEqual(Math.floor(limit.ratePerSecond * 1.05) + 1);
      // And the takers were served, not starved: about 10/s over the 2 s.
      expect(grants.length).toBeGreaterThanOrEqual(12);
    });

    it('stores evidence with the SHA-256 of exactly the bytes it returns', async () => {
      const t = tenantName();
      const png = new Uint8Array(Array.from({ length: 4096 }, (_, i) => (i * 31) % 256));
      const key = sampleEvidenceKey(t, 'r', 's1', '01_home.png');
      const written = await evidence.put(key, png, 'image/png');
      expect(written).toEqual({ key, sha256: sha(png), bytes: 4096 });
      const back = await evidence.get(key);
      expect(back && sha(back)).toBe(written.sha256);
      expect(Buffer.from(back ?? []).equals(Buffer.from(png))).toBe(true);

      const text = await evidence.put(evidenceKey(t, 'r', 'result.json'), '{"price":"€12"}');
      expect(text.sha256).toBe(sha(Buffer.from('{"price":"€12"}', 'utf8')));
      expect(text.bytes).toBe(Buffer.byteLength('{"price":"€12"}'));

      expect(await evidence.list(`${runEvidencePrefix(t, 'r')}samples/`)).toEqual([key]);
      expect(await evidence.list(runEvidencePrefix(t, 'r'))).toEqual([
        evidenceKey(t, 'r', 'result.json'),
        key,
      ]);
      expect(await evidence.get(evidenceKey(t, 'r', 'missing.png'))).toBeUndefined();
      await evidence.delete(key);
      expect(await evidence.get(key)).toBeUndefined();
      await expect(evidence.put(`${t}/../x`, 'x')).rejects.toThrow(/evidence key/);
      if (evidence.link) {
        const url = await evidence.link(evidenceKey(t, 'r', 'result.json'), 60);
        expect(url).toBeTypeOf('string');
        const fetched = Buffer.from(await (await fetch(url as string)).arrayBuffer());
        expect(sha(fetched)).toBe(text.sha256);
      }
    });

    it('lists more evidence keys than one S3 page holds (1,000)', async () => {
      const t = tenantName();
      const keys = Array.from({ length: 1_005 }, (_, i) =>
        evidenceKey(t, 'r', `f${String(i).padStart(4, '0')}.txt`),
      );
      let next = 0;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < keys.length) {
            const key = keys[next++] as string;
            await evidence.put(key, key);
          }
        }),
      );
      expect(await evidence.list(runEvidencePrefix(t, 'r'))).toEqual(keys);
    });

    describe('manifest', () => {
      /** A sealed run of three samples writing concurrently, plus the run's own combined.csv. */
      async function sealedRun() {
        const t = tenantName();
        const samples = ['s1', 's2', 's3'];
        await Promise.all(
          samples.map(async (s) => {
            const writer = new ManifestWriter(evidence, t, 'r', s);
            // Two files of one sample written at once: both must reach the sample's part.
            await Promise.all([
              writer.put(sampleEvidenceKey(t, 'r', s, '01_home.png'), `png of ${s}`),
              writer.put(sampleEvidenceKey(t, 'r', s, 'actions.json'), `[{"sample":"${s}"}]`),
            ]);
            await writer.put(sampleEvidenceKey(t, 'r', s, 'result.json'), `{"sample":"${s}"}`);
          }),
        );
        await new ManifestWriter(evidence, t, 'r').put(
          evidenceKey(t, 'r', 'combined.csv'),
          'sample_id\ns1\ns2\ns3\n',
        );
        const sealed = await sealManifest(evidence, t, 'r');
        return { t, head: sealed.head, sealed };
      }

      it('verifies an untouched run and re-seals to the same head', async () => {
        const { t, head, sealed } = await sealedRun();
        expect(sealed.entries).toBe(10);
        const report = await verifyRun(evidence, t, 'r', head);
        expect(report).toMatchObject({ ok: true, entries: 10, files: 10, head });
        expect((await sealManifest(evidence, t, 'r')).head).toBe(head);
        const entries = parseManifest(
          Buffer.from((await evidence.get(manifestKey(t, 'r'))) ?? []).toString(),
        );
        expect(entries.at(-1)?.key).toBe(evidenceKey(t, 'r', 'combined.csv'));
      });

      it('names an edited file', async () => {
        const { t, head } = await sealedRun();
        const key = sampleEvidenceKey(t, 'r', 's2', 'result.json');
        await evidence.put(key, '{"sample":"s2","price":"0.01"}');
        const report = await verifyRun(evidence, t, 'r', head);
        expect(report.ok).toBe(false);
        expect(report.problem).toMatchObject({ kind: 'edited', where: 'file', key });
      });

      it('names a removed file', async () => {
        const { t, head } = await sealedRun();
        const key = sampleEvidenceKey(t, 'r', 's1', '01_home.png');
        await evidence.delete(key);
        expect((await verifyRun(evidence, t, 'r', head)).problem).toMatchObject({ kind: 'removed', key });
      });

      it('names reordered manifest entries', async () => {
        const { t, head } = await sealedRun();
        const lines = Buffer.from((await evidence.get(manifestKey(t, 'r'))) ?? [])
          .toString()
          .trimEnd()
          .split('\n');
        [lines[3], lines[4]] = [lines[4] as string, lines[3] as string];
        await evidence.put(manifestKey(t, 'r'), `${lines.join('\n')}\n`);
        const report = await verifyRun(evidence, t, 'r', head);
        expect(report.problem).toMatchObject({ kind: 'reordered', index: 3 });
      });

      it('names a file added after the run', async () => {
        const { t, head } = await sealedRun();
        const key = sampleEvidenceKey(t, 'r', 's3', '99_planted.png');
        await evidence.put(key, 'planted');
        expect((await verifyRun(evidence, t, 'r', head)).problem).toMatchObject({ kind: 'added', key });
      });
    });
  });
}
