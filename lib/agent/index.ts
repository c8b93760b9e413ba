export type { AgentDeps, AgentLogEvent, SliceOptions } from './deps.ts';
export { canonicalJson, countItems, deepMerge, mergeData } from './merge.ts';
export { type RunAgentOptions, runAgent } from './run-agent.ts';
export { runSlice } from './slice.ts';
export {
  type AgentState,
  type AgentStatus,
  type AgentTask,
  AgentTaskSchema,
  type DomainMemory,
  isFinal,
  type NewAgentStateInit,
  newAgentState,
  type StepRecord,
  stateFromJson,
  stateToJson,
} from './state.ts';
