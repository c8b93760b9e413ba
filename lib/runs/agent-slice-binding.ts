/**
 * The one place runs names the agent. A sample runs in one of two modes (the spec's `mode`):
 * - `agent` (default): lib/agent's loop in slices (observe → decide → act → check, checkpoints);
 * - `extract`: one read of the sample page — open it in its own context, screenshot it, run `extract`
 *   with the goal and schema, write the result once. One model call per page, for listing-style runs.
 */
import { runSlice as runAgentSlice } from '../agent/slice.ts';
import { type AgentState, newAgentState } from '../agent/state.ts';
import { pacedGoto, pageUnusable } from '../browser/navigate.ts';
import { settle } from '../browser/settle.ts';
import { noChatModel } from '../llm/computer-use/index.ts';
import { extract } from '../ops/extract.ts';
import { sampleEvidenceKey } from '../store/keys.ts';
import type { Json, JsonObject, ResultRecord, RunStore } from '../store/ports.ts';
import type { SliceDeps, SliceRunner, SliceState, SliceStatus, SliceTask } from './slice-runner.ts';
import { freshSliceState, missingFields, zeroUsage } from './slice-sample.ts';

async function oneStep(state: SliceState, deps: SliceDeps): Promise<SliceState> {
  const started = performance.now();
  const timings = { browserMs: 0, snapshotMs: 0, modelMs: 0, storeMs: 0 };
  const key = (file: string) => sampleEvidenceKey(state.tenant, state.runId, state.sampleId, file);
  const evidence: { key: string; sha256: string }[] = [];
  const actions: JsonObject[] = [];
  const usage = zeroUsage();
  let status: SliceStatus = 'failed';
  let reason = '';
  let data: Json = null;
  let t = performance.now();
  const { page, close } = await deps.newPage();
  try {
    await deps.checkNavigation?.(state.url);
    const response = await pacedGoto(page, state.url, deps.onThrottle);
    await settle(page);
    const gone = response ? pageUnusable(response, page.url()) : undefined;
    actions.push({ step: 1, action: 'goto', url: state.url, ok: !gone, ...(gone ? { error: gone } : {}) });
    // JPEG: a fraction of PNG's encode time and size, still plenty to see what the page showed.
    const shot0 = await page.screenshot({ type: 'jpeg', quality: 70 });
    timings.browserMs = performance.now() - t;
    t = performance.now();
    const shot = await deps.evidence.put(key('01_page.jpg'), shot0, 'image/jpeg');
    evidence.push({ key: shot.key, sha256: shot.sha256 });
    timings.storeMs += performance.now() - t;
    // The screenshot above is the evidence; an error page is not read as data.
    if (gone) reason = `could not open ${state.url}: ${gone}`;
    else {
      const res = await extract(
        {
          page,
          ...(deps.llm ? { llm: deps.llm } : {}),
          ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
          options: { vision: state.task.vision ?? 'fallback' },
        },
        state.task.goal,
        state.task.schema,
      );
      data = res.data as Json;
      usage.promptTokens = res.usage.promptTokens;
      usage.completionTokens = res.usage.completionTokens;
      usage.cachedTokens = res.usage.cachedTokens;
      usage.costUsd = res.usage.costUsd ?? 0;
      timings.modelMs = res.usage.ms;
      timings.snapshotMs = Math.max(0, res.ms - res.usage.ms);
      actions.push({ step: 1, action: 'extract', ok: true, url: res.url });
      const missing = missingFields(data, state.task.requiredFields);
      status = missing.length ? 'needs_review' : 'done';
      reason = missing.length ? `required fields missing: ${missing.join(', ')}` : 'extracted';
    }
  } catch (err) {
    const e = err as Error;
    reason = `${e.name}: ${e.message.split('\n')[0]}`;
    actions.push({ step: 1, action: 'error', ok: false, error: reason });
  } finally {
    await close();
  }
  t = performance.now();
  const log = await deps.evidence.put(key('action_log.json'), JSON.stringify(actions, null, 2));
  evidence.push({ key: log.key, sha256: log.sha256 });
  usage.ms = Math.round(performance.now() - started);
  const next: SliceState & { timings: typeof timings } = {
    ...state,
    step: state.step + 1,
    status,
    reason,
    data,
    usage,
    evidence,
    checkpointSeq: state.checkpointSeq + 1,
    timings,
  };
  await deps.runStore.saveCheckpoint(state.tenant, state.runId, state.sampleId, {
    seq: next.checkpointSeq,
    state: next as unknown as JsonObject,
    savedAt: new Date().toISOString(),
  });
  await deps.runStore.putResult({
    tenant: state.tenant,
    runId: state.runId,
    sampleId: state.sampleId,
    status,
    reason,
    data,
    usage: { ...usage, mode: 'extract', steps: next.step, timings: { ...timings, storeMs: timings.storeMs } },
    evidence,
    writtenAt: new Date().toISOString(),
  });
  timings.storeMs += performance.now() - t;
  return next;
}

/** The one-read mode. */
export const extractSliceRunner: SliceRunner = {
  newState: freshSliceState,
  runSlice: (state, deps) => oneStep(state, deps),
};

/** The run store as the agent sees it: its one result record says which mode produced it. */
function withMode(store: RunStore, mode: 'agent' | 'cua'): RunStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'putResult')
        return (r: ResultRecord) => target.putResult({ ...r, usage: { ...r.usage, mode } });
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** The agent mode: lib/agent's own state and slices; its state is a superset of what runs reads. */
const agentModeRunner: SliceRunner = {
  newState: ({ task: { mode: _mode, ...task }, ...init }) =>
    newAgentState({ ...init, task }) as unknown as SliceState,
  runSlice: async (state, deps, opts) => {
    const cua = (state as unknown as AgentState).task.computerUse !== undefined;
    if (!deps.llm && !cua)
      throw new Error("the agent needs a model: set the spec's model or BROWSERFN_MODEL");
    const next = await runAgentSlice(
      state as unknown as AgentState,
      {
        runStore: withMode(deps.runStore, cua ? 'cua' : 'agent'),
        evidence: deps.evidence,
        ...(deps.runMemory ? { runMemory: deps.runMemory } : {}),
        // A computer-use sample talks to its computer-use model only; no chat model is asked.
        llm: deps.llm ?? noChatModel,
        ...(deps.summaryLlm ? { summaryLlm: deps.summaryLlm } : {}),
        newPage: deps.newPage,
        ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
        ...(deps.onThrottle ? { onThrottle: deps.onThrottle } : {}),
        ...(deps.variables ? { variables: deps.variables } : {}),
        ...(deps.log ? { log: deps.log } : {}),
      },
      opts,
    );
    return next as unknown as SliceState;
  },
};

const isExtract = (task: { mode?: SliceTask['mode'] }) => task.mode === 'extract';

/** Picks the mode per sample from its task. */
export const agentSliceRunner: SliceRunner = {
  newState: (init) =>
    isExtract(init.task) ? extractSliceRunner.newState(init) : agentModeRunner.newState(init),
  runSlice: (state, deps, opts) =>
    isExtract(state.task)
      ? extractSliceRunner.runSlice(state, deps, opts)
      : agentModeRunner.runSlice(state, deps, opts),
};
