/**
 * A run's totals from its kept progress (pure): the same figures `totalsOf` gives from the full
 * sample and result lists, for status reads that must not load a whole run — all but the split of
 * tokens by mode, which the merge computes from each result's usage.
 */
import type { RunProgress, RunRecord, SampleStatus } from '../store/ports.ts';
import type { RunTotals } from './merge.ts';

export function totalsFromProgress(run: RunRecord, p: RunProgress): RunTotals {
  const counts: Record<SampleStatus, number> = {
    pending: 0,
    running: 0,
    done: 0,
    partial_success: 0,
    failed: 0,
    needs_review: 0,
  };
  let withResult = 0;
  for (const [status, n] of Object.entries(p.results) as [SampleStatus, number][]) {
    counts[status] += n;
    withResult += n;
  }
  counts.running += p.running;
  counts.pending += Math.max(0, p.samples - p.running - withResult);
  const created = Date.parse(run.createdAt);
  const last = p.lastResultAt ? Math.max(created, Date.parse(p.lastResultAt)) : created;
  return {
    samples: p.samples,
    counts,
    promptTokens: p.promptTokens,
    completionTokens: p.completionTokens,
    cachedTokens: p.cachedTokens,
    costUsd: Math.round(p.costUsd * 1e6) / 1e6,
    durationMs: Math.max(0, last - created),
    sampleMs: p.sampleMs,
  };
}
