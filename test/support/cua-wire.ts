/**
 * The computer-use side of the scripted model: what OpenAI's Responses API and Gemini's
 * generateContent requests hold (recorded like chat requests), and each provider's computer-use
 * reply body as its SDK expects it, for tests to script turns with.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { countTokens } from 'gpt-tokenizer';
import type { RecordedRequest } from './llm-server.ts';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const rid = () => Math.random().toString(36).slice(2, 12);

/** Image tokens as billed per screenshot: OpenAI's 765 for a tile set this size, Gemini's 258. */
const IMAGE_TOKENS = { openai: 765, google: 258 };

export function recordComputerUse(
  provider: 'openai' | 'anthropic' | 'google',
  path: string,
  rawHeaders: IncomingHttpHeaders,
  body: Json,
): { recorded: RecordedRequest; promptTokens: number } {
  let system = '';
  let text = '';
  let images = 0;
  const addParts = (parts: unknown) => {
    for (const p of Array.isArray(parts) ? parts : []) {
      if (!isObj(p)) continue;
      if (typeof p.text === 'string') text += `${p.text}\n`;
      if (p.type === 'input_image' || isObj(p.inlineData)) images++;
      if (isObj(p.functionCall))
        text += `call ${String(p.functionCall.name)} ${JSON.stringify(p.functionCall.args ?? {})}\n`;
      if (isObj(p.functionResponse)) {
        text += `result of ${String(p.functionResponse.name)} ${JSON.stringify(p.functionResponse.response ?? {})}\n`;
        addParts(p.functionResponse.parts);
      }
    }
  };
  let model = String(body.model ?? '');
  if (provider === 'google') {
    model = /models\/([^:]+):/.exec(path)?.[1] ?? model;
    if (isObj(body.systemInstruction)) addParts((body.systemInstruction as Json).parts);
    system = text;
    text = '';
    for (const c of Array.isArray(body.contents) ? body.contents : []) if (isObj(c)) addParts(c.parts);
  } else {
    system = String(body.instructions ?? '');
    for (const item of Array.isArray(body.input) ? body.input : []) {
      if (!isObj(item)) continue;
      if (Array.isArray(item.content))
        addParts(item.content.map((c) => (isObj(c) && c.type === 'input_text' ? { text: c.text } : c)));
      if (item.type === 'computer_call_output') {
        images++;
        text += `screenshot for ${String(item.call_id)}${item.acknowledged_safety_checks ? ' (safety checks acknowledged)' : ''}\n`;
      }
    }
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(rawHeaders)) if (typeof v === 'string') headers[k] = v;
  const recorded: RecordedRequest = { provider, path, headers, body, system, text, images, model };
  const perImage = provider === 'google' ? IMAGE_TOKENS.google : IMAGE_TOKENS.openai;
  return {
    recorded,
    promptTokens: countTokens(`${system}\n${text}\n${JSON.stringify(body.tools ?? '')}`) + images * perImage,
  };
}

const usage = (r: RecordedRequest) => countTokens(`${r.system}\n${r.text}`) + r.images * 765;

/** An Anthropic message whose `computer` tool calls are `inputs` (or just text to end the task). */
export function anthropicComputerReply(r: RecordedRequest, inputs: Json[], text = ''): { raw: unknown } {
  const content = [
    ...(text ? [{ type: 'text', text }] : []),
    ...inputs.map((input) => ({ type: 'tool_use', id: `toolu_${rid()}`, name: 'computer', input })),
  ];
  return {
    raw: {
      id: `msg_${rid()}`,
      type: 'message',
      role: 'assistant',
      model: r.model,
      content,
      stop_reason: inputs.length ? 'tool_use' : 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: usage(r),
        output_tokens: countTokens(JSON.stringify(content)),
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    },
  };
}

/** A Responses API reply with one `computer_call` per action (or only text). */
export function openAiComputerReply(
  r: RecordedRequest,
  actions: Json[],
  text = '',
  safetyChecks: { id: string; code: string; message: string }[] = [],
): { raw: unknown } {
  const output = [
    ...actions.map((action) => ({
      type: 'computer_call',
      id: `cu_${rid()}`,
      call_id: `call_${rid()}`,
      action,
      pending_safety_checks: safetyChecks,
      status: 'completed',
    })),
    ...(text
      ? [
          {
            type: 'message',
            id: `msg_${rid()}`,
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ]
      : []),
  ];
  const prompt = usage(r);
  const completion = countTokens(JSON.stringify(output));
  return {
    raw: {
      id: `resp_${rid()}`,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'completed',
      model: r.model,
      output,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: r.body.tools,
      usage: {
        input_tokens: prompt,
        output_tokens: completion,
        total_tokens: prompt + completion,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    },
  };
}

/** A Gemini reply calling predefined computer-use functions (grid coordinates 0–999), or only text. */
export function geminiComputerReply(
  r: RecordedRequest,
  calls: { name: string; args: Json }[],
  text = '',
): { raw: unknown } {
  const parts = [
    ...(text ? [{ text }] : []),
    ...calls.map((c) => ({ functionCall: { name: c.name, args: c.args } })),
  ];
  const prompt = usage(r);
  return {
    raw: {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: prompt,
        candidatesTokenCount: countTokens(JSON.stringify(parts)),
        totalTokenCount: prompt,
      },
      modelVersion: r.model,
    },
  };
}

/** The page URL the agent last reported to the model (its "Current page:" line or Gemini's `url`). */
export function lastUrlIn(r: RecordedRequest): string {
  const body = JSON.stringify(r.body);
  const all = [...body.matchAll(/Current page: ([^\\"\s]+)|"url":"([^"]+)"/g)];
  const last = all.at(-1);
  return last?.[1] ?? last?.[2] ?? '';
}

/** The size of the screenshot the agent declared (Anthropic / OpenAI tools); undefined for Gemini. */
export function displayOf(r: RecordedRequest): { width: number; height: number } | undefined {
  const tool = (Array.isArray(r.body.tools) ? r.body.tools[0] : undefined) as Json | undefined;
  if (!tool) return undefined;
  const width = Number(tool.display_width_px ?? tool.display_width);
  const height = Number(tool.display_height_px ?? tool.display_height);
  return Number.isFinite(width) && Number.isFinite(height) ? { width, height } : undefined;
}
