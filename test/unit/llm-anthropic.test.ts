import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
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

describe('Anthropic client through the real SDK', () => {
  it('forces a tool call with the schema, caches the system prompt, and counts cached tokens', async () => {
    llm.setHandler(() => ({ json: { elementId: 3, reason: 'tool' } }));
    const client = createLlmClient(anthropic());
    const fresh = { ...ask, system: `Pick one element. (${Math.random()})` };
    const first = await client.generate(fresh);
    const second = await client.generate(fresh);
    expect(first.value).toEqual({ elementId: 3, reason: 'tool' });
    const sent = llm.requests[0]!;
    // The SDK sends the key as x-api-key or, in recent versions, as a bearer token.
    expect(sent.headers['x-api-key'] ?? sent.headers.authorization).toMatch(/sk-ant-test$/);
    expect(sent.schemaName).toBe('pick');
    const body = sent.body as {
      tool_choice: { type: string; name: string };
      tools: { name: string; input_schema: { type: string; required: string[] } }[];
      system: { type: string; text: string; cache_control?: { type: string } }[];
    };
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'pick' });
    expect(body.tools[0]).toMatchObject({ name: 'pick', input_schema: { type: 'object' } });
    // Anthropic takes the schema as is: optional stays optional.
    expect(body.tools[0]!.input_schema.required).toEqual(['elementId', 'reason']);
    expect(body.system).toEqual([{ type: 'text', text: fresh.system, cache_control: { type: 'ephemeral' } }]);
    expect(first.usage.cachedTokens).toBe(0);
    expect(second.usage.cachedTokens).toBeGreaterThan(0);
    expect(second.usage.promptTokens).toBe(first.usage.promptTokens);
    expect(second.usage.costUsd).toBeLessThan(first.usage.costUsd!);
  });

  it('sends images as base64 blocks', async () => {
    llm.push({ json: { elementId: null, reason: 'none' } });
    await createLlmClient(anthropic()).generate(withImage);
    const sent = llm.requests[0]!;
    expect(sent.images).toBe(1);
    expect(JSON.stringify(sent.body.messages)).toContain(
      JSON.stringify({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } }),
    );
  });

  it('retries an overloaded API (529) and repairs a bad tool input', async () => {
    llm.push(
      { status: 529 },
      { malformed: '{"elementId": "one"}' },
      { json: { elementId: 1, reason: 'ok' } },
    );
    const res = await createLlmClient(anthropic()).generate(ask);
    expect(res.value.elementId).toBe(1);
    expect(res.usage.calls).toBe(2);
    expect(llm.requests).toHaveLength(3);
  });

  it('maps refusals and timeouts to their kinds, retrying only the timeout', async () => {
    llm.push({ status: 401 });
    const auth = await failure(createLlmClient(anthropic()).generate(ask));
    expect(auth).toBeInstanceOf(LlmError);
    expect(auth).toMatchObject({ kind: 'auth', status: 401 });
    expect(llm.requests).toHaveLength(1);
    // A timeout long enough for each request to reach the server on a busy machine, a reply far later.
    llm.setHandler(() => ({ delayMs: 5000, reply: { json: { elementId: 1, reason: 'late' } } }));
    const slow = await failure(createLlmClient(anthropic({ timeoutMs: 1000, maxRetries: 1 })).generate(ask));
    expect(slow.kind).toBe('timeout');
    expect(llm.requests).toHaveLength(3);
  });
});
