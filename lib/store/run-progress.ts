/**
 * How a run's progress changes as its samples and results are written (pure): the store applies
 * these under a lock, so a status read never has to open every sample and result of the run.
 * The counting rule is the one `totalsOf` uses on the full lists: a sample with a result counts under
 * the result's status, one without counts as running when marked so, else as pending.
 */
import type { Json, ResultRecord, RunProgress, SampleStatus } from './ports.ts';

export function emptyProgress(): RunProgress {
  return {
    samples: 0,
    running: 0,
    results: {},
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    costUsd: 0,
    sampleMs: 0,
  };
}

/** New samples stored (`running` of them already marked running). */
export function withSamples(p: RunProgress, added: number, running = 0): RunProgress {
  return { ...p, samples: p.samples + added, running: p.running + running };
}

/** A sample without a result changed status: only whether it is running matters before its result. */
export function withStatusChange(p: RunProgress, from: SampleStatus, to: SampleStatus): RunProgress {
  const delta = (to === 'running' ? 1 : 0) - (from === 'running' ? 1 : 0);
  return delta === 0 ? p : { ...p, running: Math.max(0, p.running + delta) };
}

const num = (v: Json | undefined) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** A result written (once) for a sample whose status was `sampleStatus` at that moment. */
export function withResult(
  p: RunProgress,
  result: ResultRecord,
  sampleStatus: SampleStatus | undefined,
): RunProgress {
  const last = p.lastResultAt && p.lastResultAt > result.writtenAt ? p.lastResultAt : result.writtenAt;
  return {
    ...p,
    running: sampleStatus === 'running' ? Math.max(0, p.running - 1) : p.running,
    results: { ...p.results, [result.status]: (p.results[result.status] ?? 0) + 1 },
    promptTokens: p.promptTokens + num(result.usage.promptTokens),
    completionTokens: p.completionTokens + num(result.usage.completionTokens),
    cachedTokens: p.cachedTokens + num(result.usage.cachedTokens),
    costUsd: p.costUsd + num(result.usage.costUsd),
    sampleMs: p.sampleMs + num(result.usage.ms),
    lastResultAt: last,
  };
}

/**
 * A change to a run's progress as numbers to add (for stores that add atomically, like DynamoDB's
 * `ADD`): the same counting rule as `withSamples`, `withStatusChange` and `withResult`.
 */
export interface ProgressDelta {
  samples?: number;
  running?: number;
  /** Results written, per status. */
  results?: Partial<Record<SampleStatus, number>>;
  promptTokens?: number;
  completionTokens?: number;
  cachedTokens?: number;
  costUsd?: number;
  sampleMs?: number;
}

export function samplesDelta(added: number, running = 0): ProgressDelta {
  return { samples: added, running };
}

export function statusChangeDelta(from: SampleStatus, to: SampleStatus): ProgressDelta {
  return { running: (to === 'running' ? 1 : 0) - (from === 'running' ? 1 : 0) };
}

export function resultDelta(result: ResultRecord, sampleStatus: SampleStatus | undefined): ProgressDelta {
  return {
    running: sampleStatus === 'running' ? -1 : 0,
    results: { [result.status]: 1 },
    promptTokens: num(result.usage.promptTokens),
    completionTokens: num(result.usage.completionTokens),
    cachedTokens: num(result.usage.cachedTokens),
    costUsd: num(result.usage.costUsd),
    sampleMs: num(result.usage.ms),
  };
}
