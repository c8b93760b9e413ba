import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseReply } from '../../lib/llm/client.ts';
import {
  noModelError,
  parseModelName,
  resolveFallbackConfig,
  resolveModelConfig,
} from '../../lib/llm/config.ts';
import {
  firstJsonObject,
  restoreAbsent,
  toWireSchema,
  withoutIntegerLimits,
} from '../../lib/llm/json-schema.ts';
import { costOf } from '../../lib/llm/pricing.ts';
import { backoffDelay, parseRetryAfter, withRetry } from '../../lib/llm/retry.ts';
import { addUsage, emptyUsage, LlmError } from '../../lib/llm/types.ts';

describe('model names and configuration', () => {
  it('parses provider/model names and rejects others naming the expected form', () => {
    expect(parseModelName('openai/gpt-4.1-mini')).toEqual({ provider: 'openai', model: 'gpt-4.1-mini' });
    expect(parseModelName('openai-compatible/meta/llama-3')).toEqual({
      provider: 'openai-compatible',
      model: 'meta/llama-3',
    });
    for (const bad of ['gpt-4', 'google/gemini', 'openai/', '/x']) {
      const err = (() => {
        try {
          parseModelName(bad);
        } catch (e) {
          return e as LlmError;
        }
      })();
      expect(err?.message).toMatch(/"provider\/model".*openai, anthropic, openai-compatible/);
    }
  });

  it('is undefined with nothing configured, and defaults from whichever provider key is set', () => {
    expect(resolveModelConfig(undefined, {})).toBeUndefined();
    expect(resolveModelConfig({}, { BROWSERFN_MODEL: '  ' })).toBeUndefined();
    expect(resolveModelConfig(undefined, { OPENAI_API_KEY: 'k' })).toEqual({
      provider: 'openai',
      model: 'gpt-4.1-mini',
      apiKey: 'k',
    });
    expect(resolveModelConfig(undefined, { ANTHROPIC_API_KEY: 'a' })).toEqual({
      provider: 'anthropic',
      model: 'claude-haiku-4-5',
      apiKey: 'a',
    });
  });

  it('lets the call win over env, and takes each provider its own key and URL', () => {
    const env = {
      BROWSERFN_MODEL: 'openai/gpt-4.1',
      OPENAI_API_KEY: 'o',
      OPENAI_BASE_URL: 'https://proxy.example/v1',
      ANTHROPIC_API_KEY: 'a',
    };
    expect(resolveModelConfig(undefined, env)).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
      apiKey: 'o',
      baseURL: 'https://proxy.example/v1',
    });
    expect(resolveModelConfig({ model: 'anthropic/claude-sonnet-4-6' }, env)).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-6',
      apiKey: 'a',
    });
    expect(resolveModelConfig({ apiKey: 'call', baseURL: 'http://gw/v1' }, env)).toMatchObject({
      apiKey: 'call',
      baseURL: 'http://gw/v1',
    });
  });

  it('keeps BROWSERFN_MODEL_* settings to the configured provider and openai-compatible models', () => {
    const env = {
      BROWSERFN_MODEL: 'openai-compatible/llama3.1',
      BROWSERFN_MODEL_BASE_URL: 'http://localhost:11434/v1',
      BROWSERFN_MODEL_API_KEY: 'local',
      OPENAI_API_KEY: 'o',
      BROWSERFN_MODEL_TIMEOUT_MS: '5000',
      BROWSERFN_MODEL_MAX_RETRIES: '0',
    };
    expect(resolveModelConfig(undefined, env)).toEqual({
      provider: 'openai-compatible',
      model: 'llama3.1',
      apiKey: 'local',
      baseURL: 'http://localhost:11434/v1',
      timeoutMs: 5000,
      maxRetries: 0,
    });
    // The local URL and key never go with an OpenAI model, nor the OpenAI key to the local server.
    expect(resolveModelConfig({ model: 'openai/gpt-4.1-mini' }, env)).toMatchObject({ apiKey: 'o' });
    expect(resolveModelConfig({ model: 'openai/gpt-4.1-mini' }, env)?.baseURL).toBeUndefined();
    expect(
      resolveModelConfig(undefined, {
        BROWSERFN_MODEL: 'openai-compatible/x',
        BROWSERFN_MODEL_BASE_URL: 'http://h/v1',
        OPENAI_API_KEY: 'o',
      })?.apiKey,
    ).toBeUndefined();
    expect(
      resolveModelConfig(undefined, {
        BROWSERFN_MODEL: 'anthropic/claude-haiku-4-5',
        BROWSERFN_MODEL_API_KEY: 'b',
      }),
    ).toMatchObject({ apiKey: 'b' });
  });

  it('never sends a server key to a URL the caller names, only to the endpoint it was set up for', () => {
    const env = {
      OPENAI_API_KEY: 'sk-server',
      ANTHROPIC_API_KEY: 'ant-server',
      BROWSERFN_MODEL: 'openai-compatible/llama',
      BROWSERFN_MODEL_BASE_URL: 'http://models.internal:8000/v1',
      BROWSERFN_MODEL_API_KEY: 'generic-server',
    };
    for (const model of ['openai/gpt-4.1-mini', 'anthropic/claude-haiku-4-5', 'openai-compatible/llama']) {
      const config = resolveModelConfig({ model, baseURL: 'https://collector.test/v1' }, env);
      expect(config?.baseURL).toBe('https://collector.test/v1');
      expect(config?.apiKey).toBeUndefined();
    }
    // The caller's own key goes with the caller's URL.
    expect(
      resolveModelConfig(
        { model: 'openai/gpt-4.1-mini', baseURL: 'https://collector.test/v1', apiKey: 'mine' },
        env,
      )?.apiKey,
    ).toBe('mine');
    // Naming the very endpoint a key is for (written another way) still uses that key.
    expect(
      resolveModelConfig({ model: 'openai/gpt-4.1-mini', baseURL: 'HTTPS://api.openai.com:443/v1/' }, env)
        ?.apiKey,
    ).toBe('sk-server');
    expect(
      resolveModelConfig({ model: 'openai-compatible/llama', baseURL: 'http://models.internal:8000/v1' }, env)
        ?.apiKey,
    ).toBe('generic-server');
    expect(
      resolveModelConfig(
        { model: 'openai/gpt-4.1-mini', baseURL: 'https://proxy.example/v1' },
        { OPENAI_API_KEY: 'o', OPENAI_BASE_URL: 'https://proxy.example/v1' },
      )?.apiKey,
    ).toBe('o');
  });

  it('says what is missing for a named model', () => {
    expect(() => resolveModelConfig({ model: 'openai/gpt-4.1' }, {})).toThrow(/OPENAI_API_KEY/);
    expect(() => resolveModelConfig({ model: 'anthropic/claude-haiku-4-5' }, {})).toThrow(
      /ANTHROPIC_API_KEY/,
    );
    expect(() => resolveModelConfig({ model: 'openai-compatible/llama' }, {})).toThrow(
      /BROWSERFN_MODEL_BASE_URL/,
    );
    expect(() => resolveModelConfig({ model: 'gpt-4' }, {})).toThrow(/provider\/model/);
    // A gateway URL may do without a key.
    expect(resolveModelConfig({ model: 'openai/gpt-4.1', baseURL: 'http://gw/v1' }, {})).toEqual({
      provider: 'openai',
      model: 'gpt-4.1',
      baseURL: 'http://gw/v1',
    });
  });

  it('resolves the fallback model from BROWSERFN_FALLBACK_MODEL', () => {
    expect(resolveFallbackConfig({ OPENAI_API_KEY: 'o' })).toBeUndefined();
    expect(
      resolveFallbackConfig({
        BROWSERFN_FALLBACK_MODEL: 'anthropic/claude-haiku-4-5',
        ANTHROPIC_API_KEY: 'a',
      }),
    ).toEqual({ provider: 'anthropic', model: 'claude-haiku-4-5', apiKey: 'a' });
  });

  it('explains how to configure a model when there is none', () => {
    const err = noModelError();
    expect(err).toBeInstanceOf(LlmError);
    expect(err.kind).toBe('no_model');
    for (const name of ['BROWSERFN_MODEL', 'OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'BROWSERFN_MODEL_BASE_URL'])
      expect(err.message).toContain(name);
    expect(err.message).toContain('BROWSERFN_MODEL=openai/gpt-4.1-mini');
  });
});

