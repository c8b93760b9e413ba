/** Token and cost sums of a sample: every model call adds its usage, failed ones included. */
import type { Usage } from '../llm/types.ts';
import type { AgentState, StepRecord } from './state.ts';

export function addToUsage(state: AgentState, u: Usage): void {
  state.usage.promptTokens += u.promptTokens;
  state.usage.completionTokens += u.completionTokens;
  state.usage.cachedTokens += u.cachedTokens;
  state.usage.costUsd += u.costUsd ?? 0;
  state.usage.ms += u.ms;
  state.usage.calls += u.calls;
}

/** The tokens spent since `before` (a copy of `state.usage`): what one step cost, whatever it called. */
export function tokensSince(state: AgentState, before: AgentState['usage']): StepRecord['tokens'] {
  return {
    prompt: state.usage.promptTokens - before.promptTokens,
    completion: state.usage.completionTokens - before.completionTokens,
    cached: state.usage.cachedTokens - before.cachedTokens,
  };
}
