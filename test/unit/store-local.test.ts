import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  evidenceKey,
  fromKeySegment,
  keySegment,
  safeFileName,
  sampleEvidenceKey,
} from '../../lib/store/keys.ts';
import { LocalEvidenceStore, sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { ResultRecord, RunRecord } from '../../lib/store/ports.ts';
import { takeFrom } from '../../lib/store/token-bucket.ts';
import { describeStoreContract } from '../support/run-store-contract.ts';

describe('storage keys', () => {
  it('escape tenants and ids injectively and never climb', () => {
    const names = ['a/b', 'a_b', 'a b', '..', '.', 'a~2Fb', 'é', 'A'];
    const keys = names.map(keySegment);
    expect(new Set(keys).size).toBe(names.length);
    for (const k of keys) expect(k).toMatch(/^[A-Za-z0-9_~-]+$/);
    for (const n of names) expect(fromKeySegment(keySegment(n))).toBe(n);
    expect(() => keySegment('')).toThrow(/empty/);
  });

  it('make file names single safe components', () => {
    expect(safeFileName('../../etc/passwd')).toBe('passwd');
    expect(safeFileName('..')).toBe('file');
    expect(safeFileName('.hidden')).toBe('hidden');
    expect(safeFileName('report (1).pdf')).toBe('report_1_.pdf');
    expect(evidenceKey('t/1', 'r', 'manifest.json')).toBe('t~2F1/run_r/manifest.json');
    expect(sampleEvidenceKey('t', 'r', 's.1', '01_home.png')).toBe('t/run_r/samples/s~2E1/01_home.png');
  });
});

describe('token bucket', () => {
  it('paces requests at the configured rate and honours pauses', () => {
    const limit = { ratePerSecond: 2 };
    const first = takeFrom(undefined, limit, 1000);
    expect(first.decision.granted).toBe(true);
    const second = takeFrom(first.next, limit, 1100);
    expect(second.decision).toEqual({ granted: false, waitMs: 400 });
    const third = takeFrom(second.next, limit, 1500);
    expect(third.decision.granted).toBe(true);
    const paused = takeFrom({ ...third.next, pausedUntilMs: 5000 }, limit, 4000);
    expect(paused.decision).toEqual({ granted: false, waitMs: 1000 });
  });

  it('never moves its clock back for a caller with an earlier clock', () => {
    const limit = { ratePerSecond: 10 };
    const granted = takeFrom(undefined, limit, 2000);
    // A worker whose clock lags 100 ms: without the guard the next caller would be refilled twice.
    const late = takeFrom(granted.next, limit, 1900);
    expect(late.decision).toEqual({ granted: false, waitMs: 200 });
    expect(late.next.updatedMs).toBe(2000);
    expect(takeFrom(late.next, limit, 2050).decision.granted).toBe(false);
    expect(takeFrom(late.next, limit, 2100).decision.granted).toBe(true);
  });
});

describeStoreContract('local files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bfn-contract-'));
  return {
    runs: new LocalRunStore(join(dir, 'runs')),
    evidence: new LocalEvidenceStore(join(dir, 'evidence')),
  };
});

describe('local stores', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'bfn-store-'));
  });

  const run = (tenant: string, runId: string): RunRecord => ({
    tenant,
    runId,
    status: 'queued',
    spec: { goal: 'g' },
    sampleCount: 1,
    createdAt: new Date().toISOString(),
    updatedAt: new Date().toISOString(),
  });

  it('create a run once and keep tenants apart', async () => {
    const store = new LocalRunStore(root);
    expect(await store.createRun(run('a/b', 'r1'))).toBe('written');
    expect(await store.createRun(run('a/b', 'r1'))).toBe('exists');
    expect(await store.getRun('a_b', 'r1')).toBeUndefined();
    await store.updateRun('a/b', 'r1', { status: 'running' });
    expect((await store.getRun('a/b', 'r1'))?.status).toBe('running');
    expect((await store.listRuns('a/b')).map((r) => r.runId)).toEqual(['r1']);
  });

  it('write a result exactly once under 50 concurrent writers', async () => {
    const store = new LocalRunStore(root);
    const result = (n: number): ResultRecord => ({
      tenant: 't',
      runId: 'r',
      sampleId: 's1',
      status: 'done',
      reason: `writer ${n}`,
      data: { n },
      usage: {},
      evidence: [],
      writtenAt: new Date().toISOString(),
    });
    const outcomes = await Promise.all(Array.from({ length: 50 }, (_, n) => store.putResult(result(n))));
    expect(outcomes.filter((o) => o === 'written')).toHaveLength(1);
    expect(await store.listResults('t', 'r')).toHaveLength(1);
  });

  it('only move checkpoints forward', async () => {
    const store = new LocalRunStore(root);
    const cp = (seq: number) => ({ seq, state: { step: seq }, savedAt: new Date().toISOString() });
    expect(await store.saveCheckpoint('t', 'r', 's', cp(2))).toBe(true);
    expect(await store.saveCheckpoint('t', 'r', 's', cp(1))).toBe(false);
    expect(await store.saveCheckpoint('t', 'r', 's', cp(2))).toBe(false);
    expect((await store.loadCheckpoint('t', 'r', 's'))?.state).toEqual({ step: 2 });
  });

  it('grant one token at a time across concurrent takers', async () => {
    const store = new LocalRunStore(root);
    const now = 10_000;
    const decisions = await Promise.all(
      Array.from({ length: 10 }, () => store.takeToken('example.test', { ratePerSecond: 1 }, now)),
    );
    expect(decisions.filter((d) => d.granted)).toHaveLength(1);
  });

  it('store evidence with its hash and list it by prefix', async () => {
    const store = new LocalEvidenceStore(root);
    const key = sampleEvidenceKey('t', 'r', 's1', '01_home.png');
    const written = await store.put(key, 'png bytes');
    expect(written.sha256).toBe(sha256Hex('png bytes'));
    expect(await readFile(store.pathOf(key), 'utf8')).toBe('png bytes');
    await store.put(evidenceKey('t', 'r', 'manifest.json'), '{}');
    expect(await store.list('t/run_r/samples/')).toEqual([key]);
    expect(await store.list('t/run_r/')).toHaveLength(2);
    expect(() => store.pathOf('t/../x')).toThrow(/evidence key/);
  });
});
