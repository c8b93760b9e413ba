import Anthropic from '@anthropic-ai/sdk';
import { toLlmError } from './errors.ts';
import { cancelOperatorHeaders, type ModelFetch } from './transport.ts';
import type { ChatMessage, ModelConfig, ProviderCall, ProviderReply } from './types.ts';

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

/**
 * Anthropic messages with structured output by forced tool use: the schema is the tool's input,
 * and the model must call that tool. The system prompt is the static part of every op's prompt,
 * so it is marked for prompt caching; page content goes in the messages after it.
 */
export function anthropicCall(config: ModelConfig, http: ModelFetch, callerUrl = false): ProviderCall {
  const client = new Anthropic({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 0,
    fetch: http,
    // The operator's ANTHROPIC_CUSTOM_HEADERS are for its own endpoint, never a caller's.
    ...(callerUrl ? { defaultHeaders: cancelOperatorHeaders(process.env.ANTHROPIC_CUSTOM_HEADERS) } : {}),
  });
  const label = `anthropic/${config.model}`;
  return async (req, wire, signal, timeoutMs): Promise<ProviderReply> => {
    try {
      const res = await client.messages.create(
        {
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
        },
        { signal, timeout: timeoutMs, maxRetries: 0 },
      );
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
    } catch (err) {
      throw toLlmError(err, label);
    }
  };
}
