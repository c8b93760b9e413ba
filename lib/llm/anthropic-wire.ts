/**
 * The Anthropic messages wire format, shared by the SDK adapter (anthropic.ts, Node) and the plain
 * `fetch` one below (the edge worker: the SDK's entry imports Node modules). Structured output is a
 * forced tool call whose input schema is the answer's; the system prompt is marked for caching.
 */
import type Anthropic from '@anthropic-ai/sdk';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk/core/error';
import { toLlmError } from './errors.ts';
import type { ModelFetch } from './model-fetch.ts';
import type {
  ChatMessage,
  ModelConfig,
  ProviderCall,
  ProviderReply,
  StructuredRequest,
  WireSchema,
} from './types.ts';

type Block = Anthropic.Messages.TextBlockParam | Anthropic.Messages.ImageBlockParam;

function content(m: ChatMessage): string | Block[] {
  if (typeof m.content === 'string') return m.content;
  return m.content.map(
    (p): Block =>
      p.type === 'text'
        ? { type: 'text', text: p.text }
        : { type: 'image', source: { type: 'base64', media_type: p.mediaType, data: p.data } },
  );
}

/** The request body of one structured call. */
export function anthropicBody(
  config: ModelConfig,
  req: StructuredRequest<unknown>,
  wire: WireSchema,
): Anthropic.Messages.MessageCreateParamsNonStreaming {
  return {
    model: config.model,
    max_tokens: req.maxTokens ?? 4096,
    ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
    system: [{ type: 'text', text: req.system, cache_control: { type: 'ephemeral' } }],
    messages: req.messages.map((m) => ({ role: m.role, content: content(m) })),
    tools: [
      {
        name: req.schemaName,
        description: req.schemaDescription ?? 'Give the answer by calling this tool.',
        input_schema: wire.schema as Anthropic.Messages.Tool.InputSchema,
      },
    ],
    tool_choice: { type: 'tool', name: req.schemaName },
  };
}

/** The forced tool's input as JSON text (or the reply's text), with every input token counted. */
export function anthropicReply(res: Pick<Anthropic.Messages.Message, 'content' | 'usage'>): ProviderReply {
  const tool = res.content.find((b) => b.type === 'tool_use');
  const text = tool
    ? JSON.stringify(tool.input)
    : res.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
  const u = res.usage;
  const cacheRead = u.cache_read_input_tokens ?? 0;
  return {
    text,
    // input_tokens leaves out cache reads and writes; our promptTokens is every input token.
    promptTokens: u.input_tokens + cacheRead + (u.cache_creation_input_tokens ?? 0),
    completionTokens: u.output_tokens,
    cachedTokens: cacheRead,
  };
}

const API_VERSION = '2023-06-01';

/**
 * The same call over plain `fetch`, for runtimes where the SDK does not load. Failures are thrown
 * as the SDK's own error classes (its error module has no Node import), so errors.ts sorts them
 * exactly as it sorts the SDK's.
 */
export function anthropicFetchCall(config: ModelConfig, http: ModelFetch): ProviderCall {
  const base = (config.baseURL ?? 'https://api.anthropic.com').replace(/\/+$/, '');
  const label = `anthropic/${config.model}`;
  return async (req, wire, signal, timeoutMs): Promise<ProviderReply> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await http(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'anthropic-version': API_VERSION,
          ...(config.apiKey ? { 'x-api-key': config.apiKey } : {}),
        },
        body: JSON.stringify(anthropicBody(config, req, wire)),
        signal: both,
      });
    } catch (err) {
      if (signal?.aborted) throw toLlmError(new APIUserAbortError(), label);
      if (timeout.aborted) throw toLlmError(new APIConnectionTimeoutError(), label);
      throw toLlmError(new APIConnectionError({ cause: err as Error }), label);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (res.status < 200 || res.status >= 300)
      throw toLlmError(APIError.generate(res.status, body as object, undefined, res.headers), label);
    if (!body || typeof body !== 'object' || !Array.isArray((body as { content?: unknown }).content))
      throw toLlmError(new Error('the reply was not a messages response'), label);
    return anthropicReply(body as Anthropic.Messages.Message);
  };
}
