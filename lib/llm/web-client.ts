/**
 * Model clients for web-standard runtimes (the edge worker): OpenAI and OpenAI-compatible servers
 * through the `openai` SDK (it runs on workerd), Anthropic through plain `fetch` in the same wire
 * format (the Anthropic SDK's entry imports Node modules), both over the runtime's own fetch.
 */
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { anthropicFetchCall } from './anthropic-wire.ts';
import { webModelFetch } from './model-fetch.ts';
import { openAiCall } from './openai.ts';
import { createStructuredClient, type LlmLog, type ProviderCalls } from './structured-client.ts';
import type { LlmClient, ModelConfig } from './types.ts';

const webCalls =
  (fetchImpl: typeof fetch): ProviderCalls =>
  (c, guard) => {
    const http = webModelFetch(fetchImpl);
    return c.provider === 'anthropic'
      ? anthropicFetchCall(c, http)
      : openAiCall(c, http, guard !== undefined);
  };

export function createWebLlmClient(
  config: ModelConfig,
  opts: {
    fallback?: ModelConfig;
    log?: LlmLog;
    /** The caller chose this model's URL (checked before the call; see webModelFetch). */
    guard?: GuardPolicy;
    fetch?: typeof fetch;
  } = {},
): LlmClient {
  const { fetch: fetchImpl, ...rest } = opts;
  return createStructuredClient(config, webCalls(fetchImpl ?? ((input, init) => fetch(input, init))), rest);
}
