/**
 * Mode "workflow" of a run: each sample replays the run's workflow (lib/workflows) in slices, the
 * executor's plain-JSON state checkpointed like the agent's (seq always growing), and ends with one
 * result whose usage says what it paid for. A sample starts on the LATEST version of the workflow, so
 * a heal one sample wrote back spares the samples after it; its confirmed heals are written as the
 * next version when it ends ok (after the judge's pass when the run has a judge: handlers.ts). A
 * workflow that fails falls back to the agent on the same sample when the spec allows it; the agent's
 * result is then the sample's one result.
 */
import type { Checkpoint, Json, JsonObject, ResultRecord, RunStore } from '../store/ports.ts';
import { newWorkflowState, runWorkflowSlice } from '../workflows/executor.ts';
import type { Workflow } from '../workflows/schema.ts';
import type { WorkflowDeps, WorkflowState } from '../workflows/types.ts';
import { agentSliceRunner } from './agent-slice-binding.ts';
import type { SliceDeps, SliceRunner, SliceState, SliceStatus, SliceTask } from './slice-runner.ts';
import {
  checkpoint,
  finishSample,
  freshSliceState,
  missingFields,
  putEvidence,
  saveEvidence,
} from './slice-sample.ts';
import { outputSignature, workflowUsage } from './workflow-sample-usage.ts';
import { tryStaticRead } from './workflow-static.ts';
import { inlineSubAgent } from './workflow-sub-agent.ts';
import { loadVersion, writeBackHeals } from './workflow-versions.ts';

/** A workflow sample's state: the runs fields, the executor's state, and the agent's once it took over. */
export interface WorkflowSampleState extends SliceState {
  run?: WorkflowState;
  /** The agent's state (a SliceState) after the workflow failed and the spec allowed the fallback. */
  agent?: JsonObject;
  fallback?: {
    reason: string /** checkpoint seq when the agent took over: its seqs count on from here */;
    base: number;
  };
  /** The version this sample's heals were written as. */
  healedVersion?: number;
}

/** The runs fields mirrored from the executor's state (what a crash record or a retry reads). */
function mirrorRun(state: WorkflowSampleState): void {
  const run = state.run;
  if (!run) return;
  state.step = run.steps;
  state.data = run.data;
  state.usage = {
    promptTokens: run.usage.promptTokens,
    completionTokens: run.usage.completionTokens,
    cachedTokens: run.usage.cachedTokens,
    costUsd: run.usage.costUsd,
    ms: run.usage.ms,
  };
}

/** The sample's usage as its result records it (totals plus the WR/WS contract fields). */
function resultUsage(state: WorkflowSampleState, agentUsage?: JsonObject): JsonObject {
  const num = (v: Json | undefined) => (typeof v === 'number' ? v : 0);
  const wf = state.usage;
  const totals = {
    promptTokens: wf.promptTokens + num(agentUsage?.promptTokens),
    completionTokens: wf.completionTokens + num(agentUsage?.completionTokens),
    cachedTokens: wf.cachedTokens + num(agentUsage?.cachedTokens),
    costUsd: wf.costUsd + num(agentUsage?.costUsd),
    ms: wf.ms + num(agentUsage?.ms),
  };
  const contract = state.run
    ? workflowUsage(
        state.run,
        state.fallback && {
          reason: state.fallback.reason,
          promptTokens: num(agentUsage?.promptTokens),
          completionTokens: num(agentUsage?.completionTokens),
        },
      )
    : { mode: 'workflow', ...(state.fallback ? { fallback: { reason: state.fallback.reason } } : {}) };
  return {
    ...(agentUsage ?? {}),
    ...totals,
    steps: state.step + num(agentUsage?.steps),
    ...(contract as unknown as JsonObject),
    ...(state.healedVersion ? { healedVersion: state.healedVersion } : {}),
  };
}

/** What each node did (results by alias, heals) as the sample's evidence. */
async function saveWorkflowLog(state: WorkflowSampleState, deps: SliceDeps): Promise<void> {
  if (!state.run) return;
  const { workflow, results, heals } = state.run;
  await saveEvidence(
    state,
    deps,
    'workflow_log.json',
    JSON.stringify({ workflow, results, heals }, null, 2),
    'application/json',
  );
}

/** Writes what each node did, then the sample's one result (first write wins) and the last checkpoint. */
async function endSample(
  state: WorkflowSampleState,
  deps: SliceDeps,
  status: Exclude<SliceStatus, 'running'>,
  reason: string,
): Promise<WorkflowSampleState> {
  await saveWorkflowLog(state, deps);
  return finishSample(state, deps, status, reason, resultUsage(state));
}

