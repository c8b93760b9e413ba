/**
 * The task handlers of the run state machine: Plan, Discover, Slice (and Record crash, Judge), Merge.
 * The local runner binds them by state name; functions/agent-slice.ts, functions/merge.ts and
 * functions/plan.ts call the same functions on Lambda. Inputs are validated: they arrive from a state
 * machine. What a slice is given is sample-slice-deps.ts; a crash record and the judge, slice-outcomes.ts.
 */

import { z } from 'zod';
import { evidenceKey } from '../store/keys.ts';
import type { SampleStatus } from '../store/ports.ts';
import { discoverHandler } from './discover/handler.ts';
import { pace } from './host-pacing.ts';
import { storedVerdict } from './judge-run.ts';
import { manifestedEvidence } from './manifested-evidence.ts';
import { mergeRun } from './merge.ts';
import { planRun } from './planner.ts';
import type { RunDeps } from './run-deps.ts';
import {
  type ExecutionInput,
  executionInput,
  GENERATED_SPEC,
  loadSpec,
  sampleRecords,
} from './run-records.ts';
import { sampleSliceDeps } from './sample-slice-deps.ts';
import { scenarioSliceRunner } from './scenario-slice-binding.ts';
import { judgeSample, recordCrash, type SliceOutput, writeResultFromState } from './slice-outcomes.ts';
import { isFinal, type SliceState, taskFromSpec } from './slice-runner.ts';
import { workflowSliceRunner } from './workflow-slice-binding.ts';
import { runWorkflowRef } from './workflow-versions.ts';

// Callers import these from here: the handlers' inputs, outputs and the crash cause they parse.
export type { RunDeps } from './run-deps.ts';
export { crashMessage, type SliceOutput } from './slice-outcomes.ts';

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

/** A slice's working time when the deployment does not say (BROWSERFN_SLICE_MS). */
export const DEFAULT_SLICE_BUDGET_MS = 540_000;

export function runHandlers(deps: RunDeps) {
  const budget = deps.sliceBudgetMs ?? DEFAULT_SLICE_BUDGET_MS;

  async function slice(event: unknown): Promise<SliceOutput> {
    const e = parseEvent(SliceEvent, event, 'slice');
    if (e.crash) return recordCrash(deps, e);
    if (e.judge) return judgeSample(deps, e);
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
      const sliceDeps = await sampleSliceDeps(deps, spec, { tenant, runId, sampleId }, deadline);
      state = await runner.runSlice(state, sliceDeps, { deadline });
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
