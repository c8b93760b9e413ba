import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import type { AgentDeps } from '../../agent/deps.ts';
import { runAgent } from '../../agent/run-agent.ts';
import { AgentTaskSchema, type StepRecord } from '../../agent/state.ts';
import { FINAL_TOOLS } from '../../agent/tools.ts';
import type { ComputerUseModel } from '../../llm/computer-use/types.ts';
import type { LlmClient } from '../../llm/types.ts';
import type { OpLog } from '../../ops/types.ts';
import { storesFromEnv } from '../../store/config.ts';
import type { EvidenceStore, RunStore } from '../../store/ports.ts';

/** What `agent().execute()` sends, reduced to what an agent needs. */
export interface StagehandAgentInput {
  page: Page;
  instruction: string;
  maxSteps: number | undefined;
  systemPrompt: string | undefined;
  /** Secret values for `%name%` placeholders; never shown to the model. */
  variables: Record<string, string> | undefined;
  llm: LlmClient | undefined;
  /** `agent({ mode: "cua" })`: the computer-use model that drives the page instead of `llm`. */
  computerUse?: ComputerUseModel;
  checkNavigation: (url: string) => Promise<void>;
  log: OpLog;
  signal: AbortSignal;
  /** Epoch ms: start no step that may not end by then, and answer with the steps so far. */
  finishBy?: number;
}

/** The SDK's AgentResult, as the `finished` event carries it. */
export interface StagehandAgentResult {
  success: boolean;
  message: string;
  actions: Array<{ type: string; reasoning?: string; taskCompleted?: boolean; pageUrl?: string }>;
  completed: boolean;
  usage: {
    input_tokens: number;
    output_tokens: number;
    reasoning_tokens?: number;
    cached_input_tokens?: number;
    inference_time_ms: number;
  };
}

export class NoModelError extends Error {
  override name = 'NoModelError';
  readonly kind = 'no_model';
}

/** Stores for the agent's checkpoints and evidence (the session's tenant first in every key). */
export type AgentStoresFor = (tenant: string) => { runStore: RunStore; evidence: EvidenceStore };

/** The stores the process is configured with (local files by default; DynamoDB + S3 on AWS). */
const configuredStores: AgentStoresFor = (() => {
  let stores: { runStore: RunStore; evidence: EvidenceStore } | undefined;
  return () => {
    if (!stores) {
      const configured = storesFromEnv();
      stores = { runStore: configured.runs, evidence: configured.evidence };
    }
    return stores;
  };
})();

/** How an agent's step reads in the SDK's action list: each tool call with the step's thought. */
function toActions(steps: StepRecord[]): StagehandAgentResult['actions'] {
  return steps.flatMap((s) =>
    s.actions.map((a) => ({
      type: a.tool,
      reasoning: [s.evaluation, s.nextGoal].filter(Boolean).join(' → ') || undefined,
      taskCompleted: a.tool === 'done' && a.ok,
      pageUrl: s.url,
    })),
  );
}

const endedByAgent = (steps: StepRecord[]) =>
  steps.at(-1)?.actions.some((a) => (FINAL_TOOLS as readonly string[]).includes(a.tool) && a.ok) ?? false;

/**
 * Runs one `agent().execute()` on the session's page with browserfn's agent (lib/agent): the page
 * is handed over as it is (no reload, cookies kept), the agent works until done, fail or its step
 * budget, and its steps and token usage come back in the SDK's AgentResult shape.
 */
export async function runAgentForStagehand(
  input: StagehandAgentInput & { tenant: string; stores?: AgentStoresFor },
): Promise<StagehandAgentResult> {
  if (!input.llm)
    throw new NoModelError(
      'agent().execute() needs a model: pass modelName with x-model-api-key, or configure BROWSERFN_MODEL',
    );
  const goal = input.systemPrompt
    ? `${input.instruction}\n\n(Guidance: ${input.systemPrompt})`
    : input.instruction;
  // The SDK's maxSteps is a cap its callers count on: no bonus steps for paging here.
  const task = AgentTaskSchema.parse({
    goal,
    ...(input.maxSteps ? { maxSteps: input.maxSteps, strictMaxSteps: true } : {}),
    ...(input.computerUse
      ? { computerUse: { model: `${input.computerUse.config.provider}/${input.computerUse.config.model}` } }
      : {}),
  });
  const steps: StepRecord[] = [];
  const deps: AgentDeps = {
    ...(input.stores ?? configuredStores)(input.tenant),
    llm: input.llm,
    ...(input.computerUse ? { computerUse: input.computerUse } : {}),
    // The session's own page: closing it belongs to the session, not to the agent.
    newPage: async () => ({ page: input.page, close: async () => undefined }),
    checkNavigation: input.checkNavigation,
    ...(input.variables ? { variables: input.variables } : {}),
    log: (e) => input.log({ ...e, level: e.level }),
    onStep: (s) => steps.push(s),
    signal: input.signal,
  };
  const started = performance.now();
  const state = await runAgent(
    {
      tenant: input.tenant,
      runId: `stagehand_${randomUUID()}`,
      sampleId: 'main',
      task,
      url: input.page.url(),
    },
    deps,
    input.finishBy ? { deadline: input.finishBy } : {},
  );
  const success = state.status === 'done' || state.status === 'partial_success';
  const data =
    state.data && typeof state.data === 'object' ? JSON.stringify(state.data) : String(state.data ?? '');
  return {
    success,
    message: [
      state.status === 'running'
        ? `stopped after ${state.step} step${state.step === 1 ? '' : 's'}: the call's time ran out`
        : (state.reason ?? state.status),
      data && data !== '{}' ? data : '',
    ]
      .filter(Boolean)
      .join(': '),
    actions: toActions(steps),
    // As the SDK's own agent says it: completed only when the agent itself called it done (or
    // gave up), not when a step budget, the clock or a run of errors stopped it.
    completed:
      endedByAgent(steps) ||
      // A computer-use model ends the task by answering instead of calling a final tool.
      (input.computerUse !== undefined &&
        (state.status === 'done' || /^the agent gave up/.test(state.reason ?? ''))),
    usage: {
      input_tokens: state.usage.promptTokens,
      output_tokens: state.usage.completionTokens,
      cached_input_tokens: state.usage.cachedTokens,
      inference_time_ms: Math.round(state.usage.ms || performance.now() - started),
    },
  };
}
