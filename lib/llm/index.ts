export { createLlmClient, type LlmLog, parseReply } from './client.ts';
export { noModelError, parseModelName, resolveModelConfig } from './config.ts';
export { costOf } from './pricing.ts';
export * from './types.ts';
