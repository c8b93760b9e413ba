import type { Page } from 'playwright-core';
import type { LlmClient } from '../../llm/types.ts';
import type { OpLog } from '../../ops/types.ts';

/** What `agent().execute()` sends, reduced to what an agent needs. */
export interface StagehandAgentInput {
  page: Page;
  instruction: string;
  maxSteps: number | undefined;
  systemPrompt: string | undefined;
  /** Secret values for `%name%` placeholders; never shown to the model. */
  variables: Record<string, string> | undefined;
  llm: LlmClient | undefined;
  checkNavigation: (url: string) => Promise<void>;
  log: OpLog;
  signal: AbortSignal;
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

export class NotImplementedError extends Error {
  override name = 'NotImplementedError';
  readonly kind = 'not_implemented';
}

/**
 * Runs one `agent().execute()` on the session's page.
 * TODO(merge): wire to lib/agent (its loop is being written in parallel): build the agent's
 * state from `input`, run it to completion, map its steps and usage to StagehandAgentResult.
 */
export async function runAgentForStagehand(_input: StagehandAgentInput): Promise<StagehandAgentResult> {
  throw new NotImplementedError(
    'agent().execute() is not available on this browserfn server yet (the agent is not wired to the ' +
      'Stagehand protocol); act, observe, extract and goto are',
  );
}
