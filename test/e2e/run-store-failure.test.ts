import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerRunRoutes } from '../../lib/api/runs.ts';
import { localRunsApi } from '../../lib/api/runs-local.ts';
import { DEFAULT_POLICY } from '../../lib/browser/guard-policy.ts';
import { manifestedEvidence } from '../../lib/runs/manifested-evidence.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { samplesFromList } from '../../lib/runs/samples.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { RunPatch, RunStore } from '../../lib/store/ports.ts';

/**
 * Issue 21: a run whose store failed must not stay `running` forever. The run store is the real local
 * one behind an adapter that starts refusing every write mid-run (as a full disk does) and recovers
 * only after the run's "failed" mark was refused once: the run ends `failed` with the reason, and what
 * was saved before the failure is all still there.
 */

const TENANT = 't';
const WRITES = ['createRun', 'updateRun', 'putSamples', 'updateSample', 'saveCheckpoint', 'putResult'];
const DISK_FULL = 'ENOSPC: no space left on device, write';

/** A RunStore that refuses writes from the first sample write on, until a refused "failed" mark. */
function failingMidRun(store: RunStore) {
  const state = { failing: false, healed: false, refused: [] as string[] };
  const proxy = new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (!WRITES.includes(String(name))) return value.bind(target);
      return (...args: unknown[]) => {
        // The run reaches its first sample: from here on the disk is full.
        if (!state.healed && (name === 'updateSample' || name === 'putResult')) state.failing = true;
        if (state.failing) {
          state.refused.push(String(name));
          const patch = args[2] as RunPatch | undefined;
          // Space comes back once the runner's attempt to mark the run failed was refused.
          if (name === 'updateRun' && patch?.status === 'failed') {
            state.failing = false;
            state.healed = true;
          }
          return Promise.reject(Object.assign(new Error(DISK_FULL), { code: 'ENOSPC' }));
        }
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy as RunStore, state };
}

let root: string;
let runs: LocalRunStore;
let evidence: LocalEvidenceStore;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bfn-store-failure-'));
  runs = new LocalRunStore(join(root, 'runs'));
  evidence = new LocalEvidenceStore(join(root, 'evidence'));
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function appOn(deps: Parameters<typeof registerRunRoutes>[1]) {
  const app = new Hono<{ Variables: { tenant: string } }>();
  app.use('*', async (c, next) => {
    c.set('tenant', TENANT);
    await next();
  });
  registerRunRoutes(app, deps);
  return app;
}

describe('a run whose store fails mid-run', () => {
  it('ends failed with the reason, and nothing saved before the failure is lost', async () => {
    const { store, state } = failingMidRun(runs);
    const spec = parseTaskSpec({ goal: 'read the heading' });
    const samples = samplesFromList(
      ['s1', 's2', 's3'].map((id) => ({ sample_id: id, url: `http://127.0.0.1:9/${id}` })),
    );
    const input = await createRun(store, evidence, { tenant: TENANT, runId: 'r-disk', spec, samples });
    // s1 and s2 finished in an earlier execution: their results and evidence are saved.
    for (const sampleId of ['s1', 's2']) {
      const file = await manifestedEvidence(evidence, TENANT, 'r-disk', sampleId).put(
        sampleEvidenceKey(TENANT, 'r-disk', sampleId, 'result.json'),
        JSON.stringify({ heading: `Page ${sampleId}` }),
      );
      await runs.putResult({
        tenant: TENANT,
        runId: 'r-disk',
        sampleId,
        status: 'done',
        reason: 'read',
        data: { heading: `Page ${sampleId}` },
        usage: { promptTokens: 10 },
        evidence: [{ key: file.key, sha256: file.sha256 }],
        writtenAt: new Date().toISOString(),
      });
      await runs.updateSample(TENANT, 'r-disk', sampleId, { status: 'done', reason: 'read' });
    }
    const before = await runs.listResults(TENANT, 'r-disk');

    let pagesAsked = 0;
    const api = localRunsApi({
      runStore: store,
      evidence,
      browser: async () => {
        pagesAsked++;
        throw new Error('this run never gets as far as a page');
      },
      policy: DEFAULT_POLICY,
    });
    await api.launch(input);
    const app = appOn(api);
    const status = async () =>
      (await (await app.request('/v1/runs/r-disk')).json()) as {
        status: string;
        reason?: string;
        totals: { counts: Record<string, number> };
      };

    // The execution fails (s3 cannot be written, nor its crash recorded), the first "failed" mark is
    // refused too, and the runner writes it again once the store takes writes.
    await vi.waitFor(async () => expect((await status()).status).toBe('failed'), {
      timeout: 30_000,
      interval: 100,
    });
    const run = await status();
    expect(run.reason).toContain('ENOSPC');
    expect(state.refused).toContain('updateSample');
    expect(state.refused.filter((w) => w === 'updateRun')).toHaveLength(1);
    expect(state.healed).toBe(true);
    expect(pagesAsked).toBe(0);

    // Nothing saved before is lost: both results as they were, their evidence, s3 left to resume.
    expect(await runs.listResults(TENANT, 'r-disk')).toEqual(before);
    const served = (await (await app.request('/v1/runs/r-disk/results')).json()) as {
      results: { sampleId: string; data: unknown }[];
    };
    expect(served.results.map((r) => [r.sampleId, r.data])).toEqual([
      ['s1', { heading: 'Page s1' }],
      ['s2', { heading: 'Page s2' }],
    ]);
    const file = await app.request('/v1/runs/r-disk/evidence/samples/s2/result.json');
    expect(await file.json()).toEqual({ heading: 'Page s2' });
    expect(run.totals.counts).toMatchObject({ done: 2, pending: 1 });
    expect(await runs.getResult(TENANT, 'r-disk', 's3')).toBeUndefined();
  });

  it('a run left running by an execution that is gone reads as failed, with the reason', async () => {
    // The runner could not record the end at all (the store kept failing past its retries, or the
    // server restarted): the next status read settles it once its last write is past the grace.
    const long = new Date(Date.now() - 60_000).toISOString();
    await runs.createRun({
      tenant: TENANT,
      runId: 'r-gone',
      status: 'running',
      spec: { goal: 'read the heading' },
      sampleCount: 0,
      createdAt: long,
      updatedAt: long,
    });
    const app = appOn({
      runStore: runs,
      evidence,
      launch: async () => undefined,
      isActive: async () => false,
    });
    const read = (await (await app.request('/v1/runs/r-gone')).json()) as { status: string; reason: string };
    expect(read.status).toBe('failed');
    expect(read.reason).toMatch(/stopped without recording how it ended.*resume it/);
    expect((await runs.getRun(TENANT, 'r-gone'))?.status).toBe('failed');
    // A run still executing somewhere is left as it is.
    await runs.createRun({
      tenant: TENANT,
      runId: 'r-busy',
      status: 'running',
      spec: { goal: 'read the heading' },
      sampleCount: 0,
      createdAt: long,
      updatedAt: long,
    });
    const busy = appOn({
      runStore: runs,
      evidence,
      launch: async () => undefined,
      isActive: async () => true,
    });
    expect(((await (await busy.request('/v1/runs/r-busy')).json()) as { status: string }).status).toBe(
      'running',
    );
  });
});
