import type { z } from 'zod';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { abortedError, toLlmError } from './errors.ts';
import { firstJsonObject, restoreAbsent, toWireSchema } from './json-schema.ts';
import { costOf } from './pricing.ts';
import { isRetryable, withRetry } from './retry.ts';
import { spentOn, withSpent } from './spent.ts';
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
  type WireSchema,
} from './types.ts';

export type LlmLog = (event: { level: 'info' | 'warn'; msg: string; [k: string]: unknown }) => void;

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_RETRIES = 3;
const DEFAULT_BACKOFF_MS = 500;
const BACKOFF_CAP_MS = 20_000;
/** How much of a bad reply goes back to the model in the repair round. */
const REPAIR_ECHO_CHARS = 4000;

const nameOf = (c: ModelConfig) => `${c.provider}/${c.model}`;
/**
 * How a model's calls reach it: one provider call for a config, held to the guard when the caller
 * chose its URL. The Node server's goes through the SDKs on undici (client.ts); the edge worker's
 * through the runtime's fetch (web-client.ts).
 */
export type ProviderCalls = (config: ModelConfig, guard: GuardPolicy | undefined) => ProviderCall;

// Both providers accept only these characters in a schema / tool name.
const wireName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'answer';

export type Parsed<T> = { ok: true; value: T } | { ok: false; problem: string };

/**
 * Reply text → validated value: JSON (or the first JSON object in prose), strict-mode nulls turned
 * back into absent fields, the `{ value }` wrapper removed, then the caller's zod schema.
 */
export function parseReply<T>(text: string, wire: WireSchema, schema: z.ZodType<T>): Parsed<T> {
  if (!text.trim()) return { ok: false, problem: 'the reply was empty' };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    const inner = firstJsonObject(text);
    if (!inner) return { ok: false, problem: 'the reply was not valid JSON' };
    raw = JSON.parse(inner);
  }
  // Tolerate a model that answered a wrapped schema without the wrapper.
  const unwrap = (v: unknown) =>
    wire.wrapped && typeof v === 'object' && v !== null && !Array.isArray(v) && 'value' in v
      ? (v as { value: unknown }).value
      : v;
  const first = schema.safeParse(unwrap(raw));
  if (first.success) return { ok: true, value: first.data };
  const second = schema.safeParse(unwrap(restoreAbsent(raw, wire.schema)));
  if (second.success) return { ok: true, value: second.data };
  const issues = second.error.issues
    .slice(0, 8)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');
  return { ok: false, problem: issues };
}

function repairMessages(req: StructuredRequest<unknown>, bad: string, problem: string): ChatMessage[] {
  return [
    ...req.messages,
    { role: 'assistant', content: bad.slice(0, REPAIR_ECHO_CHARS) || '(empty)' },
    {
      role: 'user',
      content:
        `That answer does not fit the required shape. Problems: ${problem}. ` +
        'Send the whole answer again as one corrected JSON object in the required shape, and nothing else.',
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
    private readonly calls: ProviderCalls,
    guard?: GuardPolicy,
  ) {
    this.model = nameOf(config);
    this.call = calls(config, guard);
  }

  /** A reply's token counts as usage, priced when the provider's prices are known. */
  private usageOf(
    reply: Pick<Usage, 'promptTokens' | 'completionTokens' | 'cachedTokens'> & { calls?: number },
  ) {
    const usage: Usage = {
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      cachedTokens: reply.cachedTokens,
      model: this.model,
      ms: 0,
      calls: reply.calls ?? 1,
    };
    // A compatible server's model names say nothing about what it costs (often nothing).
    const cost = this.config.provider === 'openai-compatible' ? undefined : costOf(this.config.model, usage);
    if (cost !== undefined) usage.costUsd = cost;
    return usage;
  }

  /**
   * One request with retries; the tokens of every reply received are added to `total`, those of a
   * reply the adapter then rejected (a refusal) included.
   */
  private async once(req: StructuredRequest<unknown>, wire: WireSchema, total: { usage: Usage }) {
    const timeoutMs = this.config.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return withRetry(
      async () => {
        try {
          const reply = await this.call(req, wire, req.signal, timeoutMs);
          total.usage = addUsage(total.usage, this.usageOf(reply));
          return reply.text;
        } catch (err) {
          const spent = spentOn(err);
          if (spent) total.usage = addUsage(total.usage, this.usageOf(spent));
          const e = req.signal?.aborted ? abortedError(this.model) : toLlmError(err, this.model);
          // `total` holds it now; generate() puts the whole total on the error it throws.
          delete e.usage;
          throw e;
        }
      },
      {
        retries: this.config.maxRetries ?? DEFAULT_RETRIES,
        baseMs: this.config.backoffMs ?? DEFAULT_BACKOFF_MS,
        capMs: BACKOFF_CAP_MS,
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
    const started = performance.now();
    const total = { usage: emptyUsage(this.model) };
    const wire = toWireSchema(req.schema);
    const r: StructuredRequest<unknown> = { ...req, schemaName: wireName(req.schemaName) };
    const finish = (usage: Usage): Usage => ({ ...usage, ms: Math.round(performance.now() - started) });
    try {
      const text = await this.once(r, wire, total);
      let parsed = parseReply(text, wire, req.schema);
      if (!parsed.ok) {
        this.log?.({
          level: 'warn',
          msg: 'model reply failed validation; asking once for a repair',
          model: this.model,
        });
        const repaired = await this.once(
          { ...r, messages: repairMessages(r, text, parsed.problem) },
          wire,
          total,
        );
        parsed = parseReply(repaired, wire, req.schema);
        if (!parsed.ok)
          throw new LlmError(
            'invalid_output',
            `${this.model} answered in the wrong shape for "${req.schemaName}", again after a repair request: ${parsed.problem}`,
          );
      }
      return { value: parsed.value, usage: finish(total.usage), model: this.model };
    } catch (err) {
      // Whatever ends the call, the replies it received are on the error for the caller to count.
      const e = withSpent(toLlmError(err, this.model), finish(total.usage));
      // Retries are spent by now; only a provider in trouble (not a bad request, a refused key or a
      // caller's cancel) is a reason to try another model.
      if (!this.fallback || !isRetryable(e) || req.signal?.aborted) throw e;
      this.log?.({
        level: 'warn',
        msg: 'switching to fallback model',
        from: this.model,
        to: nameOf(this.fallback),
        reason: e.kind,
        status: e.status,
      });
      this.fallbackClient ??= new Client(this.fallback, undefined, this.log, this.calls);
      try {
        const res = await this.fallbackClient.generate(req);
        return { ...res, usage: finish(addUsage(total.usage, res.usage)) };
      } catch (fallbackErr) {
        // The fallback's own error says what it spent; the first model's replies are added to it.
        throw withSpent(toLlmError(fallbackErr, nameOf(this.fallback)), total.usage);
      }
    }
  }
}

/**
 * A model client with timeouts, retries with backoff, one repair round, usage + cost, and an
 * optional fallback, over the given provider calls.
 */
export function createStructuredClient(
  config: ModelConfig,
  calls: ProviderCalls,
  opts: {
    fallback?: ModelConfig;
    log?: LlmLog;
    /** The caller chose this model's URL: hold every connection it makes to the network guard. */
    guard?: GuardPolicy;
  } = {},
): LlmClient {
  return new Client(config, opts.fallback, opts.log, calls, opts.guard);
}
