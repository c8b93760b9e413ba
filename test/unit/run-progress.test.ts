/**
 * The kept progress of a run gives the same totals as counting the full sample and result lists
 * (`totalsOf`), whatever order samples start, change status and get their results in.
 */
import { describe, expect, it } from 'vitest';
import { totalsOf } from '../../lib/runs/merge.ts';
import { totalsFromProgress } from '../../lib/runs/progress-totals.ts';
import type { ResultRecord, RunRecord, SampleRecord, SampleStatus } from '../../lib/store/ports.ts';
import { emptyProgress, withResult, withSamples, withStatusChange } from '../../lib/store/run-progress.ts';

const run: RunRecord = {
  tenant: 't',
  runId: 'r',
  status: 'running',
  spec: {},
  sampleCount: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

/** A small deterministic pseudo-random sequence (no flakiness, many orders covered). */
function rng(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % n;
  };
}

const FINAL: SampleStatus[] = ['done', 'partial_success', 'failed', 'needs_review'];

describe('run progress', () => {
  it('matches totalsOf over the full lists after any sequence of writes', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const next = rng(seed);
      const samples = new Map<string, SampleRecord>();
      const results = new Map<string, ResultRecord>();
      let progress = emptyProgress();
      for (let step = 0; step < 200; step++) {
        const id = `s${next(30)}`;
        const op = next(3);
        const sample = samples.get(id);
        if (!sample) {
          const status: SampleStatus = next(4) === 0 ? 'running' : 'pending';
          samples.set(id, {
            tenant: 't',
            runId: 'r',
            sampleId: id,
            url: 'u',
            input: {},
            status,
            attempts: 0,
            updatedAt: '',
          });
          progress = withSamples(progress, 1, status === 'running' ? 1 : 0);
        } else if (op === 0) {
          const to: SampleStatus = (['pending', 'running', ...FINAL] as SampleStatus[])[next(6)]!;
          if (to !== sample.status && !results.has(id))
            progress = withStatusChange(progress, sample.status, to);
          sample.status = to;
        } else if (!results.has(id)) {
          const result: ResultRecord = {
            tenant: 't',
            runId: 'r',
            sampleId: id,
            status: FINAL[next(4)]!,
            reason: '',
            data: null,
            usage: {
              promptTokens: next(100),
              completionTokens: next(10),
              costUsd: next(5) / 1000,
              ms: next(900),
            },
            evidence: [],
            writtenAt: new Date(Date.parse(run.createdAt) + next(100_000)).toISOString(),
          };
          results.set(id, result);
          progress = withResult(progress, result, sample.status);
        }
      }
      // Every kept figure matches; the split of tokens by mode is the merge's alone (it reads each
      // result's usage), so a status read from progress leaves it out.
      const { tokensByMode, ...merged } = totalsOf(run, [...samples.values()], [...results.values()]);
      expect(totalsFromProgress(run, progress)).toEqual(merged);
      expect(totalsFromProgress(run, progress).tokensByMode).toBeUndefined();
      expect(Object.keys(tokensByMode ?? {}).length).toBeGreaterThan(0);
    }
  });

  it('counts a sample running only until its result is written', () => {
    let p = withSamples(emptyProgress(), 2);
    p = withStatusChange(p, 'pending', 'running');
    expect(totalsFromProgress(run, p).counts).toMatchObject({ pending: 1, running: 1 });
    p = withResult(
      p,
      {
        tenant: 't',
        runId: 'r',
        sampleId: 'a',
        status: 'failed',
        reason: '',
        data: null,
        usage: {},
        evidence: [],
        writtenAt: run.createdAt,
      },
      'running',
    );
    expect(totalsFromProgress(run, p).counts).toMatchObject({ pending: 1, running: 0, failed: 1 });
  });
});
