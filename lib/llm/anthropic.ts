import Anthropic from '@anthropic-ai/sdk';
import { anthropicBody, anthropicReply } from './anthropic-wire.ts';
import { toLlmError } from './errors.ts';
import { cancelOperatorHeaders, type ModelFetch, processEnv } from './model-fetch.ts';
import type { ModelConfig, ProviderCall, ProviderReply } from './types.ts';

/**
 * Anthropic messages through the SDK, with structured output by forced tool use (the body and
 * the reply: anthropic-wire.ts, shared with the plain-fetch call the edge worker uses).
 */
export function anthropicCall(config: ModelConfig, http: ModelFetch, callerUrl = false): ProviderCall {
  const client = new Anthropic({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 0,
    fetch: http,
    // The operator's ANTHROPIC_CUSTOM_HEADERS are for its own endpoint, never a caller's.
    ...(callerUrl ? { defaultHeaders: cancelOperatorHeaders(processEnv('ANTHROPIC_CUSTOM_HEADERS')) } : {}),
  });
  const label = `anthropic/${config.model}`;
  return async (req, wire, signal, timeoutMs): Promise<ProviderReply> => {
    try {
      const res = await client.messages.create(anthropicBody(config, req, wire), {
        signal,
        timeout: timeoutMs,
        maxRetries: 0,
      });
      return anthropicReply(res);
    } catch (err) {
      throw toLlmError(err, label);
    }
  };
}
