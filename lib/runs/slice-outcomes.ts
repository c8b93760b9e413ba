/**
 * The ends of a sample that are not its own slice's work: the Record crash state (the sample fails with
 * the crash's cause, keeping what its last checkpoint gathered), a result write lost between the final
 * checkpoint and the result, and the Judge state (a verdict on the finished sample; a workflow sample
 * it passes has its heals written back then).
 */
import { judgeStoredSample, judgeTaskFromSpec } from '../judge/index.ts';
import type { Json, JsonObject, SampleStatus } from '../store/ports.ts';
import { manifestedEvidence } from './manifested-evidence.ts';
import type { RunDeps } from './run-deps.ts';
import { loadSpec } from './run-records.ts';
import type { SliceState } from './slice-runner.ts';
import { writeBackHeals } from './workflow-versions.ts';

export interface SliceOutput {
  final: boolean;
  status: SampleStatus | 'cancelled';
  /** The sample ended and its spec asks for the judge (the state machine's Judge state follows). */
  judge?: boolean;
}

export interface SampleRef {
  tenant: string;
  runId: string;
  sampleId: string;
}

export interface CrashEvent extends SampleRef {
  crash?: { Error?: string; Cause?: string };
}

/**
 * A result's usage from a sample's last state (a crash record, a lost result write): its totals,
 * steps, and the mode its task ran in, so the run's tokens by mode count it where it was spent.
 */
function usageFromState(s: SliceState): JsonObject {
  const mode = s.task?.mode;
  return { ...s.usage, steps: s.step, ...(mode ? { mode } : {}) } as unknown as JsonObject;
}

/** The result of a state that ended but whose result write was lost (a kill between the two). */
export async function writeResultFromState(deps: RunDeps, s: SliceState): Promise<void> {
  await deps.runStore.putResult({
    tenant: s.tenant,
    runId: s.runId,
    sampleId: s.sampleId,
    status: s.status as SampleStatus,
    reason: s.reason ?? '',
    data: s.data,
    usage: usageFromState(s),
    evidence: s.evidence,
    writtenAt: new Date().toISOString(),
  });
}

/** A caught error's Cause: Lambda sends `{"errorMessage": …}` as JSON text, the local runner plain text. */
export function crashMessage(cause: string): string {
  let text = cause;
  try {
    const parsed = JSON.parse(cause) as { errorMessage?: unknown };
    if (typeof parsed?.errorMessage === 'string') text = parsed.errorMessage;
  } catch {
    // Plain text.
  }
  return (text.split('\n')[0] ?? '').slice(0, 500);
}

/** The Record crash state: the sample fails with the crash's cause, keeping what it had gathered. */
export async function recordCrash(deps: RunDeps, e: CrashEvent): Promise<SliceOutput> {
  const cause = crashMessage(e.crash?.Cause ?? '');
  const reason = `crashed: ${e.crash?.Error ?? 'Error'}${cause ? `: ${cause}` : ''}`;
  const checkpoint = await deps.runStore.loadCheckpoint(e.tenant, e.runId, e.sampleId);
  const s = checkpoint?.state as unknown as SliceState | undefined;
  await deps.runStore.putResult({
    tenant: e.tenant,
    runId: e.runId,
    sampleId: e.sampleId,
    status: 'failed',
    reason,
    // What the agent had gathered before the crash is kept.
    data: s?.data ?? null,
    usage: s ? usageFromState(s) : {},
    evidence: s?.evidence ?? [],
    writtenAt: new Date().toISOString(),
  });
  const stored = await deps.runStore.getResult(e.tenant, e.runId, e.sampleId);
  await deps.runStore.updateSample(e.tenant, e.runId, e.sampleId, {
    status: stored?.status ?? 'failed',
    reason: stored?.reason ?? reason,
  });
  deps.onSlice?.({ sampleId: e.sampleId, status: stored?.status ?? 'failed', final: true });
  return { final: true, status: stored?.status ?? 'failed' };
}

/** The Judge state: the verdict on a finished sample, chained into its evidence. */
export async function judgeSample(deps: RunDeps, e: SampleRef): Promise<SliceOutput> {
  const run = await deps.runStore.getRun(e.tenant, e.runId);
  if (!run) throw new Error(`run ${e.runId} not found`);
  const spec = await loadSpec(deps.evidence, run);
  const judgeModel = typeof spec.judge === 'object' ? spec.judge.model : undefined;
  const llm = await deps.llmFor(judgeModel ?? spec.model);
  const verdict = await judgeStoredSample(
    { runStore: deps.runStore, evidence: manifestedEvidence(deps.evidence, e.tenant, e.runId, e.sampleId) },
    e.tenant,
    e.runId,
    e.sampleId,
    judgeTaskFromSpec(spec as unknown as { [k: string]: Json }),
    llm,
  );
  if (verdict.verdict === 'pass') await healsAfterPass(deps, e);
  deps.log?.({
    level: 'info',
    msg: 'judged',
    tenant: e.tenant,
    runId: e.runId,
    sampleId: e.sampleId,
    verdict: verdict.verdict,
  });
  const stored = await deps.runStore.getResult(e.tenant, e.runId, e.sampleId);
  return { final: true, status: (stored?.status ?? 'failed') as SampleStatus };
}

/**
 * A workflow sample the judge passed: its confirmed heals become the next version now (a failed or
 * uncertain verdict writes nothing). A Judge state retried after this wrote finds them merged.
 */
async function healsAfterPass(deps: RunDeps, e: SampleRef): Promise<void> {
  const result = await deps.runStore.getResult(e.tenant, e.runId, e.sampleId);
  const usage = result?.usage as { mode?: string; workflow?: { id?: string }; heals?: unknown } | undefined;
  if (!deps.workflows || usage?.mode !== 'workflow' || !usage.workflow?.id || !Array.isArray(usage.heals))
    return;
  if (result?.status !== 'done') return;
  const version = await writeBackHeals(deps.workflows, e.tenant, usage.workflow.id, usage.heals, e);
  if (version) deps.log?.({ level: 'info', msg: 'healed workflow written after the judge passed', version });
}
