/**
 * The task handlers of the run state machine: Plan, Discover, Slice (and Record crash), Merge. The local runner
 * binds them by state name; functions/agent-slice.ts, functions/merge.ts and functions/plan.ts call
 * the same functions on Lambda. Inputs are validated: they arrive from a state machine.
 */

import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { z } from 'zod';
import type { StorageState } from '../browser/context.ts';
import { assertNavigable } from '../browser/guard.ts';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { openSession } from '../browser/session.ts';
import { judgeStoredSample, judgeTaskFromSpec } from '../judge/index.ts';
import type { LlmClient } from '../llm/types.ts';
import { evidenceKey, keySegment } from '../store/keys.ts';
import type { EvidenceStore, Json, JsonObject, RunStore, SampleStatus } from '../store/ports.ts';
import { reportThrottle } from '../store/rate-gate.ts';
import type { RunMemoryStore } from '../store/run-memory-ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { discoverHandler } from './discover/handler.ts';
import { logFor } from './json-log.ts';
import { storedVerdict } from './judge-run.ts';
import { manifestedEvidence } from './manifested-evidence.ts';
import { mergeRun } from './merge.ts';
import { planRun } from './planner.ts';
import {
  type ExecutionInput,
  executionInput,
  GENERATED_SPEC,
  type ItemsLocation,
  loadSpec,
  sampleRecords,
} from './run-records.ts';
import { scenarioSliceRunner } from './scenario-slice-binding.ts';
import { isFinal, type SliceDeps, type SliceRunner, type SliceState, taskFromSpec } from './slice-runner.ts';
import { rateBucketKey, rateLimitFor, type TaskSpec } from './task-spec.ts';
import { workflowSliceRunner } from './workflow-slice-binding.ts';
import { runWorkflowRef, writeBackHeals } from './workflow-versions.ts';

export interface RunDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** Memory across the samples of a run (hints per site); absent → samples learn nothing from each other. */
  runMemory?: RunMemoryStore;
  slices: SliceRunner;
  /** Mode "workflow" samples (default: lib/runs/workflow-slice-binding.ts). */
  workflowSlices?: SliceRunner;
  /** The tenant's workflows, for mode "workflow" (absent: such samples fail saying so). */
  workflows?: WorkflowStore;
  browser: () => Promise<Browser>;
  /** Which URLs sample pages may load. */
  policy: GuardPolicy;
  /** The model for a run (its spec's `model`, else the configured default); undefined when none. */
  llmFor: (model: string | undefined) => Promise<LlmClient | undefined>;
  /** AWS: where the Distributed Map reads sample ids. Locally absent. */
  items?: ItemsLocation;
  /** Working time a slice gets before it checkpoints and hands over (default 540 s). */
  sliceBudgetMs?: number;
  /** Storage-state files on this machine may be read (the CLI); API callers name store keys only. */
  allowAuthFiles?: boolean;
  log?: SliceDeps['log'];
  /** Progress: called when a slice starts working on a sample. */
  onSliceStart?: (sampleId: string) => void;
  /** Progress: called when a slice ends. */
  onSlice?: (event: { sampleId: string; status: SampleStatus; final: boolean }) => void;
}

const Ids = z.object({ tenant: z.string().min(1), runId: z.string().min(1) });
const SliceEvent = Ids.extend({
  sampleId: z.string().min(1),
  /** Less working time than the configured budget, for a caller with less time left (the queue). */
  budgetMs: z.number().int().positive().optional(),
  crash: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).optional(),
  /** The Judge state: rule on the finished sample instead of working on it. */
  judge: z.literal(true).optional(),
});
const PlanEvent = Ids.extend({ prompt: z.string().min(1), concurrency: z.number().int().min(1).optional() });

function parseEvent<T>(schema: z.ZodType<T>, event: unknown, what: string): T {
  const r = schema.safeParse(event);
  if (!r.success) {
    const i = r.error.issues[0];
    throw new Error(`${what} event ${i?.path.join('.') || '(root)'}: ${i?.message}`);
  }
  return r.data;
}

