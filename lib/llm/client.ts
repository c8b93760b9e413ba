import type { GuardPolicy } from '../browser/guard-policy.ts';
import { anthropicCall } from './anthropic.ts';
import { openAiCall } from './openai.ts';
import { createStructuredClient, type LlmLog, type ProviderCalls } from './structured-client.ts';
import { modelFetch } from './transport.ts';
import type { LlmClient, ModelConfig } from './types.ts';

export { type LlmLog, type Parsed, parseReply } from './structured-client.ts';

const portOf = (url: string) => {
  try {
    const u = new URL(url);
    return u.port || (u.protocol === 'https:' ? '443' : '80');
  } catch {
    return undefined;
  }
};

/** On Node: the provider SDKs over undici, a caller's URL checked again at every connection. */
const nodeCalls: ProviderCalls = (c, guard) => {
  const port = c.baseURL ? portOf(c.baseURL) : undefined;
  const http = modelFetch(guard && port ? { guard: { policy: guard, port } } : {});
  const callerUrl = Boolean(guard && port);
  return c.provider === 'anthropic' ? anthropicCall(c, http, callerUrl) : openAiCall(c, http, callerUrl);
};

/** A model client with timeouts, retries with backoff, one repair round, usage + cost, and an optional fallback. */
export function createLlmClient(
  config: ModelConfig,
  opts: {
    fallback?: ModelConfig;
    log?: LlmLog;
    /** The caller chose this model's URL: hold every connection it makes to the network guard. */
    guard?: GuardPolicy;
  } = {},
): LlmClient {
  return createStructuredClient(config, nodeCalls, opts);
}
