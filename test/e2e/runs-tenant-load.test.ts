/**
 * Probe (issue 21, item 1): one tenant cannot take the server down for another. The Node server runs
 * in a child process limited to 256 open files; tenant alpha has a 10,000-sample run (written through
 * the real local store, no page work per sample) and polls it ten at a time, its results too, while
 * tenant beta's status reads and /healthz must all keep answering. Also: the per-run sample cap is a
 * 400 naming the field, and run reads count against the key's share of the server.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { SampleRecord } from '../../lib/store/ports.ts';

const SAMPLES = 10_000;
const WITH_RESULTS = 300;

let root: string;
let child: ChildProcess;
let base: string;

const keys = { alpha: 'key-alpha', beta: 'key-beta' };

/** Writes a finished run straight into the server's run store (what a run leaves behind). */
async function storeRun(
  store: LocalRunStore,
  tenant: string,
  runId: string,
  samples: number,
  results: number,
) {
  const now = new Date().toISOString();
  await store.createRun({
    tenant,
    runId,
    status: 'done',
    spec: { goal: 'read' },
    sampleCount: samples,
    createdAt: now,
    updatedAt: now,
  });
  const list: SampleRecord[] = Array.from({ length: samples }, (_, i) => ({
    tenant,
    runId,
    sampleId: `s${String(i).padStart(5, '0')}`,
    url: `http://127.0.0.1:9/p${i}`,
    input: {},
    status: 'pending',
    attempts: 0,
    updatedAt: now,
  }));
  await store.putSamples(list);
  for (let i = 0; i < results; i++) {
    await store.putResult({
      tenant,
      runId,
      sampleId: list[i]!.sampleId,
      status: i % 10 === 0 ? 'failed' : 'done',
      reason: 'ok',
      data: { n: i },
      usage: { promptTokens: 10, completionTokens: 2, costUsd: 0.001 },
      evidence: [],
      writtenAt: now,
    });
  }
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bfn-load-'));
  const runsDir = join(root, 'runs');
  const store = new LocalRunStore(runsDir);
  await storeRun(store, 'alpha', 'big', SAMPLES, WITH_RESULTS);
  await storeRun(store, 'beta', 'small', 3, 3);
  // The limit applies to the server only; the shell execs node so the pid is the server's.
  child = spawn('sh', ['-c', 'ulimit -n 256 && exec node --import tsx test/support/scripts/serve-once.ts'], {
    env: {
      ...process.env,
      BROWSERFN_API_KEYS: `${keys.alpha}:alpha,${keys.beta}:beta`,
      BROWSERFN_RUNS_DIR: runsDir,
      BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
      BROWSERFN_CACHE_DIR: join(root, 'cache'),
      BROWSERFN_MAX_READS_PER_KEY: '',
      BROWSERFN_RUN_MAX_SAMPLES: '',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const first = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening`)));
  });
  base = (JSON.parse(first) as { url: string }).url;
}, 180_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  if (root) await rm(root, { recursive: true, force: true });
});

const get = (key: string, path: string) =>
  fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });

describe('one tenant cannot take the server down for another', () => {
  it("a 10,000-sample run polled ten at a time under a 256-file limit: the other tenant's calls all answer", async () => {
    // One status read of the big run on its own: the totals, counted without reading 10,000 files.
    const one = await get(keys.alpha, '/v1/runs/big');
    expect(one.status).toBe(200);
    const status = (await one.json()) as {
      totals: { samples: number; counts: Record<string, number>; promptTokens: number };
    };
    expect(status.totals.samples).toBe(SAMPLES);
    expect(status.totals.counts).toMatchObject({
      pending: SAMPLES - WITH_RESULTS,
      done: WITH_RESULTS * 0.9,
      failed: WITH_RESULTS * 0.1,
      running: 0,
    });
    expect(status.totals.promptTokens).toBe(WITH_RESULTS * 10);

    let polling = true;
    const alphaStatuses: number[] = [];
    const poller = async (path: string) => {
      while (polling) {
        const res = await get(keys.alpha, path);
        await res.arrayBuffer();
        alphaStatuses.push(res.status);
      }
    };
    // Ten status polls and a whole-results read of the big run, all the time.
    const load = [
      ...Array.from({ length: 10 }, () => poller('/v1/runs/big')),
      poller('/v1/runs/big/results'),
    ];
    const betaFailures: string[] = [];
    let betaCalls = 0;
    try {
      for (let i = 0; i < 20; i++) {
        const [run, health] = await Promise.all([get(keys.beta, '/v1/runs/small'), fetch(`${base}/healthz`)]);
        betaCalls += 2;
        const body = (await run.json()) as {
          totals?: { samples: number; counts: { done: number; failed: number } };
        };
        const counted = (body.totals?.counts.done ?? 0) + (body.totals?.counts.failed ?? 0);
        if (run.status !== 200 || body.totals?.samples !== 3 || counted !== 3)
          betaFailures.push(`run ${run.status} ${JSON.stringify(body)}`);
        if (health.status !== 200) betaFailures.push(`healthz ${health.status}`);
        await health.arrayBuffer();
      }
    } catch (err) {
      betaFailures.push(String(err));
    } finally {
      polling = false;
      await Promise.allSettled(load);
    }
    expect(betaCalls).toBe(40);
    expect(betaFailures).toEqual([]);
    // The heavy tenant was served or told to wait its turn, never given a server error.
    expect(alphaStatuses.length).toBeGreaterThan(10);
    expect(alphaStatuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(alphaStatuses).toContain(200);
    // Reads past the key's share are told to wait. (The pollers above may or may not overlap past
    // the share, depending on how fast reads answer: a burst of whole-results reads, each taking many
    // turns of the event loop, always does.)
    const burst = await Promise.all(
      Array.from({ length: 24 }, async () => {
        const res = await get(keys.alpha, '/v1/runs/big/results');
        await res.arrayBuffer();
        return res.status;
      }),
    );
    expect(burst.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(burst).toContain(200);
    expect(burst).toContain(429);
    // The whole results of the big run still come back complete.
    const results = (await (await get(keys.alpha, '/v1/runs/big/results')).json()) as { results: unknown[] };
    expect(results.results).toHaveLength(WITH_RESULTS);
  }, 240_000);

  it('a run with more samples than the server allows is a 400 naming the field', async () => {
    const samples = Array.from({ length: 2001 }, (_, i) => ({
      sample_id: `s${i}`,
      url: `http://127.0.0.1:9/p${i}`,
    }));
    const post = (body: unknown) =>
      fetch(`${base}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys.alpha}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const listed = await post({ spec: { goal: 'read the heading' }, samples });
    expect(listed.status).toBe(400);
    const err = (await listed.json()) as { error: { message: string; issues: { path: string }[] } };
    expect(err.error.issues[0]?.path).toBe('samples');
    expect(err.error.message).toMatch(
      /^samples: at most 2000 samples per run .*BROWSERFN_RUN_MAX_SAMPLES.*got 2001/,
    );
    const csv = ['sample_id,url', ...samples.map((s) => `${s.sample_id},${s.url}`)].join('\n');
    const asCsv = await post({ spec: { goal: 'read the heading' }, csv });
    expect(asCsv.status).toBe(400);
    expect(((await asCsv.json()) as { error: { issues: { path: string }[] } }).error.issues[0]?.path).toBe(
      'csv',
    );
  });
});
