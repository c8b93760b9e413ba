import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { countTokens } from 'gpt-tokenizer';
import { recordComputerUse } from './cua-wire.ts';

/**
 * A stand-in for the remote model: speaks the OpenAI chat-completions and Anthropic messages wire
 * formats, so tests drive the real `openai` and `@anthropic-ai/sdk` clients against it. Replies
 * come from a queue, then from a function of the request; every request is recorded. Token counts
 * are real (o200k_base over system + messages + schema), so benchmarks report true prompt sizes;
 * images are estimated from their pixel size the way each provider bills them.
 */

export interface RecordedRequest {
  /** `google`: Gemini's generateContent; OpenAI's Responses API is `openai` with its own `path`. */
  provider: 'openai' | 'anthropic' | 'google';
  path: string;
  headers: Record<string, string>;
  /** The request body as sent (raw JSON). */
  body: Record<string, unknown>;
  system: string;
  /** All text of all messages (system excluded), concatenated with newlines. */
  text: string;
  images: number;
  /** json_schema name (OpenAI) or forced tool name (Anthropic). */
  schemaName?: string;
  model: string;
}

export type ScriptedReply =
  /** Structured answer: OpenAI → message content (JSON string); Anthropic → tool_use with this input. */
  | { json: unknown }
  /** Plain assistant text. */
  | { text: string }
  /** The provider's whole response body as given (computer-use turns; see cua-wire.ts). */
  | { raw: unknown }
  /** An HTTP error in the provider's error shape (or `body`), e.g. 429 with retry-after, 500, 529. */
  | { status: number; body?: unknown; headers?: Record<string, string> }
  /** Raw content that is not JSON or not the schema (Anthropic: tool input if it parses to an object, else text). */
  | { malformed: string }
  /**
   * Answer after a pause (to trip client timeouts). `reply` is the name to use: biome rejects object
   * literals with a `then` key (they look like promises); `then` is still understood.
   */
  | { delayMs: number; reply: ScriptedReply }
  | { delayMs: number; then: ScriptedReply };

export type ReplyFn = (req: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface ScriptedModel {
  url: string;
  /** For `new OpenAI({ baseURL })`. */
  openaiBaseURL: string;
  /** For `new Anthropic({ baseURL })`. */
  anthropicBaseURL: string;
  requests: RecordedRequest[];
  /**
   * The tokens this server billed in its chat-completions and messages replies (what a provider
   * would charge): the figure a client's own usage accounting must match.
   */
  served: { promptTokens: number; completionTokens: number; replies: number };
  push(...replies: ScriptedReply[]): void;
  /** `undefined` clears it. */
  setHandler(fn: ReplyFn | undefined): void;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const randomId = () => Math.random().toString(36).slice(2, 14);

/** Width × height of a base64 PNG or JPEG, read from its header; undefined when unreadable. */
function imageSize(base64: string): { w: number; h: number } | undefined {
  const b = Buffer.from(base64.slice(0, 80_000), 'base64');
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47)
    return { w: b.readUInt32BE(16), h: b.readUInt32BE(20) };
  if (b[0] !== 0xff || b[1] !== 0xd8) return undefined;
  for (let i = 2; i + 9 < b.length; ) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1] ?? 0;
    // SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker))
      return { h: b.readUInt16BE(i + 5), w: b.readUInt16BE(i + 7) };
    i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}

/** Image tokens as billed: OpenAI 512-px tiles after scaling (high detail), Anthropic pixels / 750. */
function imageTokens(provider: 'openai' | 'anthropic', base64: string): number {
  const size = imageSize(base64);
  if (!size) return 765;
  let { w, h } = size;
  if (provider === 'anthropic') {
    const scale = Math.min(1, 1568 / Math.max(w, h));
    return Math.ceil((w * scale * h * scale) / 750);
  }
  const fit = Math.min(1, 2048 / Math.max(w, h));
  [w, h] = [w * fit, h * fit];
  const shrink = Math.min(1, 768 / Math.min(w, h));
  return 85 + 170 * Math.ceil((w * shrink) / 512) * Math.ceil((h * shrink) / 512);
}