export interface SliceOutput {
  final: boolean;
  status: SampleStatus | 'cancelled';
  /** The sample ended and its spec asks for the judge (the state machine's Judge state follows). */
  judge?: boolean;
}

async function authState(deps: RunDeps, tenant: string, spec: TaskSpec): Promise<StorageState | undefined> {
  const profile = spec.authProfile;
  if (!profile) return undefined;
  if (profile.file) {
    if (!deps.allowAuthFiles)
      throw new Error('authProfile.file is not allowed here: store the profile and name its key');
    return JSON.parse(await readFile(profile.file, 'utf8')) as StorageState;
  }
  const key = `${keySegment(tenant)}/${profile.key}`;
  if (profile.key!.split('/').some((p) => p === '..' || p === '.' || p === ''))
    throw new Error(`authProfile.key "${profile.key}" is not a plain key`);
  const raw = await deps.evidence.get(key);
  if (!raw) throw new Error(`authProfile.key "${profile.key}" not found in the evidence store`);
  return JSON.parse(Buffer.from(raw).toString('utf8')) as StorageState;
}

/**
 * A sample's site said "too many requests": its host's bucket closes for this tenant's workers
 * until Retry-After (default 5 s, at most 10 min), and this worker waits that out if the slice has
 * the time; false (the sample then fails, saying so) when it has not.
 */
async function throttled(
  deps: RunDeps,
  tenant: string,
  url: string,
  retryAfter: string | undefined,
  deadline: number,
): Promise<boolean> {
  const host = new URL(url).host.toLowerCase();
  const reopens = await reportThrottle(deps.runStore, rateBucketKey(tenant, host), retryAfter);
  deps.log?.({
    level: 'info',
    msg: 'site throttled us; host paused',
    tenant,
    host,
    ms: reopens - Date.now(),
  });
  // Enough left after the wait to load and read the page again.
  if (reopens + 10_000 > deadline) return false;
  await new Promise((r) => setTimeout(r, Math.max(0, reopens - Date.now())));
  return true;
}

/** `throttled`, then a token of the host's bucket (if the spec limits it) before asking again. */
async function throttledThenPaced(
  deps: RunDeps,
  tenant: string,
  spec: TaskSpec,
  url: string,
  retryAfter: string | undefined,
  deadline: number,
): Promise<boolean> {
  if (!(await throttled(deps, tenant, url, retryAfter, deadline))) return false;
  await pace(deps, tenant, spec, url, deadline);
  return true;
}

