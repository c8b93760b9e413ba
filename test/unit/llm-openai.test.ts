import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createLlmClient } from '../../lib/llm/client.ts';
import { LlmError, type ModelConfig } from '../../lib/llm/types.ts';
import { ask, PNG, withImage } from '../support/llm-requests.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';

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
  model: 'claude-haiku-4-5',
  baseURL: llm.anthropicBaseURL,
  apiKey: 'sk-ant-test',
  backoffMs: 20,
  ...extra,
});
const failure = (p: Promise<unknown>) =>
  p.then(() => expect.fail('expected a failure')).catch((e: LlmError) => e);

describe('OpenAI client through the real SDK', () => {
  it('asks for strict JSON Schema output and returns the validated value with usage and cost', async () => {
    llm.push({ json: { elementId: 3, reason: 'named Go', note: null } });
    const res = await createLlmClient(openai()).generate(ask);
    expect(res.value).toEqual({ elementId: 3, reason: 'named Go' });
    const sent = llm.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-test');
    expect(sent.system).toBe(ask.system);
    const format = sent.body.response_format as {
      type: string;
      json_schema: {
        name: string;
        strict: boolean;
        schema: { required: string[]; additionalProperties: boolean };
      };
    };
    expect(format.type).toBe('json_schema');
    expect(format.json_schema).toMatchObject({ name: 'pick', strict: true });
    expect(format.json_schema.schema.required).toEqual(['elementId', 'reason', 'note']);
    expect(format.json_schema.schema.additionalProperties).toBe(false);
    expect(res.usage).toMatchObject({ calls: 1, cachedTokens: 0, model: 'openai/gpt-4.1-mini' });
    expect(res.usage.promptTokens).toBeGreaterThan(30);
    expect(res.usage.completionTokens).toBeGreaterThan(5);
    expect(res.usage.costUsd).toBeCloseTo(
      (res.usage.promptTokens * 0.4 + res.usage.completionTokens * 1.6) / 1e6,
      12,
    );
    expect(res.model).toBe('openai/gpt-4.1-mini');
  });

  it('sends images as data URLs', async () => {
    llm.push({ json: { elementId: null, reason: 'none' } });
    const res = await createLlmClient(openai()).generate(withImage);
    const sent = llm.requests[0]!;
    expect(sent.images).toBe(1);
    expect(JSON.stringify(sent.body.messages)).toContain(`"url":"data:image/png;base64,${PNG}"`);
    // A 1×1 image is one high-detail tile: 85 + 170 tokens.
    expect(res.usage.promptTokens).toBeGreaterThan(255);
  });

  it('retries a 429 after the time retry-after asks for (ms and seconds), then succeeds', async () => {
    const events: { msg: string; status?: unknown }[] = [];
    llm.push(
      { status: 429, headers: { 'retry-after-ms': '150' } },
      { status: 429, headers: { 'retry-after': '0.1' } },
      { json: { elementId: 3, reason: 'ok' } },
    );
    const started = Date.now();
    const res = await createLlmClient(openai(), { log: (e) => events.push(e) }).generate(ask);
    expect(res.value.elementId).toBe(3);
    expect(llm.requests).toHaveLength(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(240);
    expect(res.usage.ms).toBeGreaterThanOrEqual(240);
    expect(res.usage.calls).toBe(1);
    expect(events.filter((e) => e.msg === 'retrying model call').map((e) => e.status)).toEqual([429, 429]);
  });

  it('retries a 500, then a timeout, then succeeds', async () => {
    llm.push(
      { status: 500 },
      { delayMs: 6000, reply: { json: { elementId: 1, reason: 'late' } } },
      { json: { elementId: 2, reason: 'ok' } },
    );
    // The timeout leaves a busy machine time to answer the quick replies; the slow one is far past it.
    const res = await createLlmClient(openai({ timeoutMs: 2000 })).generate(ask);
    expect(res.value.elementId).toBe(2);
    expect(llm.requests).toHaveLength(3);
  });

  it('gives up with the last error kind when retries run out', async () => {
    llm.setHandler(() => ({ delayMs: 5000, reply: { json: { elementId: 1, reason: 'late' } } }));
    const err = await failure(createLlmClient(openai({ timeoutMs: 1000, maxRetries: 1 })).generate(ask));
    expect(err).toBeInstanceOf(LlmError);
    expect(err.kind).toBe('timeout');
    expect(llm.requests).toHaveLength(2);
  });

  it('does not retry a refused key or a bad request', async () => {
    llm.push({ status: 401 }, { status: 400 });
    const auth = await failure(createLlmClient(openai()).generate(ask));
    expect(auth).toMatchObject({ kind: 'auth', status: 401 });
    const bad = await failure(createLlmClient(openai()).generate(ask));
    expect(bad).toMatchObject({ kind: 'bad_request', status: 400 });
    expect(llm.requests).toHaveLength(2);
  });

  it('repairs a malformed reply once, showing the model its answer and the problems', async () => {
    const events: { msg: string }[] = [];
    llm.push(
      { malformed: '{"elementId": "three", "reason": "x"}' },
      { json: { elementId: 3, reason: 'fixed' } },
    );
    const fixed = await createLlmClient(openai(), { log: (e) => events.push(e) }).generate(ask);
    expect(fixed.value.reason).toBe('fixed');
    expect(fixed.usage.calls).toBe(2);
    const repair = llm.requests[1]!;
    expect(repair.text).toContain('"elementId": "three"');
    expect(repair.text).toMatch(/does not fit the required shape.*elementId/);
    expect(events.map((e) => e.msg)).toContain('model reply failed validation; asking once for a repair');
    // Nothing the model saw is logged.
    expect(JSON.stringify(events)).not.toContain('Go');
  });

  it('gives a clear invalid_output error when the repaired reply is still wrong', async () => {
    llm.push({ malformed: 'no json here' }, { json: { elementId: 'x', reason: 1 } });
    const err = await failure(createLlmClient(openai()).generate(ask));
    expect(err.kind).toBe('invalid_output');
    expect(err.message).toMatch(
      /openai\/gpt-4.1-mini answered in the wrong shape for "pick".*repair.*elementId/,
    );
    expect(llm.requests).toHaveLength(2);
  });

  it('switches to the fallback model when retries run out, logs the switch, and sums usage', async () => {
    const events: { level: string; msg: string }[] = [];
    llm.setHandler((r) =>
      r.provider === 'openai' ? { status: 503 } : { json: { elementId: 9, reason: 'fallback' } },
    );
    const client = createLlmClient(openai({ maxRetries: 1 }), {
      fallback: anthropic(),
      log: (e) => events.push(e),
    });
    const res = await client.generate(ask);
    expect(res.value.elementId).toBe(9);
    expect(res.model).toBe('anthropic/claude-haiku-4-5');
    expect(events.find((e) => e.msg === 'switching to fallback model')).toEqual({
      level: 'warn',
      msg: 'switching to fallback model',
      from: 'openai/gpt-4.1-mini',
      to: 'anthropic/claude-haiku-4-5',
      reason: 'server',
      status: 503,
    });
    expect(llm.requests.map((r) => r.provider)).toEqual(['openai', 'openai', 'anthropic']);
    expect(res.usage).toMatchObject({ calls: 1, model: 'anthropic/claude-haiku-4-5' });
  });

  it('does not fall back on a refused key', async () => {
    llm.setHandler((r) =>
      r.provider === 'openai' ? { status: 401 } : { json: { elementId: 9, reason: 'x' } },
    );
    const err = await failure(createLlmClient(openai(), { fallback: anthropic() }).generate(ask));
    expect(err.kind).toBe('auth');
    expect(llm.requests).toHaveLength(1);
  });

  it('stops at once when the caller cancels: no retry, no fallback', async () => {
    llm.setHandler(() => ({ delayMs: 1500, reply: { json: { elementId: 1, reason: 'late' } } }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const served = llm.served.replies;
    const err = await failure(
      createLlmClient(openai(), { fallback: anthropic() }).generate({ ...ask, signal: controller.signal }),
    );
    expect(err.message).toMatch(/cancelled by the caller/);
    // It did not wait for the late reply (the server had not sent one when the error came), however
    // slow the machine: measured on the server's side, not by a stopwatch.
    expect(llm.served.replies).toBe(served);
    expect(llm.requests).toHaveLength(1);
  });

  it('wraps a non-object schema for the wire and unwraps the answer', async () => {
    const List = z.array(z.object({ name: z.string(), price: z.number().optional() }));
    llm.push({
      json: {
        value: [
          { name: 'Tea', price: null },
          { name: 'Cake', price: 3 },
        ],
      },
    });
    const res = await createLlmClient(openai()).generate({
      ...ask,
      schema: List,
      schemaName: 'product list',
    });
    expect(res.value).toEqual([{ name: 'Tea' }, { name: 'Cake', price: 3 }]);
    const format = llm.requests[0]!.body.response_format as {
      json_schema: { name: string; schema: { type: string } };
    };
    expect(format.json_schema.name).toBe('product_list');
    expect(format.json_schema.schema.type).toBe('object');
  });

  it('reports no cost for a model without a known price', async () => {
    llm.push({ json: { elementId: 1, reason: 'x' } });
    const res = await createLlmClient(openai({ model: 'my-finetune-7' })).generate(ask);
    expect(res.usage.promptTokens).toBeGreaterThan(0);
    expect(res.usage.costUsd).toBeUndefined();
  });
});

describe('OpenAI-compatible servers', () => {
  const compatible = (model: string): ModelConfig => ({
    provider: 'openai-compatible',
    model,
    baseURL: llm.openaiBaseURL,
    backoffMs: 10,
  });

  it('falls back to JSON in text when the server refuses json_schema, and remembers it', async () => {
    llm.setHandler((r) =>
      r.body.response_format
        ? { status: 400 }
        : { text: 'Sure! ```json\n{"elementId": 4, "reason": "text mode"}\n```' },
    );
    const client = createLlmClient(compatible('llama3.1'));
    const res = await client.generate(ask);
    expect(res.value).toEqual({ elementId: 4, reason: 'text mode' });
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[1]!.system).toContain('JSON Schema');
    expect(llm.requests[1]!.system).toContain('"elementId"');
    expect(llm.requests[0]!.headers.authorization).toBe('Bearer not-needed');
    expect(res.usage.costUsd).toBeUndefined();
    await createLlmClient(compatible('llama3.1')).generate(ask);
    expect(llm.requests).toHaveLength(3);
    expect(llm.requests[2]!.body.response_format).toBeUndefined();
  });

  it('asks again in text when the server ignores json_schema and answers prose', async () => {
    llm.setHandler((r) =>
      r.body.response_format
        ? { text: 'The Go button, id 3.' }
        : { text: '{"elementId": 3, "reason": "from text"}' },
    );
    const res = await createLlmClient(compatible('qwen2.5')).generate(ask);
    expect(res.value).toEqual({ elementId: 3, reason: 'from text' });
    expect(res.usage.calls).toBe(2);
    expect(llm.requests).toHaveLength(2);
  });

  it('validates text-mode answers with the same schema (and repairs them)', async () => {
    llm.push({ status: 400 }, { text: '{"elementId": "4"}' }, { text: '{"elementId": 4, "reason": "ok"}' });
    const res = await createLlmClient(compatible('mistral')).generate(ask);
    expect(res.value).toEqual({ elementId: 4, reason: 'ok' });
    expect(llm.requests).toHaveLength(3);
  });
});

describe('model calls over HTTP', () => {
  const policy = { allowPrivate: false, allowHosts: [] };
  const sameOrigin = () => llm.openaiBaseURL.replace('127.0.0.1', 'localhost');
  const port = () => new URL(llm.url).port;

  it('never follows a redirect, with either SDK, and says what to do about it', async () => {
    const other = await startScriptedModel();
    try {
      other.setHandler(() => ({ json: { elementId: 9, reason: 'elsewhere' } }));
      for (const config of [openai(), anthropic()]) {
        llm.requests.length = 0;
        llm.push({ status: 307, body: {}, headers: { location: `${other.url}/elsewhere` } });
        const err = await failure(createLlmClient(config).generate(ask));
        expect(err).toMatchObject({ kind: 'bad_request', status: 307 });
        expect(err.message).toContain('do not follow redirects');
        // Not retried either: a redirect will not go away by asking again.
        expect(llm.requests).toHaveLength(1);
      }
      expect(other.requests).toHaveLength(0);
    } finally {
      await other.close();
    }
  });

  it('holds a caller-chosen URL to the guard at connect time: a name resolving to loopback gets no request', async () => {
    // localhost resolves from /etc/hosts: no query leaves the machine, and nothing is sent.
    const guarded = createLlmClient(openai({ baseURL: sameOrigin(), maxRetries: 2 }), { guard: policy });
    const err = await failure(guarded.generate(ask));
    expect(err.kind).toBe('bad_request');
    expect(err.message).toMatch(
      /blocked by the network guard: localhost resolves to (127\.0\.0\.1|::1) \(loopback/,
    );
    expect(llm.requests).toHaveLength(0);
  });

  it('sends the operator’s own SDK headers (custom headers, organization) only to the operator’s URL', async () => {
    const saved = {
      OPENAI_CUSTOM_HEADERS: process.env.OPENAI_CUSTOM_HEADERS,
      ANTHROPIC_CUSTOM_HEADERS: process.env.ANTHROPIC_CUSTOM_HEADERS,
      OPENAI_ORG_ID: process.env.OPENAI_ORG_ID,
    };
    process.env.OPENAI_CUSTOM_HEADERS = 'X-Gateway-Key: gw-operator-secret\nX-Team: ops';
    process.env.ANTHROPIC_CUSTOM_HEADERS = 'X-Gateway-Key: gw-operator-secret';
    process.env.OPENAI_ORG_ID = 'org-operator';
    try {
      llm.setHandler((r) =>
        r.provider === 'openai'
          ? { json: { elementId: 2, reason: 'ok', note: null } }
          : { json: { elementId: 2, reason: 'ok' } },
      );
      const allowed = { allowPrivate: false, allowHosts: [`localhost:${port()}`] };
      for (const config of [openai(), anthropic()]) {
        const url =
          config.provider === 'openai'
            ? sameOrigin()
            : llm.anthropicBaseURL.replace('127.0.0.1', 'localhost');
        llm.requests.length = 0;
        await createLlmClient({ ...config, baseURL: url }, { guard: allowed }).generate(ask);
        await createLlmClient(config).generate(ask);
        const [callers, operators] = [llm.requests[0]!.headers, llm.requests[1]!.headers];
        expect(callers['x-gateway-key'], config.provider).toBeUndefined();
        expect(callers['x-team']).toBeUndefined();
        expect(callers['openai-organization']).toBeUndefined();
        expect(operators['x-gateway-key'], config.provider).toBe('gw-operator-secret');
      }
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  it('lets a guarded URL through when the operator allows that host and port, and leaves the operator’s own URL alone', async () => {
    llm.setHandler(() => ({ json: { elementId: 2, reason: 'allowed' } }));
    const allowed = { allowPrivate: false, allowHosts: [`localhost:${port()}`] };
    const viaAllowed = await createLlmClient(openai({ baseURL: sameOrigin() }), { guard: allowed }).generate(
      ask,
    );
    expect(viaAllowed.value).toEqual({ elementId: 2, reason: 'allowed' });
    const unguarded = await createLlmClient(openai({ baseURL: sameOrigin() })).generate(ask);
    expect(unguarded.value).toEqual({ elementId: 2, reason: 'allowed' });
    expect(llm.requests).toHaveLength(2);
  });
});
