/**
 * Checkpoints and the end of a sample. A checkpoint saves the browser's storage, the action log and
 * the state (seq always growing). The end writes action_log.json and result.json, then the result
 * record exactly once: a slice retried after a crash finds it there and writes nothing again.
 */

import type { Page } from 'playwright-core';
import { z } from 'zod';
import { spentOn } from '../llm/spent.ts';
import { redactText } from '../perception/redact.ts';
import type { JsonObject } from '../store/ports.ts';
import type { AgentDeps, AgentLogEvent } from './deps.ts';
import { firstLine } from './errors.ts';
import { ACTION_LOG, putJson, RESULT_FILE, saveScreenshot } from './evidence.ts';
import { countItems } from './merge.ts';
import { saveStorage } from './page-setup.ts';
import { CONSOLIDATE_SYSTEM, consolidatePrompt } from './prompt.ts';
import { shareWhatWasLearned } from './run-memory-sync.ts';
import { type AgentState, type AgentStatus, type StepRecord, stateToJson } from './state.ts';
import { addToUsage } from './usage.ts';

export interface SliceRuntime {
  state: AgentState;
  deps: AgentDeps;
  log: (event: AgentLogEvent) => void;
  /** Every step of the sample so far (loaded from action_log.json when resuming). */
  steps: StepRecord[];
  page?: Page | undefined;
  /** What the last step's actions did, shown to the model on the next step. */
  lastResults: string[];
}

// Usage sums live in usage.ts (run-memory-sync.ts needs them without importing this file back).
export { addToUsage, tokensSince } from './usage.ts';

export async function checkpoint(rt: SliceRuntime, why: string): Promise<void> {
  const { state, deps } = rt;
  if (rt.page && !rt.page.isClosed())
    await saveStorage(rt.page, deps.evidence, state, deps.variables).catch((err) =>
      rt.log({ level: 'warn', msg: 'could not save browser storage', error: firstLine(err) }),
    );
  await putJson(deps.evidence, state, ACTION_LOG, rt.steps, deps.variables, false);
  state.checkpointSeq += 1;
  state.checkpointStep = state.step;
  const stored = await deps.runStore.saveCheckpoint(state.tenant, state.runId, state.sampleId, {
    seq: state.checkpointSeq,
    // Secrets never live in the state; scrubbing once more costs little and guards against slips.
    state: JSON.parse(redactText(JSON.stringify(stateToJson(state)), deps.variables)) as JsonObject,
    savedAt: new Date().toISOString(),
  });
  rt.log({
    level: stored ? 'debug' : 'warn',
    msg: stored ? 'checkpoint saved' : 'a newer checkpoint exists',
    why,
    seq: state.checkpointSeq,
    step: state.step,
  });
}

/** One last model call that turns the accumulated data into the best result it can. */
export async function consolidate(rt: SliceRuntime): Promise<JsonObject> {
  const { state, deps } = rt;
  const schema = z.object({ data: z.record(z.string(), z.unknown()) });
  try {
    const res = await deps.llm.generate({
      system: CONSOLIDATE_SYSTEM,
      messages: [{ role: 'user', content: consolidatePrompt(state.task, state.data, state.progressNotes) }],
      schema,
      schemaName: 'final_result',
      maxTokens: 4096,
    });
    addToUsage(state, res.usage);
    const data = res.value.data as JsonObject;
    // Consolidation may reshape, never lose: fewer items than collected means keep what was collected.
    return countItems(data) >= countItems(state.data) && Object.keys(data).length > 0 ? data : state.data;
  } catch (err) {
    const spent = spentOn(err);
    if (spent) addToUsage(state, spent);
    rt.log({
      level: 'warn',
      msg: 'consolidation call failed; keeping the collected data',
      error: firstLine(err),
    });
    return state.data;
  }
}

/** Ends the sample: status and reason set, evidence written, result stored once. */
export async function finish(
  rt: SliceRuntime,
  status: Exclude<AgentStatus, 'running'>,
  reason: string,
): Promise<void> {
  const { state, deps } = rt;
  const existing = await deps.runStore.getResult(state.tenant, state.runId, state.sampleId);
  if (existing) {
    state.status = existing.status as AgentState['status'];
    state.reason = existing.reason;
    rt.log({ level: 'info', msg: 'result already stored by an earlier slice; not written again' });
    return;
  }
  state.status = status;
  state.reason = reason;
  // Where the sample ended, kept as its last screenshot (secret fields painted over) for the report.
  if (rt.page && !rt.page.isClosed())
    await saveScreenshot(deps.evidence, state, rt.page, 'final', deps.variables).catch((err) =>
      rt.log({ level: 'warn', msg: 'could not save the final screenshot', error: firstLine(err) }),
    );
  // What this sample learned goes to the run's later samples (and its memory.json into the evidence).
  await shareWhatWasLearned(rt);
  await putJson(deps.evidence, state, ACTION_LOG, rt.steps, deps.variables);
  const usage: JsonObject = {
    ...state.usage,
    steps: state.step,
    activeMs: state.activeMs,
    slices: state.slices,
  };
  const result = {
    sampleId: state.sampleId,
    status,
    reason,
    ...(state.retryable ? { retryable: true } : {}),
    data: state.data,
    url: state.url,
    usage,
    evidence: [...state.evidence],
  };
  await putJson(deps.evidence, state, RESULT_FILE, result, deps.variables);
  const written = await deps.runStore.putResult({
    tenant: state.tenant,
    runId: state.runId,
    sampleId: state.sampleId,
    status,
    reason,
    data: state.data,
    usage,
    evidence: [...state.evidence],
    writtenAt: new Date().toISOString(),
  });
  rt.log({ level: 'info', msg: 'sample ended', status, reason, written });
  await checkpoint(rt, 'end');
}
