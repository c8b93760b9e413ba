import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmClient } from '../../lib/llm/client.ts';
import { noModelError, parseModelName, resolveModelConfig } from '../../lib/llm/config.ts';
import { costOf } from '../../lib/llm/pricing.ts';
import { backoffDelay, parseRetryAfter } from '../../lib/llm/retry.ts';
import { LlmError, type ModelConfig } from '../../lib/llm/types.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';

const Answer = z.object({
  elementId: z.number().int().nullable(),
  reason: z.string(),
  note: z.string().optional(),
});
const ask = {
  system: 'Pick one.',
  messages: [{ role: 'user' as const, content: 'Page: [3] button: Go' }],
  schema: Answer,
  schemaName: 'pick',
};

let llm: ScriptedModel;
beforeAll(async () => {
  llm = await startScriptedModel();
});
afterAll(async () => {
  await llm?.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.setHandler(undefined);
});

const openai = (extra: Partial<ModelConfig> = {}): ModelConfig => ({
  provider: 'openai',
  model: 'gpt-4.1-mini',
  baseURL: llm.openaiBaseURL,
  apiKey: 'sk-test',
  backoffMs: 20,
  ...extra,
});
const anthropic = (extra: Partial<ModelConfig> = {}): ModelConfig => ({
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  baseURL: llm.anthropicBaseURL,
  apiKey: 'sk-ant-test',
  backoffMs: 20,
  ...extra,
});

describe('OpenAI client through the real SDK', () => {
  it('asks for JSON Schema structured output and returns the validated value with usage and cost', async () => {
    llm.push({ json: { elementId: 3, reason: 'named Go', note: null } });
    const res = await createLlmClient(openai()).generate(ask);
    expect(res.value).toEqual({ elementId: 3, reason: 'named Go' });
    const sent = llm.requests[0]!;
    const format = sent.body.response_format as {
      type: string;
      json_schema: { name: string; strict: boolean; schema: { required: string[] } };
    };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema.name).toBe('pick');
    expect(format.json_schema.strict).toBe(true);
    expect(format.json_schema.schema.required).toEqual(['elementId', 'reason', 'note']);
    expect(res.usage.promptTokens).toBeGreaterThan(10);
    expect(res.usage.completionTokens).toBeGreaterThan(3);
    expect(res.usage.calls).toBe(1);
    expect(res.usage.model).toBe('openai/gpt-4.1-mini');
    expect(res.usage.costUsd).toBeGreaterThan(0);
  });

  it('sends images as data URLs', async () => {
    llm.push({ json: { elementId: null, reason: 'none' } });
    await createLlmClient(openai()).generate({
      ...ask,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
          ],
        },
      ],
    });
    expect(llm.requests[0]!.images).toBe(1);
  });

  it('retries a 429 after the time retry-after asks for, then succeeds', async () => {
    llm.push({ status: 429, headers: { 'retry-after-ms': '150' } }, { json: { elementId: 3, reason: 'ok' } });
    const started = Date.now();
    const res = await createLlmClient(openai()).generate(ask);
    expect(res.value.elementId).toBe(3);
    expect(llm.requests).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('retries 500s and timeouts', async () => {
    llm.push(
      { status: 500 },
      { delayMs: 400, reply: { json: { elementId: 1, reason: 'late' } } },
      { json: { elementId: 2, reason: 'ok' } },
    );
    const res = await createLlmClient(openai({ timeoutMs: 150 })).generate(ask);
    expect(res.value.elementId).toBe(2);
    expect(llm.requests).toHaveLength(3);
  });

  it('does not retry a refused key', async () => {
    llm.push({ status: 401 });
    const err = await createLlmClient(openai())
      .generate(ask)
      .catch((e) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect(err.kind).toBe('auth');
    expect(llm.requests).toHaveLength(1);
  });

  it('repairs a malformed reply once, then gives a clear error when it stays wrong', async () => {
    llm.push({ malformed: '{"elementId": "three"' }, { json: { elementId: 3, reason: 'fixed' } });
    const fixed = await createLlmClient(openai()).generate(ask);
    expect(fixed.value.reason).toBe('fixed');
    expect(fixed.usage.calls).toBe(2);
    expect(llm.requests[1]!.text).toContain('does not fit the required shape');

    llm.push({ malformed: 'no json here' }, { json: { elementId: 'x', reason: 1 } });
    const err = await createLlmClient(openai())
      .generate(ask)
      .catch((e) => e);
    expect(err.kind).toBe('invalid_output');
    expect(err.message).toMatch(/answered twice in the wrong shape: .*elementId/);
  });

  it('switches to the fallback model when retries run out, and logs the switch', async () => {
    const events: { msg: string; from?: unknown; to?: unknown }[] = [];
    llm.setHandler((r) =>
      r.provider === 'openai' ? { status: 503 } : { json: { elementId: 9, reason: 'fallback' } },
    );
    const client = createLlmClient(openai({ maxRetries: 1 }), {
      fallback: anthropic(),
      log: (e) => events.push(e),
    });
    const res = await client.generate(ask);
    expect(res.value.elementId).toBe(9);
    expect(res.model).toBe('anthropic/claude-sonnet-4-5');
    expect(events.find((e) => e.msg === 'switching to fallback model')).toMatchObject({
      from: 'openai/gpt-4.1-mini',
      to: 'anthropic/claude-sonnet-4-5',
    });
    expect(llm.requests.map((r) => r.provider)).toEqual(['openai', 'openai', 'anthropic']);
  });
});

describe('OpenAI-compatible servers', () => {
  it('falls back to JSON in text when the server refuses json_schema', async () => {
    llm.setHandler((r) =>
      r.body.response_format
        ? { status: 400 }
        : { text: 'Sure! ```json\n{"elementId": 4, "reason": "text mode"}\n```' },
    );
    const client = createLlmClient({
      provider: 'openai-compatible',
      model: 'llama3.1',
      baseURL: llm.openaiBaseURL,
      backoffMs: 10,
    });
    const res = await client.generate(ask);
    expect(res.value).toEqual({ elementId: 4, reason: 'text mode' });
    expect(llm.requests[1]!.system).toContain('JSON Schema');
    expect(res.usage.costUsd).toBeUndefined();
    // Remembered: the next call goes straight to text mode.
    await client.generate(ask);
    expect(llm.requests[2]!.body.response_format).toBeUndefined();
  });
});

describe('Anthropic client through the real SDK', () => {
  it('forces a tool call with the schema, caches the system prompt, and counts cached tokens', async () => {
    llm.setHandler(() => ({ json: { elementId: 3, reason: 'tool' } }));
    const client = createLlmClient(anthropic());
    const fresh = { ...ask, system: `Pick one element. (${Math.random()})` };
    const first = await client.generate(fresh);
    const second = await client.generate(fresh);
    expect(first.usage.cachedTokens).toBe(0);
    expect(first.value).toEqual({ elementId: 3, reason: 'tool' });
    const body = llm.requests[0]!.body as {
      tool_choice: { type: string; name: string };
      tools: { name: string; input_schema: { type: string } }[];
      system: { cache_control?: { type: string } }[];
    };
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'pick' });
    expect(body.tools[0]!.input_schema.type).toBe('object');
    expect(body.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(second.usage.cachedTokens).toBeGreaterThan(0);
    expect(second.usage.costUsd).toBeLessThan(first.usage.costUsd!);
  });

  it('retries an overloaded Anthropic API', async () => {
    llm.push({ status: 529 }, { json: { elementId: 1, reason: 'ok' } });
    const res = await createLlmClient(anthropic()).generate(ask);
    expect(res.value.elementId).toBe(1);
  });
});

