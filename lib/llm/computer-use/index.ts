/**
 * Which computer-use adapter a model name gets: `anthropic/…` Anthropic's computer tool, `openai/…`
 * the Responses API computer tool, `google/…` Gemini computer use. Keys and endpoints come from the
 * same variables as the chat models (plus GOOGLE_API_KEY / GEMINI_API_KEY and GOOGLE_GEMINI_BASE_URL).
 */
import { type LlmClient, LlmError } from '../types.ts';
import { anthropicComputerModel } from './anthropic.ts';
import { googleComputerModel } from './google.ts';
import { openAiComputerModel } from './openai.ts';
import type { ComputerUseConfig, ComputerUseModel, ComputerUseProvider } from './types.ts';

export type { ComputerUseConfig, ComputerUseModel, Conversation, Turn, TurnInput } from './types.ts';

type Env = Record<string, string | undefined>;
const PROVIDERS: ComputerUseProvider[] = ['anthropic', 'openai', 'google'];
const nonEmpty = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);

/** `anthropic/claude-sonnet-4-5` → the adapter's config, keys from the environment. */
export function resolveComputerUseModel(name: string, env: Env = process.env): ComputerUseConfig {
  const at = name.indexOf('/');
  const provider = name.slice(0, at) as ComputerUseProvider;
  const model = name.slice(at + 1).trim();
  if (at <= 0 || !PROVIDERS.includes(provider) || !model)
    throw new LlmError(
      'bad_request',
      `a computer-use model is written "provider/model" with provider one of ${PROVIDERS.join(', ')} ` +
        `(e.g. anthropic/claude-sonnet-4-5, openai/computer-use-preview, google/gemini-2.5-computer-use-preview-10-2025), got "${name}"`,
    );
  const own = {
    anthropic: { key: env.ANTHROPIC_API_KEY, url: env.ANTHROPIC_BASE_URL },
    openai: { key: env.OPENAI_API_KEY, url: env.OPENAI_BASE_URL },
    google: { key: env.GOOGLE_API_KEY ?? env.GEMINI_API_KEY, url: env.GOOGLE_GEMINI_BASE_URL },
  }[provider];
  const apiKey = nonEmpty(own.key);
  const baseURL = nonEmpty(own.url);
  return {
    provider,
    model,
    ...(apiKey ? { apiKey } : {}),
    ...(baseURL ? { baseURL } : {}),
    ...(env.BROWSERFN_CUA_ACKNOWLEDGE_SAFETY === '1' ? { acknowledgeSafetyChecks: true } : {}),
  };
}

export function createComputerUseModel(config: ComputerUseConfig): ComputerUseModel {
  switch (config.provider) {
    case 'anthropic':
      return anthropicComputerModel(config);
    case 'openai':
      return openAiComputerModel(config);
    case 'google':
      return googleComputerModel(config);
  }
}

/**
 * What a computer-use agent holds where other agents hold a chat model: it talks to its computer-use
 * model only, and anything that would ask a chat model gets this clear error instead.
 */
export const noChatModel: LlmClient = {
  model: 'none',
  generate: () => Promise.reject(new LlmError('bad_request', 'a computer-use agent has no chat model')),
};