/** Counts the run on the version it started on: only a run that needed no heal is a success of it. */
async function recordOutcome(state: WorkflowSampleState, deps: SliceDeps, ok: boolean): Promise<void> {
  const run = state.run;
  if (!deps.workflows || !run?.workflow.id) return;
  await deps.workflows.recordOutcome(state.tenant, run.workflow.id, run.workflow.version, {
    ok: ok && run.heals.length === 0,
    signature: outputSignature(run.data),
  });
}

/** The agent's task for the fallback: the spec's goal and limits, nothing of the workflow. */
function agentTask(task: SliceTask): SliceTask {
  const {
    mode: _m,
    workflow: _w,
    fallback: _f,
    requireVerified: _r,
    judged: _j,
    computerUse: _c,
    ...rest
  } = task;
  return { ...rest, mode: 'agent' };
}

/** The workflow could not finish: the agent takes over when allowed, else the sample fails with why. */
async function workflowFailed(
  state: WorkflowSampleState,
  deps: SliceDeps,
  opts: { deadline: number },
  reason: string,
): Promise<WorkflowSampleState> {
  await recordOutcome(state, deps, false);
  if (state.task.fallback !== 'agent') return endSample(state, deps, 'failed', `workflow failed: ${reason}`);
  if (!deps.llm)
    return endSample(
      state,
      deps,
      'failed',
      `workflow failed: ${reason}; the agent fallback needs a model: set the spec's model or BROWSERFN_MODEL`,
    );
  // What the workflow did before it failed stays in the sample's evidence beside the agent's.
  await saveWorkflowLog(state, deps);
  deps.log?.({
    level: 'info',
    msg: 'workflow failed; the agent takes over',
    sampleId: state.sampleId,
    reason,
  });
  const agent = agentSliceRunner.newState({
    tenant: state.tenant,
    runId: state.runId,
    sampleId: state.sampleId,
    task: agentTask(state.task),
    url: state.url,
    input: state.input,
  });
  state.agent = agent as unknown as JsonObject;
  state.fallback = { reason, base: state.checkpointSeq + 1 };
  await checkpoint(state, deps);
  return runFallback(state, deps, opts);
}

/**
 * The agent's slice on this sample. Its checkpoints are kept inside this sample's state (seq counted
 * on from the fallback), and its one result record gains the workflow's part: what the workflow spent
 * before it failed, the heals, and why the agent took over.
 */
