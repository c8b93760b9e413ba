import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from 'gpt-tokenizer';

/**
 * A stand-in for the remote model: speaks the OpenAI chat-completions and Anthropic messages wire
 * formats, so tests drive the real `openai` and `@anthropic-ai/sdk` clients against it. Replies
 * come from a queue or a function of the request; every request is recorded; token counts are
 * real (o200k_base), so benchmarks report true prompt sizes.
 */

export interface RecordedRequest {
  provider: 'openai' | 'anthropic';
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  system: string;
  /** All text of all messages, concatenated with newlines. */
  text: string;
  images: number;
  schemaName?: string;
  model: string;
}

export type ScriptedReply =
  | { json: unknown }
  | { text: string }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { malformed: string }
  | { delayMs: number; reply: ScriptedReply };

export type ReplyFn = (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModel {
  url: string;
  openaiBaseURL: string;
  anthropicBaseURL: string;
  requests: RecordedRequest[];
  push(...replies: ScriptedReply[]): void;
  setHandler(fn: ReplyFn | undefined): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function textOf(content: unknown): { text: string; images: number } {
  if (typeof content === 'string') return { text: content, images: 0 };
  if (!Array.isArray(content)) return { text: '', images: 0 };
  let text = '';
  let images = 0;
  for (const part of content) {
    if (!isObj(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') text += `${part.text}\n`;
    if (part.type === 'image' || part.type === 'image_url') images++;
  }
  return { text, images };
}

function record(
  provider: 'openai' | 'anthropic',
  path: string,
  req: http.IncomingMessage,
  body: Json,
): RecordedRequest {
  const messages = Array.isArray(body.messages) ? (body.messages as Json[]) : [];
  let system = '';
  let text = '';
  let images = 0;
  if (provider === 'anthropic') {
    const sys = body.system;
    system = typeof sys === 'string' ? sys : textOf(sys).text;
  }
  for (const m of messages) {
    const t = textOf(m.content);
    if (m.role === 'system') system += t.text;
    else text += `${t.text}\n`;
    images += t.images;
  }
  let schemaName: string | undefined;
  const format = body.response_format;
  if (isObj(format) && isObj(format.json_schema)) schemaName = String(format.json_schema.name);
  if (isObj(body.tool_choice) && typeof body.tool_choice.name === 'string')
    schemaName = body.tool_choice.name;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
  return {
    provider,
    path,
    headers,
    body,
    system,
    text,
    images,
    model: String(body.model ?? ''),
    ...(schemaName ? { schemaName } : {}),
  };
}

/** Prompt size as a tokenizer sees it: system + messages + the schema the provider is sent. */
function promptTokens(r: RecordedRequest): number {
  const schema =
    r.provider === 'openai'
      ? JSON.stringify(r.body.response_format ?? '')
      : JSON.stringify(r.body.tools ?? '');
  return countTokens(`${r.system}\n${r.text}\n${schema}`) + r.images * 765;
}

function openAiBody(r: RecordedRequest, content: string): Json {
  const completion = countTokens(content);
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: r.model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: promptTokens(r),
      completion_tokens: completion,
      total_tokens: promptTokens(r) + completion,
      prompt_tokens_details: { cached_tokens: 0 },
    },
  };
}

function anthropicBody(r: RecordedRequest, reply: { input?: unknown; text?: string }): Json {
  const content =
    reply.input !== undefined
      ? [
          {
            type: 'tool_use',
            id: `toolu_${Math.random().toString(36).slice(2)}`,
            name: r.schemaName ?? 'answer',
            input: reply.input,
          },
        ]
      : [{ type: 'text', text: reply.text ?? '' }];
  const out = JSON.stringify(reply.input ?? reply.text ?? '');
  // The static system block is marked for caching: from the second call on, count it as a cache read.
  const cached = anthropicSeen.has(r.system) ? countTokens(r.system) : 0;
  anthropicSeen.add(r.system);
  return {
    id: `msg_${Math.random().toString(36).slice(2)}`,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content,
    stop_reason: reply.input !== undefined ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: promptTokens(r) - cached,
      output_tokens: countTokens(out),
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
    },
  };
}
const anthropicSeen = new Set<string>();

export async function startScriptedModel(
  opts: { script?: ScriptedReply[]; handler?: ReplyFn } = {},
): Promise<ScriptedModel> {
  const queue: ScriptedReply[] = [...(opts.script ?? [])];
  let handler = opts.handler;
  const requests: RecordedRequest[] = [];

  const answer = async (
    r: RecordedRequest,
    reply: ScriptedReply,
    res: http.ServerResponse,
  ): Promise<void> => {
    if ('delayMs' in reply) {
      await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      if (res.destroyed || res.writableEnded) return;
      return answer(r, reply.reply, res);
    }
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed || res.writableEnded) return;
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if ('status' in reply) {
      const error =
        r.provider === 'openai'
          ? { error: { message: `scripted ${reply.status}`, type: 'server_error', code: null } }
          : {
              type: 'error',
              error: {
                type: reply.status === 429 ? 'rate_limit_error' : 'api_error',
                message: `scripted ${reply.status}`,
              },
            };
      return send(reply.status, reply.body ?? error, reply.headers);
    }
    if (r.provider === 'openai') {
      const content =
        'json' in reply ? JSON.stringify(reply.json) : 'text' in reply ? reply.text : reply.malformed;
      return send(200, openAiBody(r, content));
    }
    if ('json' in reply) return send(200, anthropicBody(r, { input: reply.json }));
    if ('text' in reply) return send(200, anthropicBody(r, { text: reply.text }));
    // Malformed for a tool call: an input the schema will not accept.
    let input: unknown;
    try {
      input = JSON.parse(reply.malformed);
    } catch {
      input = { unexpected: reply.malformed };
    }
    return send(200, anthropicBody(r, { input }));
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const provider = path.endsWith('/chat/completions')
        ? 'openai'
        : path.endsWith('/messages')
          ? 'anthropic'
          : undefined;
      if (req.method !== 'POST' || !provider) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
        return;
      }
      let body: Json = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const r = record(provider, path, req, body);
      requests.push(r);
      try {
        const reply = queue.shift() ?? (handler ? await handler(r) : undefined);
        if (!reply)
          return await answer(
            r,
            { status: 500, body: { error: { message: 'scripted model: no reply queued and no handler' } } },
            res,
          );
        await answer(r, reply, res);
      } catch (err) {
        await answer(
          r,
          { status: 500, body: { error: { message: `scripted handler threw: ${(err as Error).message}` } } },
          res,
        );
      }
    });
  });
  const sockets = new Set<import('node:net').Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    push: (...replies) => {
      queue.push(...replies);
    },
    setHandler: (fn) => {
      handler = fn;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
