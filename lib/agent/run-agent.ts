import type { AgentDeps } from './deps.ts';
import { runSlice } from './slice.ts';
import { type AgentState, isFinal, type NewAgentStateInit, newAgentState, stateFromJson } from './state.ts';

/** Slices run back to back until the sample ends; each gets this much time unless a deadline is nearer. */
const SLICE_MS = 10 * 60_000;

/**
 * Carries one sample to its end: resumes from the stored checkpoint when there is one, then runs
 * slices until the state is final or `deadline` passes (then the last checkpoint is where the next
 * call picks up). Used by the API route, the CLI and adapters that want one call, not slices.
 */
export interface RunAgentOptions {
  /** Epoch ms: hand the (checkpointed, still running) state back by then. */
  deadline?: number;
}

export async function runAgent(
  init: NewAgentStateInit,
  deps: AgentDeps,
  opts: RunAgentOptions = {},
): Promise<AgentState> {
  const saved = await deps.runStore.loadCheckpoint(init.tenant, init.runId, init.sampleId);
  let state = saved ? stateFromJson(saved.state) : newAgentState(init);
  while (!isFinal(state)) {
    const now = Date.now();
    if (opts.deadline !== undefined && now >= opts.deadline) break;
    const deadline = Math.min(opts.deadline ?? Number.POSITIVE_INFINITY, now + SLICE_MS);
    const before = state.step;
    state = await runSlice(state, deps, { deadline });
    // A slice returns unfinished only when its time is up: when that was the caller's deadline (or
    // it could not even start a step), hand the state back; the caller comes back with more time.
    if (!isFinal(state) && (deadline === opts.deadline || state.step === before)) break;
  }
  return state;
}
