import { anthropicCall } from './anthropic.ts';
import { toLlmError } from './errors.ts';
import { dropNulls, firstJsonObject, toJsonSchema } from './json-schema.ts';
import { openAiCall } from './openai.ts';
import { costOf } from './pricing.ts';
import { withRetry } from './retry.ts';
import {
  addUsage,
  type ChatMessage,
  emptyUsage,
  type LlmClient,
  LlmError,
  type ModelConfig,
  type ProviderCall,
  type StructuredRequest,
  type StructuredResult,
  type Usage,
} from './types.ts';

export type LlmLog = (event: { level: 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;

const nameOf = (c: ModelConfig) => `${c.provider}/${c.model}`;
const callFor = (c: ModelConfig): ProviderCall =>
  c.provider === 'anthropic' ? anthropicCall(c) : openAiCall(c);

type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/** Reply text → validated value: JSON (or the first JSON object in prose), then the zod schema. */
export function parseReply<T>(text: string, req: StructuredRequest<T>): Parsed<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const inner = firstJsonObject(text);
    if (!inner) return { ok: false, problem: 'the reply was not JSON' };
    try {
      raw = JSON.parse(inner);
    } catch {
      return { ok: false, problem: 'the reply was not valid JSON' };
    }
  }
  const first = req.schema.safeParse(raw);
  if (first.success) return { ok: true, value: first.data };
  // Strict mode turns optional fields into required nullable ones; absent is what we meant.
  const second = req.schema.safeParse(dropNulls(raw));
  if (second.success) return { ok: true, value: second.data };
  const issues = first.error.issues
    .slice(0, 5)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return { ok: false, problem: issues };
}

function repairMessages(req: StructuredRequest<unknown>, bad: string, problem: string): ChatMessage[] {
  return [
    ...req.messages,
    { role: 'assistant', content: bad.slice(0, 4000) },
    {
      role: 'user',
      content: `That answer does not fit the required shape (${problem}). Send the corrected answer as one JSON object in that shape, nothing else.`,
    },
  ];
}

class Client implements LlmClient {
  readonly model: string;
  private readonly call: ProviderCall;
  private fallbackClient?: Client;

  constructor(
    private readonly config: ModelConfig,
    private readonly fallback: ModelConfig | undefined,
    private readonly log: LlmLog | undefined,
  ) {
    this.model = nameOf(config);
    this.call = callFor(config);
  }

  /** One request with retries; usage is added to `total` for every attempt that got an answer. */
  private async once(
    req: StructuredRequest<unknown>,
    schema: Record<string, unknown>,
    total: { usage: Usage },
  ) {
    return withRetry(
      async () => {
        const controller = new AbortController();
        const onAbort = () => controller.abort();
        req.signal?.addEventListener('abort', onAbort, { once: true });
        const started = performance.now();
        try {
          const reply = await this.call(req, schema, controller.signal);
          const usage: Usage = {
            promptTokens: reply.promptTokens,
            completionTokens: reply.completionTokens,
            cachedTokens: reply.cachedTokens,
            model: this.model,
            ms: Math.round(performance.now() - started),
            calls: 1,
          };
          const cost = costOf(this.config.model, usage);
          if (cost !== undefined) usage.costUsd = cost;
          total.usage = addUsage(total.usage, usage);
          return reply.text;
        } catch (err) {
          total.usage = addUsage(total.usage, {
            ...emptyUsage(this.model),
            ms: Math.round(performance.now() - started),
          });
          throw toLlmError(err, this.model);
        } finally {
          req.signal?.removeEventListener('abort', onAbort);
        }
      },
      {
        retries: this.config.maxRetries ?? 3,
        baseMs: this.config.backoffMs ?? 500,
        capMs: 20_000,
        ...(req.signal ? { signal: req.signal } : {}),
        onRetry: (err, waitMs) =>
          this.log?.({
            level: 'info',
            msg: 'retrying model call',
            model: this.model,
            kind: err.kind,
            status: err.status,
            waitMs,
          }),
      },
    );
  }

  async generate<T>(req: StructuredRequest<T>): Promise<StructuredResult<T>> {
    const total = { usage: emptyUsage(this.model) };
    const schema = toJsonSchema(req.schema);
    const r = req as StructuredRequest<unknown>;
    try {
      const text = await this.once(r, schema, total);
      let parsed = parseReply(text, req);
      if (!parsed.ok) {
        // One repair round: show the model its answer and what is wrong with it.
        this.log?.({
          level: 'warn',
          msg: 'model reply failed validation; asking once for a repair',
          model: this.model,
        });
        const repaired = await this.once(
          { ...r, messages: repairMessages(r, text, parsed.problem) },
          schema,
          total,
        );
        parsed = parseReply(repaired, req);
        if (!parsed.ok)
          throw new LlmError(
            'invalid_output',
            `${this.model} answered twice in the wrong shape: ${parsed.problem}`,
          );
      }
      return { value: parsed.value, usage: total.usage, model: this.model };
    } catch (err) {
      const e = toLlmError(err, this.model);
      if (!this.fallback || e.kind === 'invalid_output' || e.kind === 'bad_request' || e.kind === 'no_model')
        throw e;
      this.log?.({
        level: 'warn',
        msg: 'switching to fallback model',
        from: this.model,
        to: nameOf(this.fallback),
        reason: e.kind,
      });
      this.fallbackClient ??= new Client(this.fallback, undefined, this.log);
      const res = await this.fallbackClient.generate(req);
      return { ...res, usage: addUsage(total.usage, res.usage) };
    }
  }
}

/** A model client with timeouts, retries with backoff, one repair round, usage + cost, and an optional fallback. */
export function createLlmClient(
  config: ModelConfig,
  opts: { fallback?: ModelConfig; log?: LlmLog } = {},
): LlmClient {
  return new Client(config, opts.fallback, opts.log);
}