function partsOf(provider: 'openai' | 'anthropic', content: unknown) {
  if (typeof content === 'string') return { text: content, images: 0, imageTokens: 0 };
  const out = { text: '', images: 0, imageTokens: 0 };
  if (!Array.isArray(content)) return out;
  for (const part of content) {
    if (!isObj(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') out.text += `${part.text}\n`;
    let data: string | undefined;
    if (part.type === 'image_url' && isObj(part.image_url)) data = String(part.image_url.url).split(',')[1];
    if (part.type === 'image' && isObj(part.source)) data = String(part.source.data);
    if (part.type === 'image' || part.type === 'image_url') {
      out.images++;
      out.imageTokens += imageTokens(provider, data ?? '');
    }
  }
  return out;
}

function record(provider: 'openai' | 'anthropic', path: string, req: http.IncomingMessage, body: Json) {
  let system = provider === 'anthropic' ? partsOf(provider, body.system).text : '';
  let text = '';
  let images = 0;
  let imageTok = 0;
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObj(m)) continue;
    const p = partsOf(provider, m.content);
    if (m.role === 'system' || m.role === 'developer') system += p.text;
    else text += `${p.text}\n`;
    images += p.images;
    imageTok += p.imageTokens;
  }
  let schemaName: string | undefined;
  if (isObj(body.response_format) && isObj(body.response_format.json_schema))
    schemaName = String(body.response_format.json_schema.name);
  if (isObj(body.tool_choice) && typeof body.tool_choice.name === 'string')
    schemaName = body.tool_choice.name;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
  const recorded: RecordedRequest = {
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
  const schema = JSON.stringify(provider === 'openai' ? (body.response_format ?? '') : (body.tools ?? ''));
  const promptTokens = countTokens(`${system}\n${text}\n${schema}`) + imageTok;
  return { recorded, promptTokens };
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  529: 'overloaded_error',
};

function errorBody(provider: 'openai' | 'anthropic', status: number): Json {
  const type = ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  const message = `scripted ${status}`;
  return provider === 'openai'
    ? { error: { message, type, param: null, code: null } }
    : { type: 'error', error: { type, message } };
}

function openAiBody(model: string, promptTokens: number, content: string): Json {
  const completion = countTokens(content);
  return {
    id: `chatcmpl-${randomId()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    system_fingerprint: 'scripted',
  };
}

function anthropicBody(
  r: RecordedRequest,
  promptTokens: number,
  cached: number,
  out: { input: Json } | { text: string },
): Json {
  const content =
    'input' in out
      ? [{ type: 'tool_use', id: `toolu_${randomId()}`, name: r.schemaName ?? 'answer', input: out.input }]
      : [{ type: 'text', text: out.text }];
  return {
    id: `msg_${randomId()}`,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content,
    stop_reason: 'input' in out ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: promptTokens - cached,
      output_tokens: countTokens('input' in out ? JSON.stringify(out.input) : out.text),
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: 0,
    },
  };
}

export async function startScriptedModel(
  opts: { script?: ScriptedReply[]; handler?: ReplyFn } = {},
): Promise<ScriptedModel> {
  const queue: ScriptedReply[] = [...(opts.script ?? [])];
  let handler = opts.handler;
  const requests: RecordedRequest[] = [];
  // System prompts sent with cache_control before: a repeat is a cache read, as on the real API
  // (which also wants ≥1024 tokens and a 5-minute window; tests keep prompts short).
  const cachedSystems = new Set<string>();
  const served = { promptTokens: 0, completionTokens: 0, replies: 0 };
  const bill = (promptTokens: number, completionTokens: number) => {
    served.promptTokens += promptTokens;
    served.completionTokens += completionTokens;
    served.replies += 1;
  };

  const send = (
    res: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    if (res.destroyed || res.writableEnded) return;
    res.writeHead(status, {
      'content-type': 'application/json',
      'request-id': `req_${randomId()}`,
      ...headers,
    });
    res.end(JSON.stringify(body));
  };

  async function answer(
    r: RecordedRequest,
    promptTokens: number,
    reply: ScriptedReply,
    res: http.ServerResponse,
  ) {
    if ('delayMs' in reply) {
      await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
      return answer(r, promptTokens, 'reply' in reply ? reply.reply : reply.then, res);
    }
    if ('status' in reply)
      return send(
        res,
        reply.status,
        reply.body ?? errorBody(r.provider === 'anthropic' ? 'anthropic' : 'openai', reply.status),
        reply.headers,
      );
    if ('raw' in reply) return send(res, 200, reply.raw);
    if (r.provider === 'google')
      return send(res, 400, { error: { message: 'scripted model: Gemini takes raw replies only' } });
    if (r.provider === 'openai') {
      const content =
        'json' in reply ? JSON.stringify(reply.json) : 'text' in reply ? reply.text : reply.malformed;
      const body = openAiBody(r.model, promptTokens, content);
      const usage = body.usage as { prompt_tokens: number; completion_tokens: number };
      // A reply the client gave up on (its timeout) is never received, so never billed here.
      if (!res.destroyed) bill(usage.prompt_tokens, usage.completion_tokens);
      return send(res, 200, body);
    }
    const system = r.body.system;
    const cacheable = Array.isArray(system) && system.some((b) => isObj(b) && isObj(b.cache_control));
    const cached = cacheable && cachedSystems.has(r.system) ? countTokens(r.system) : 0;
    if (cacheable) cachedSystems.add(r.system);
    let out: { input: Json } | { text: string };
    if ('json' in reply) out = { input: isObj(reply.json) ? reply.json : { value: reply.json } };
    else if ('text' in reply) out = { text: reply.text };
    else {
      let parsed: unknown;
      try {
        parsed = JSON.parse(reply.malformed);
      } catch {
        parsed = undefined;
      }
      out = isObj(parsed) ? { input: parsed } : { text: reply.malformed };
    }
    const body = anthropicBody(r, promptTokens, cached, out);
    if (!res.destroyed) bill(promptTokens, (body.usage as { output_tokens: number }).output_tokens);
    return send(res, 200, body);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const path = (req.url ?? '').split('?')[0] ?? '';
      const provider =
        path.endsWith('/chat/completions') || path.endsWith('/responses')
          ? 'openai'
          : path.endsWith('/messages')
            ? 'anthropic'
            : path.includes(':generateContent')
              ? 'google'
              : undefined;
      if (req.method !== 'POST' || !provider)
        return send(res, 404, { error: { message: `scripted model: no route ${req.method} ${path}` } });
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      if (!isObj(body))
        return send(res, 400, errorBody(provider === 'anthropic' ? 'anthropic' : 'openai', 400));
      const { recorded, promptTokens } =
        provider === 'google' || path.endsWith('/responses')
          ? recordComputerUse(provider, path, req.headers, body)
          : record(provider, path, req, body);
      requests.push(recorded);
      try {
        const reply = queue.shift() ?? (handler ? await handler(recorded) : undefined);
        if (reply) return await answer(recorded, promptTokens, reply, res);
        send(res, 500, {
          error: {
            message: 'scripted model: no reply queued and no handler set (push() or setHandler() first)',
          },
        });
      } catch (err) {
        send(res, 500, {
          error: { message: `scripted model: the handler threw: ${(err as Error).message}` },
        });
      }
    });
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests,
    served,
    push: (...replies) => {
      queue.push(...replies);
    },
    setHandler: (fn) => {
      handler = fn;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
