import OpenAI from 'openai';
import type {
  ChatCompletionContentPart,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { toLlmError } from './errors.ts';
import { strictify } from './json-schema.ts';
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
              content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
            },
    ),
  ];
}

/**
 * OpenAI chat completions with JSON Schema structured output. For OpenAI-compatible servers that
 * refuse `json_schema` (many local ones), falls back once — and for good — to JSON in plain text,
 * validated by the same schema downstream.
 */
export function openAiCall(config: ModelConfig): ProviderCall {
  const client = new OpenAI({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 0,
  });
  const label = `${config.provider}/${config.model}`;
  let textMode = false;
  return async (req, jsonSchema, signal): Promise<ProviderReply> => {
    const strict = strictify(jsonSchema);
    const base = {
      model: config.model,
      temperature: req.temperature ?? 0.1,
      ...(req.maxTokens ? { max_tokens: req.maxTokens } : {}),
    };
    const options = { signal, timeout: config.timeoutMs ?? 60_000, maxRetries: 0 };
    const asText = async () => {
      const res = await client.chat.completions.create(
        {
          ...base,
          messages: messages(
            req,
            `\n\nReply with one JSON object only, no prose, matching this JSON Schema:\n${JSON.stringify(jsonSchema)}`,
          ),
        },
        options,
      );
      return toReply(res);
    };
    try {
      if (textMode) return await asText();
      const res = await client.chat.completions.create(
        {
          ...base,
          messages: messages(req),
          response_format: {
            type: 'json_schema',
            json_schema: {
              name: req.schemaName,
              ...(req.schemaDescription ? { description: req.schemaDescription } : {}),
              schema: strict ?? jsonSchema,
              strict: !!strict,
            },
          },
        },
        options,
      );
      return toReply(res);
    } catch (err) {
      const e = toLlmError(err, label);
      if (config.provider === 'openai-compatible' && e.kind === 'bad_request' && !textMode) {
        textMode = true;
        try {
          return await asText();
        } catch (again) {
          throw toLlmError(again, label);
        }
      }
      throw e;
    }
  };
}

function toReply(res: OpenAI.Chat.Completions.ChatCompletion): ProviderReply {
  const choice = res.choices[0];
  const message = choice?.message;
  if (message?.refusal) throw new LlmError('invalid_output', `the model refused: ${message.refusal}`);
  return {
    text: message?.content ?? '',
    promptTokens: res.usage?.prompt_tokens ?? 0,
    completionTokens: res.usage?.completion_tokens ?? 0,
    cachedTokens: res.usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
}