/** Waits for the per-host token bucket shared by every worker (no limit configured: no wait). */
async function pace(
  deps: RunDeps,
  tenant: string,
  spec: TaskSpec,
  url: string,
  deadline: number,
): Promise<void> {
  const limit = rateLimitFor(spec, url);
  if (!limit) {
    // No pace of its own, but a host that answered "too many requests" is paused for every sample
    // of the tenant: a read, so runs with no limit do not contend on the bucket.
    const host = new URL(url).host.toLowerCase();
    const until = await deps.runStore.bucketPausedUntil(rateBucketKey(tenant, host));
    const waitMs = until - Date.now();
    // A pause longer than the slice is not waited for here: the sample goes ahead, and meets the
    // site's own answer (and its Retry-After) if the host still turns it away.
    if (waitMs > 0 && Date.now() + waitMs < deadline) await new Promise((r) => setTimeout(r, waitMs));
    return;
  }
  for (;;) {
    const d = await deps.runStore.takeToken(rateBucketKey(tenant, limit.host), limit, Date.now());
    if (d.granted) return;
    if (Date.now() + d.waitMs > deadline)
      throw new Error(`rate limit for ${limit.host} left no time in this slice`);
    await new Promise((r) => setTimeout(r, d.waitMs));
  }
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
async function writeResultFromState(deps: RunDeps, s: SliceState): Promise<void> {
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

/** A slice's working time when the deployment does not say (BROWSERFN_SLICE_MS). */
export const DEFAULT_SLICE_BUDGET_MS = 540_000;

export function runHandlers(deps: RunDeps) {
  const budget = deps.sliceBudgetMs ?? DEFAULT_SLICE_BUDGET_MS;

  async function recordCrash(e: z.infer<typeof SliceEvent>): Promise<SliceOutput> {
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
  async function judgeSample(e: z.infer<typeof SliceEvent>): Promise<SliceOutput> {
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
    if (verdict.verdict === 'pass') await healsAfterPass(e);
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
  async function healsAfterPass(e: z.infer<typeof SliceEvent>): Promise<void> {
    const result = await deps.runStore.getResult(e.tenant, e.runId, e.sampleId);
    const usage = result?.usage as { mode?: string; workflow?: { id?: string }; heals?: unknown } | undefined;
    if (!deps.workflows || usage?.mode !== 'workflow' || !usage.workflow?.id || !Array.isArray(usage.heals))
      return;
    if (result?.status !== 'done') return;
    const version = await writeBackHeals(deps.workflows, e.tenant, usage.workflow.id, usage.heals, e);
    if (version)
      deps.log?.({ level: 'info', msg: 'healed workflow written after the judge passed', version });
  }

  async function slice(event: unknown): Promise<SliceOutput> {
    const e = parseEvent(SliceEvent, event, 'slice');
    if (e.crash) return recordCrash(e);
    if (e.judge) return judgeSample(e);
    const { tenant, runId, sampleId } = e;
    const done = await deps.runStore.getResult(tenant, runId, sampleId);
    if (done) {
      // A slice retried after the result was written: the judge still follows if it has not ruled.
      const ran = await deps.runStore.getRun(tenant, runId);
      const asked = ran ? (await loadSpec(deps.evidence, ran)).judge : undefined;
      const ruled = asked ? await storedVerdict(deps.evidence, tenant, runId, sampleId) : undefined;
      return { final: true, status: done.status, ...(asked && !ruled ? { judge: true } : {}) };
    }
    const run = await deps.runStore.getRun(tenant, runId);
    if (!run) throw new Error(`run ${runId} not found`);
    // A cancelled run leaves unfinished samples as they are: a resume picks them up.
    if (run.status === 'cancelled') return { final: true, status: 'cancelled' };
    const sample = await deps.runStore.getSample(tenant, runId, sampleId);
    if (!sample) throw new Error(`sample ${sampleId} of run ${runId} not found`);
    const spec = await loadSpec(deps.evidence, run);
    const checkpoint = await deps.runStore.loadCheckpoint(tenant, runId, sampleId);
    const workflowMode = spec.mode === 'workflow';
    const runner = workflowMode
      ? (deps.workflowSlices ?? workflowSliceRunner)
      : spec.mode === 'scenario'
        ? scenarioSliceRunner
        : deps.slices;
    let state = checkpoint?.state as unknown as SliceState | undefined;
    if (!state) {
      const task = taskFromSpec(spec);
      // The workflow a sample starts from: a stored id, or the spec's own document stored for the run.
      if (workflowMode && deps.workflows)
        task.workflow = await runWorkflowRef(deps.workflows, tenant, runId, spec);
      state = runner.newState({ tenant, runId, sampleId, task, url: sample.url, input: sample.input });
    }
    deps.log?.({ level: 'info', msg: 'slice start', tenant, runId, sampleId, step: state.step });
    if (isFinal(state.status)) {
      // Killed after the final checkpoint but before the result: finish the write, nothing else.
      await writeResultFromState(deps, state);
    } else {
      const attempts = sample.attempts + 1;
      await deps.runStore.updateSample(tenant, runId, sampleId, { status: 'running', attempts });
      if (attempts > spec.maxSlices) throw new Error(`sample did not end within ${spec.maxSlices} slices`);
      const deadline = Date.now() + Math.min(budget, e.budgetMs ?? budget);
      deps.onSliceStart?.(sampleId);
      await pace(deps, tenant, spec, state.url, deadline);
      const storageState = await authState(deps, tenant, spec);
      // A computer-use sample talks to its computer-use model only (its name may be no chat model's).
      const llm = spec.computerUse ? undefined : await deps.llmFor(spec.model);
      const summaryLlm = spec.summaryModel ? await deps.llmFor(spec.summaryModel) : undefined;
      state = await runner.runSlice(
        state,
        {
          runStore: deps.runStore,
          // Whatever the slice stores is chained into this sample's manifest part.
          evidence: manifestedEvidence(deps.evidence, tenant, runId, sampleId),
          ...(deps.runMemory ? { runMemory: deps.runMemory } : {}),
          ...(llm ? { llm } : {}),
          ...(summaryLlm ? { summaryLlm } : {}),
          ...(deps.workflows ? { workflows: deps.workflows } : {}),
          newPage: async () => {
            const session = await openSession({
              browser: await deps.browser(),
              policy: deps.policy,
              ...(storageState ? { storageState } : {}),
            });
            return { page: session.page, close: () => session.close() };
          },
          checkNavigation: (url) => assertNavigable(url, deps.policy),
          // Every line the sample's code logs names its run and sample.
          onThrottle: (url, retryAfter) =>
            throttledThenPaced(
              deps.log ? { ...deps, log: logFor(deps.log, { runId, sampleId }) } : deps,
              tenant,
              spec,
              url,
              retryAfter,
              deadline,
            ),
          ...(deps.log ? { log: logFor(deps.log, { tenant, runId, sampleId }) } : {}),
        },
        { deadline },
      );
    }
    const final = isFinal(state.status);
    const stored = final ? await deps.runStore.getResult(tenant, runId, sampleId) : undefined;
    if (final && !stored) await writeResultFromState(deps, state);
    const status: SampleStatus = final ? ((stored?.status ?? state.status) as SampleStatus) : 'running';
    if (final)
      await deps.runStore.updateSample(tenant, runId, sampleId, {
        status,
        reason: stored?.reason ?? state.reason ?? '',
      });
    deps.log?.({ level: 'info', msg: 'slice end', tenant, runId, sampleId, step: state.step, status, final });
    deps.onSlice?.({ sampleId, status, final });
    return { final, status, ...(final && spec.judge ? { judge: true } : {}) };
  }

  async function plan(event: unknown): Promise<ExecutionInput> {
    const e = parseEvent(PlanEvent, event, 'plan');
    const run = await deps.runStore.getRun(e.tenant, e.runId);
    if (!run) throw new Error(`run ${e.runId} not found`);
    const model = typeof run.spec.model === 'string' ? run.spec.model : undefined;
    const concurrency =
      e.concurrency ?? (typeof run.spec.concurrency === 'number' ? run.spec.concurrency : undefined);
    const llm = await deps.llmFor(model);
    if (!llm) throw new Error('planning a run from a prompt needs a model: set BROWSERFN_MODEL');
    const planned = await planRun(llm, e.prompt, {
      ...(model ? { model } : {}),
      ...(concurrency ? { concurrency } : {}),
    });
    await manifestedEvidence(deps.evidence, e.tenant, e.runId).put(
      evidenceKey(e.tenant, e.runId, GENERATED_SPEC),
      JSON.stringify(
        { prompt: planned.prompt, spec: planned.spec, samples: planned.samples, usage: planned.usage },
        null,
        2,
      ),
      'application/json',
    );
    // A plan that names a listing has no samples yet: the Discover state collects them.
    if (planned.spec.discovery && planned.samples.length === 0)
      return { tenant: e.tenant, runId: e.runId, concurrency: planned.spec.concurrency, discovery: true };
    await deps.runStore.putSamples(
      sampleRecords(e.tenant, e.runId, planned.samples, new Date().toISOString()),
    );
    const ids = (await deps.runStore.listSamples(e.tenant, e.runId)).map((s) => s.sampleId);
    return executionInput(deps.evidence, e.tenant, e.runId, planned.spec.concurrency, ids, deps.items);
  }

  async function merge(event: unknown) {
    const e = parseEvent(Ids, event, 'merge');
    const out = await mergeRun(deps.runStore, deps.evidence, e.tenant, e.runId);
    return { tenant: e.tenant, runId: e.runId, counts: out.totals.counts, manifestHead: out.manifestHead };
  }

  return { plan, slice, merge, discover: discoverHandler(deps) };
}

export type RunHandlers = ReturnType<typeof runHandlers>;
