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
  /** All input tokens, cached ones included. */
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  model: string;
  /** Wall time, waits between retries included. */
  ms: number;
  costUsd?: number;
  /** Model replies received (failed attempts such as 429s are not counted). */
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
  /** Tokens of the replies this failed call did receive (a reply in the wrong shape is still billed). */
  usage?: Usage;
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly status?: number,
    /** How long the provider asked us to wait before trying again (retry-after), in ms. */
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
  // A total is only a cost if every part that used tokens was priced; a partial sum would mislead.
  const priced = (u: Usage) => u.costUsd !== undefined || u.promptTokens + u.completionTokens === 0;
  if (priced(a) && priced(b) && (a.costUsd !== undefined || b.costUsd !== undefined))
    out.costUsd = (a.costUsd ?? 0) + (b.costUsd ?? 0);
  return out;
}

/** One raw exchange with a provider: the text or tool input it returned, and its token counts. */
export interface ProviderReply {
  /** JSON text (structured output / tool input serialised) or plain text. */
  text: string;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  /** Requests that answered to produce this reply (more than 1 when a format fallback re-asked). */
  calls?: number;
}

/** The JSON Schema a provider is sent, as the root object it insists on, with its strict-mode twin. */
export interface WireSchema {
  schema: Record<string, unknown>;
  /** OpenAI strict-mode form (all required, optional → nullable); undefined when not expressible. */
  strict: Record<string, unknown> | undefined;
  /** The caller's schema was not an object, so it travels as `{ value: … }`. */
  wrapped: boolean;
}

/** A provider adapter: one call, no retries, no validation. */
export type ProviderCall = (
  req: StructuredRequest<unknown>,
  schema: WireSchema,
  signal: AbortSignal | undefined,
  /** Per attempt. */
  timeoutMs: number,
) => Promise<ProviderReply>;
