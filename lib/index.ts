/**
 * The library: `import { act, observe, extract, runAgent, runTask } from "browserfn"`. Everything here
 * is the same code the HTTP API, the Lambdas and the CLI run.
 */

export type { AgentDeps } from './agent/deps.ts';
export { runAgent } from './agent/run-agent.ts';
export { type AgentState, type AgentTask, AgentTaskSchema, type StepRecord } from './agent/state.ts';
export { type GuardPolicy, policyFromEnv } from './browser/guard-policy.ts';
export { launchBrowser } from './browser/launch.ts';
export { closeSharedBrowser, openSession, type Session, type SessionOptions } from './browser/session.ts';
export { type JudgeInput, judgeSample, type Verdict } from './judge/index.ts';
export { createComputerUseModel, resolveComputerUseModel } from './llm/computer-use/index.ts';
export { createLlmClient, resolveModelConfig } from './llm/index.ts';
export type { LlmClient, ModelConfig, Usage } from './llm/types.ts';
export { act } from './ops/act.ts';
export { extract } from './ops/extract.ts';
export { observe } from './ops/observe.ts';
export type { ActResult, ExtractResult, ObserveResult, OpContext } from './ops/types.ts';
export { snapshot } from './perception/snapshot.ts';
export type { Snapshot } from './perception/types.ts';
export { type RunTaskOptions, runTask, type TaskRunResult } from './runs/run-task.ts';
export { parseTaskSpec, type TaskSpec, type TaskSpecInput, TaskSpecSchema } from './runs/task-spec.ts';
export { LocalEvidenceStore } from './store/local-evidence-store.ts';
export { LocalRunStore } from './store/local-run-store.ts';
export type { EvidenceStore, RunStore } from './store/ports.ts';