describe('configuration', () => {
  it('parses provider/model names and rejects others with the expected form', () => {
    expect(parseModelName('openai/gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(parseModelName('openai-compatible/meta/llama-3')).toEqual({
      provider: 'openai-compatible',
      model: 'meta/llama-3',
    });
    expect(() => parseModelName('gpt-4')).toThrow(/provider\/model/);
  });

  it('prefers the call over env, defaults from whichever key is set, and is undefined with nothing', () => {
    expect(resolveModelConfig(undefined, {})).toBeUndefined();
    expect(resolveModelConfig(undefined, { OPENAI_API_KEY: 'k' })).toMatchObject({
      provider: 'openai',
      model: 'gpt-4.1-mini',
    });
    expect(resolveModelConfig(undefined, { ANTHROPIC_API_KEY: 'k' })).toMatchObject({
      provider: 'anthropic',
    });
    expect(
      resolveModelConfig(
        { model: 'anthropic/claude-haiku-4-5' },
        { BROWSERFN_MODEL: 'openai/gpt-4.1', ANTHROPIC_API_KEY: 'a' },
      ),
    ).toMatchObject({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'a' });
    expect(() => resolveModelConfig({ model: 'openai/gpt-4.1' }, {})).toThrow(/OPENAI_API_KEY/);
    expect(() => resolveModelConfig({ model: 'openai-compatible/llama' }, {})).toThrow(
      /BROWSERFN_MODEL_BASE_URL/,
    );
    expect(noModelError().message).toMatch(/BROWSERFN_MODEL.*OPENAI_API_KEY.*ANTHROPIC_API_KEY/);
  });

  it('prices known models, dated variants included, and not unknown ones', () => {
    const usage = { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedTokens: 0 };
    expect(costOf('gpt-4.1-mini', usage)).toBeCloseTo(2.0);
    expect(costOf('claude-sonnet-4-5-20250929', usage)).toBeCloseTo(18);
    expect(costOf('my-local-llama', usage)).toBeUndefined();
  });

  it('computes backoff with full jitter, a cap, and retry-after', () => {
    const opts = { baseMs: 100, capMs: 1000 };
    expect(backoffDelay(1, opts, undefined, () => 1)).toBe(100);
    expect(backoffDelay(3, opts, undefined, () => 1)).toBe(400);
    expect(backoffDelay(10, opts, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(2, opts, undefined, () => 0)).toBe(0);
    expect(backoffDelay(1, opts, 2500, () => 1)).toBe(2500);
    expect(parseRetryAfter({ 'retry-after': '3' })).toBe(3000);
    expect(parseRetryAfter({ 'retry-after-ms': '250' })).toBe(250);
  });
});
