import type { z } from 'zod';

export type Provider = 'openai' | 'anthropic' | 'openai-compatible';

export interface ModelConfig {
  provider: Provider;
  model: string;
  baseURL?: string;
  apiKey?: string;
  /** Per attempt (default 60 s). */
  timeoutMs?: number;
  /** Retries after the first attempt on 429 / 5xx / timeouts (default 3). */
  maxRetries?: number;
  /** Base of the exponential backoff (default 500 ms). */
  backoffMs?: number;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  model: string;
  ms: number;
  costUsd?: number;
  calls: number;
}

export type MessagePart =
  | { type: 'text'; text: string }
  | { type: 'image'; mediaType: 'image/png' | 'image/jpeg'; data: string };

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string | MessagePart[];
}

export interface StructuredRequest<T> {
  system: string;
  messages: ChatMessage[];
  schema: z.ZodType<T>;
  schemaName: string;
  schemaDescription?: string;
  temperature?: number;
  maxTokens?: number;
  signal?: AbortSignal;
}

export interface StructuredResult<T> {
  value: T;
  usage: Usage;
  model: string;
}

export interface LlmClient {
  /** `provider/model` */
  readonly model: string;
  generate<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>>;
}

export type LlmErrorKind =
  | 'no_model'
  | 'auth'
  | 'rate_limit'
  | 'server'
  | 'timeout'
  | 'invalid_output'
  | 'bad_request'
  | 'network';

export class LlmError extends Error {
  override name = 'LlmError';
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly status?: number,
    /** Seconds the provider asked us to wait (retry-after). */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export const emptyUsage = (model = ''): Usage => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  model,
  ms: 0,
  calls: 0,
});

export function addUsage(a: Usage, b: Usage): Usage {
  const out: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    model: b.model || a.model,
    ms: a.ms + b.ms,
    calls: a.calls + b.calls,
  };
  if (a.costUsd !== undefined || b.costUsd !== undefined) out.costUsd = (a.costUsd ?? 0) + (b.costUsd ?? 0);
  return out;
}

/** One raw exchange with a provider: the text or tool input it returned, and its token counts. */
export interface ProviderReply {
  /** JSON text (structured output / tool input serialised) or plain text. */
  text: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
}

/** A provider adapter: one call, no retries, no validation. */
export type ProviderCall = (
  req: StructuredRequest<unknown>,
  jsonSchema: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<ProviderReply>;
