export { createLlmClient, type LlmLog, type Parsed, parseReply } from './client.ts';
export {
  DEFAULT_ANTHROPIC_MODEL,
  DEFAULT_OPENAI_MODEL,
  type ModelChoiceInput,
  noModelError,
  parseModelName,
  resolveFallbackConfig,
  resolveModelConfig,
} from './config.ts';
export { costOf, priceOf } from './pricing.ts';
export { backoffDelay, isRetryable, parseRetryAfter, withRetry } from './retry.ts';
export { metered, spentOn, withSpent } from './spent.ts';
export * from './types.ts';