describe('pricing and usage', () => {
  const million = { promptTokens: 1_000_000, completionTokens: 1_000_000, cachedTokens: 0 };
  it('prices known models, dated snapshots included, and nothing else', () => {
    expect(costOf('gpt-4.1-mini', million)).toBeCloseTo(2.0);
    expect(costOf('openai/gpt-4.1-mini-2025-04-14', million)).toBeCloseTo(2.0);
    expect(costOf('claude-haiku-4-5-20251001', million)).toBeCloseTo(6);
    expect(costOf('gpt-4.1-mini', { ...million, cachedTokens: 1_000_000 })).toBeCloseTo(0.1 + 1.6);
    expect(costOf('my-local-llama', million)).toBeUndefined();
    expect(costOf('gpt-4.1-experimental', million)).toBeUndefined();
  });

  it('adds usage, and drops the cost when part of the total was not priced', () => {
    const priced = { ...emptyUsage('openai/gpt-4.1-mini'), promptTokens: 10, calls: 1, costUsd: 0.5, ms: 5 };
    const unpriced = { ...emptyUsage('openai-compatible/x'), promptTokens: 10, calls: 1, ms: 5 };
    expect(addUsage(emptyUsage(), priced)).toMatchObject({ costUsd: 0.5, calls: 1, ms: 5 });
    expect(addUsage(priced, priced)).toMatchObject({ costUsd: 1, promptTokens: 20, calls: 2, ms: 10 });
    expect(addUsage(priced, unpriced).costUsd).toBeUndefined();
  });
});