async function runFallback(
  state: WorkflowSampleState,
  deps: SliceDeps,
  opts: { deadline: number },
): Promise<WorkflowSampleState> {
  const base = deps.runStore;
  const outer = () => {
    const { agent: _a, ...rest } = state;
    return rest;
  };
  const absorb = (agent: JsonObject) => {
    const a = agent as unknown as SliceState;
    state.agent = agent;
    state.status = a.status;
    if (a.reason !== undefined) state.reason = a.reason;
    if (a.status !== 'running') state.data = a.data;
  };
  const runStore = new Proxy(base, {
    get(target, prop, receiver) {
      if (prop === 'saveCheckpoint')
        return (t: string, r: string, s: string, cp: Checkpoint) => {
          absorb(cp.state);
          state.checkpointSeq = state.fallback!.base + cp.seq;
          return target.saveCheckpoint(t, r, s, {
            ...cp,
            seq: state.checkpointSeq,
            state: { ...outer(), agent: cp.state } as unknown as JsonObject,
          });
        };
      if (prop === 'putResult')
        return (r: ResultRecord) =>
          target.putResult({
            ...r,
            usage: resultUsage(state, r.usage),
            evidence: [...state.evidence, ...r.evidence],
          });
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as RunStore;
  const next = await agentSliceRunner.runSlice(
    state.agent as unknown as SliceState,
    { ...deps, runStore },
    opts,
  );
  absorb(next as unknown as JsonObject);
  return state;
}

/** The workflow's nodes for this slice in a fresh page of the sample's context (auth profile loaded). */
async function browserPart(
  state: WorkflowSampleState,
  start: WorkflowState,
  workflow: Workflow,
  deps: SliceDeps,
  opts: { deadline: number; maxSteps?: number },
  saved: { key: string; sha256: string }[],
): Promise<WorkflowState> {
  const { page, close } = await deps.newPage();
  let run = start;
  try {
    // A later slice has a fresh browser: it continues on the page the last one left.
    if (run.steps > 0 && /^https?:/.test(run.url)) {
      await deps.checkNavigation?.(run.url);
      await page.goto(run.url, { waitUntil: 'load' });
    }
    const wdeps: WorkflowDeps = {
      page,
      ...(deps.llm ? { llm: deps.llm } : {}),
      ...(deps.variables ? { variables: deps.variables } : {}),
      ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
      ...(deps.onThrottle ? { onThrottle: deps.onThrottle } : {}),
      ...(deps.log ? { log: deps.log } : {}),
      // Listed on the state when the slice ends, beside the node results that name them.
      saveEvidence: async (file, body, contentType) => {
        const ref = await putEvidence(state, deps, file, body, contentType);
        saved.push(ref);
        return ref;
      },
      runAgent: inlineSubAgent(state, deps, () => page.url()),
    };
    const limit = opts.maxSteps === undefined ? {} : { maxNodes: opts.maxSteps };
    const before = run.steps;
    run = await runWorkflowSlice(workflow, run, wdeps, { deadline: opts.deadline, ...limit });
    // Always at least one node per slice: a slice that could not start one would repeat forever.
    if (run.status === 'running' && run.steps === before)
      run = await runWorkflowSlice(workflow, run, wdeps, { maxNodes: 1 });
  } finally {
    await close();
  }
  return run;
}

/** One slice of the workflow on a fresh page of the sample's context. */
async function runWorkflowPart(
  state: WorkflowSampleState,
  deps: SliceDeps,
  opts: { deadline: number; maxSteps?: number },
): Promise<WorkflowSampleState> {
  const store = deps.workflows;
  if (!store)
    return endSample(state, deps, 'failed', 'this deployment has no workflow store for mode "workflow"');
  const ref = state.run
    ? { id: state.run.workflow.id!, version: state.run.workflow.version }
    : state.task.workflow;
  if (!ref) return endSample(state, deps, 'failed', 'mode "workflow" without a workflow');
  const loaded = await loadVersion(store, state.tenant, ref);
  if ('problem' in loaded) return workflowFailed(state, deps, opts, loaded.problem);
  const workflow: Workflow = loaded.workflow;
  if (!state.run) {
    if (state.task.requireVerified && !loaded.record.verified)
      return endSample(
        state,
        deps,
        'failed',
        `workflow "${ref.id}" version ${loaded.record.version} is not verified; requireVerified refuses to run it unattended`,
      );
    try {
      state.run = newWorkflowState({
        tenant: state.tenant,
        runId: state.runId,
        sampleId: state.sampleId,
        workflow,
        workflowId: ref.id,
        inputs: state.input,
        url: state.url,
      });
    } catch (err) {
      return workflowFailed(state, deps, opts, (err as Error).message);
    }
  }
  const saved: { key: string; sha256: string }[] = [];
  let run = state.run;
  // A fresh sample of a workflow marked readable from its served HTML is read without a browser.
  const attempt =
    run.steps === 0 && deps.staticRead
      ? await tryStaticRead(
          workflow,
          {
            tenant: state.tenant,
            runId: state.runId,
            sampleId: state.sampleId,
            workflowId: ref.id,
            inputs: state.input,
            url: state.url,
          },
          {
            ...deps.staticRead,
            ...(deps.variables ? { variables: deps.variables } : {}),
            ...(deps.onThrottle ? { onThrottle: deps.onThrottle } : {}),
          },
        )
      : undefined;
  if (attempt?.path === 'refused')
    return workflowFailed(state, deps, opts, `could not open ${state.url}: ${attempt.why}`);
  if (attempt?.path === 'browser' && attempt.why)
    deps.log?.({ level: 'info', msg: 'read in the browser, not from the served HTML', why: attempt.why });
  if (attempt?.path === 'static-html') run = attempt.state;
  else run = await browserPart(state, run, workflow, deps, opts, saved);
  if (attempt?.path === 'browser' && attempt.compare && run.status === 'done' && !attempt.compare(run.data))
    deps.log?.({
      level: 'warn',
      msg: 'the served HTML read differently from the browser: the rest of the run is read in the browser',
    });
  state.run = run;
  state.evidence.push(...saved);
  mirrorRun(state);
  await checkpoint(state, deps);
  if (run.status === 'running') return state;
  if (run.status === 'failed')
    return workflowFailed(state, deps, opts, run.reason ?? `${run.failedAt} failed`);
  // Done: heals go back now, or after the judge's pass when the run has one (handlers.ts).
  if (!state.task.judged && ref.id) {
    const v = await writeBackHeals(store, state.tenant, ref.id, run.heals, state);
    if (v) state.healedVersion = v;
  }
  await recordOutcome(state, deps, true);
  const missing = missingFields(run.data, state.task.requiredFields);
  return missing.length
    ? endSample(state, deps, 'needs_review', `required fields missing: ${missing.join(', ')}`)
    : endSample(
        state,
        deps,
        'done',
        `workflow ${run.workflow.name} v${run.workflow.version}: ${run.reason ?? 'done'}`,
      );
}

export const workflowSliceRunner: SliceRunner = {
  newState: freshSliceState,
  runSlice: async (input, deps, opts) => {
    const state = structuredClone(input) as WorkflowSampleState;
    if (state.status !== 'running') return state;
    const limits = opts as { deadline: number; maxSteps?: number };
    return state.agent ? runFallback(state, deps, limits) : runWorkflowPart(state, deps, limits);
  },
};
