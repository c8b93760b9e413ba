import OpenAI from 'openai';
import type {
  ChatCompletion,
  ChatCompletionContentPart,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { toLlmError } from './errors.ts';
import { firstJsonObject } from './json-schema.ts';
import { cancelOperatorHeaders, type ModelFetch, processEnv } from './model-fetch.ts';
import { withSpent } from './spent.ts';
import type { ChatMessage, ModelConfig, ProviderCall, ProviderReply, StructuredRequest } from './types.ts';
import { LlmError } from './types.ts';

function content(m: ChatMessage): string | ChatCompletionContentPart[] {
  if (typeof m.content === 'string') return m.content;
  return m.content.map((p) =>
    p.type === 'text'
      ? { type: 'text' as const, text: p.text }
      : { type: 'image_url' as const, image_url: { url: `data:${p.mediaType};base64,${p.data}` } },
  );
}

function messages(req: StructuredRequest<unknown>, extraSystem = ''): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: req.system + extraSystem },
    ...req.messages.map(
      (m): ChatCompletionMessageParam =>
        m.role === 'user'
          ? { role: 'user', content: content(m) }
          : {
              role: 'assistant',
              // Assistant turns take text only; images never come from the model.
              content:
                typeof m.content === 'string'
                  ? m.content
                  : m.content.map((p) => (p.type === 'text' ? p.text : '')).join(''),
            },
    ),
  ];
}

// Reasoning models accept only their default temperature and only `max_completion_tokens`.
const isReasoningModel = (model: string) => /^(o\d|gpt-5)/.test(model);

const looksLikeJson = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return firstJsonObject(text) !== undefined;
  }
};

// Servers found to lack json_schema (and to answer in text instead), by base URL + model: clients
// are made per request, and relearning this would cost a refused call every time.
const textOnly = new Set<string>();

/**
 * OpenAI chat completions with JSON Schema structured output. An OpenAI-compatible server that
 * refuses `json_schema` (400) or ignores it (answers prose) is asked again with the schema in the
 * prompt, and from then on always that way: the server will not learn json_schema mid-run.
 */
export function openAiCall(config: ModelConfig, http: ModelFetch, callerUrl = false): ProviderCall {
  const client = new OpenAI({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 0,
    fetch: http,
    // The SDK adds what the operator set in its environment for its own endpoint; a URL the caller
    // chose gets none of it.
    ...(callerUrl
      ? {
          organization: null,
          project: null,
          defaultHeaders: cancelOperatorHeaders(processEnv('OPENAI_CUSTOM_HEADERS')),
        }
      : {}),
  });
  const label = `${config.provider}/${config.model}`;
  const compatible = config.provider === 'openai-compatible';
  const reasoning = !compatible && isReasoningModel(config.model);
  const key = `${config.baseURL ?? ''}|${config.model}`;

  return async (req, wire, signal, timeoutMs): Promise<ProviderReply> => {
    const base: Omit<ChatCompletionCreateParamsNonStreaming, 'messages'> = { model: config.model };
    if (!reasoning) base.temperature = req.temperature ?? 0.1;
    if (req.maxTokens) {
      if (compatible) base.max_tokens = req.maxTokens;
      else base.max_completion_tokens = req.maxTokens;
    }
    const send = async (body: ChatCompletionCreateParamsNonStreaming) =>
      toReply(await client.chat.completions.create(body, { signal, timeout: timeoutMs, maxRetries: 0 }));
    const asText = () =>
      send({
        ...base,
        messages: messages(
          req,
          `\n\nAnswer with one JSON object and nothing else (no prose, no code fences). It must match this JSON Schema:\n${JSON.stringify(wire.schema)}`,
        ),
      });

    if (textOnly.has(key)) return asText();
    let first: ProviderReply;
    try {
      first = await send({
        ...base,
        messages: messages(req),
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: req.schemaName,
            ...(req.schemaDescription ? { description: req.schemaDescription } : {}),
            schema: wire.strict ?? wire.schema,
            strict: wire.strict !== undefined,
          },
        },
      });
    } catch (err) {
      const e = toLlmError(err, label);
      if (!compatible || e.kind !== 'bad_request') throw e;
      const reply = await asText();
      textOnly.add(key);
      return reply;
    }
    if (!compatible || looksLikeJson(first.text)) return first;
    const second = await asText().catch((err: unknown) => {
      const { promptTokens, completionTokens, cachedTokens } = first;
      throw withSpent(toLlmError(err, label), {
        promptTokens,
        completionTokens,
        cachedTokens,
        model: label,
        ms: 0,
        calls: 1,
      });
    });
    textOnly.add(key);
    return {
      text: second.text,
      promptTokens: first.promptTokens + second.promptTokens,
      completionTokens: first.completionTokens + second.completionTokens,
      cachedTokens: first.cachedTokens + second.cachedTokens,
      calls: 2,
    };
  };
}

function toReply(res: ChatCompletion): ProviderReply {
  const message = res.choices[0]?.message;
  const reply = {
    text: message?.content ?? '',
    promptTokens: res.usage?.prompt_tokens ?? 0,
    completionTokens: res.usage?.completion_tokens ?? 0,
    cachedTokens: res.usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
  // A refusal is billed like any answer: its tokens travel on the error.
  if (message?.refusal)
    throw withSpent(new LlmError('invalid_output', 'the model refused to answer'), {
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      cachedTokens: reply.cachedTokens,
      model: res.model,
      ms: 0,
      calls: 1,
    });
  return reply;
}