describe('backoff', () => {
  const opts = { baseMs: 100, capMs: 1000 };
  it('is exponential with full jitter, capped, and honours retry-after', () => {
    expect(backoffDelay(1, opts, undefined, () => 1)).toBe(100);
    expect(backoffDelay(3, opts, undefined, () => 1)).toBe(400);
    expect(backoffDelay(3, opts, undefined, () => 0.5)).toBe(200);
    expect(backoffDelay(10, opts, undefined, () => 1)).toBe(1000);
    expect(backoffDelay(2, opts, undefined, () => 0)).toBe(0);
    expect(backoffDelay(1, opts, 2500, () => 1)).toBe(2500);
    expect(backoffDelay(4, opts, 10, () => 1)).toBe(800);
    expect(backoffDelay(1, { ...opts, retryAfterCapMs: 3000 }, 90_000, () => 0)).toBe(3000);
  });

  it('reads retry-after in seconds, as a date, and retry-after-ms', () => {
    expect(parseRetryAfter({ 'retry-after': '3' })).toBe(3000);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '3' })).toBe(250);
    expect(parseRetryAfter(new Headers({ 'retry-after': '1' }))).toBe(1000);
    const inFive = new Date(Date.now() + 5000).toUTCString();
    expect(parseRetryAfter({ 'retry-after': inFive })).toBeGreaterThan(3000);
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  it('retries only what may pass on a second try', async () => {
    let calls = 0;
    const flaky = () => {
      calls++;
      return calls < 3 ? Promise.reject(new LlmError('server', 'x', 500)) : Promise.resolve('ok');
    };
    expect(await withRetry(flaky, { retries: 3, baseMs: 1, capMs: 1 })).toBe('ok');
    expect(calls).toBe(3);
    calls = 0;
    const refused = () => {
      calls++;
      return Promise.reject(new LlmError('bad_request', 'x', 400));
    };
    await expect(withRetry(refused, { retries: 3, baseMs: 1, capMs: 1 })).rejects.toThrow();
    expect(calls).toBe(1);
  });
});

describe('schemas on the wire', () => {
  const Schema = z.object({
    id: z.number().nullable(),
    label: z.string().min(1).optional(),
    tags: z.array(z.string()).default([]),
    inner: z.object({ a: z.string().optional(), b: z.string().nullable().optional() }).optional(),
  });

  it('makes a strict twin: every property required, optional ones nullable, no extra keys', () => {
    const wire = toWireSchema(Schema);
    expect(wire.wrapped).toBe(false);
    const strict = wire.strict as {
      required: string[];
      additionalProperties: boolean;
      properties: Record<string, { anyOf?: { minLength?: number; type?: string }[] }>;
    };
    expect(strict.required).toEqual(['id', 'label', 'tags', 'inner']);
    expect(strict.additionalProperties).toBe(false);
    expect(strict.properties.label!.anyOf).toEqual([{ type: 'string' }, { type: 'null' }]);
    // The loose form keeps what the caller wrote.
    expect(wire.schema.required).toEqual(['id']);
  });

  it('cannot make free-form records strict, so sends them loose', () => {
    expect(toWireSchema(z.object({ data: z.record(z.string(), z.string()) })).strict).toBeUndefined();
    expect(toWireSchema(z.object({ any: z.unknown() })).strict).toBeUndefined();
  });

  it('turns forced nulls back into absent fields, but keeps nulls that are values', () => {
    const wire = toWireSchema(Schema);
    const raw = { id: null, label: null, tags: null, inner: { a: null, b: null } };
    expect(restoreAbsent(raw, wire.schema)).toEqual({ id: null, inner: { b: null } });
    expect(parseReply(JSON.stringify(raw), wire, Schema)).toEqual({
      ok: true,
      value: { id: null, tags: [], inner: { b: null } },
    });
  });

  it('finds the JSON object in prose and reports validation problems by path', () => {
    expect(firstJsonObject('Here: {"a": "}{", "b": {"c": 1}} done')).toBe('{"a": "}{", "b": {"c": 1}}');
    expect(firstJsonObject('{broken} then {"ok": true}')).toBe('{"ok": true}');
    expect(firstJsonObject('nothing')).toBeUndefined();
    const wire = toWireSchema(Schema);
    expect(parseReply('', wire, Schema)).toEqual({ ok: false, problem: 'the reply was empty' });
    const bad = parseReply('```json\n{"id": "x", "inner": {"a": 2}}\n```', wire, Schema);
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problem).toMatch(/^id: .*; inner\.a: /);
  });
});

describe('wire schema size', () => {
  it('leaves out the safe-integer bounds zod writes for .int(), and only those', () => {
    const wire = toWireSchema(z.object({ id: z.number().int(), n: z.number().int().min(1).max(5) }));
    const props = (wire.schema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(props.id).toEqual({ type: 'integer' });
    expect(props.n).toMatchObject({ type: 'integer', minimum: 1, maximum: 5 });
    expect(withoutIntegerLimits({ minimum: Number.MIN_SAFE_INTEGER, maximum: 3 })).toEqual({ maximum: 3 });
  });

  it('converts one schema object once and gives every caller the same answer', () => {
    const schema = z.object({ a: z.string() });
    expect(toWireSchema(schema)).toBe(toWireSchema(schema));
    expect(toWireSchema(z.object({ a: z.string() }))).toEqual(toWireSchema(schema));
  });
});
