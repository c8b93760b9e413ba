/**
 * The model client the edge worker uses (lib/llm/web-client.ts): the runtime's fetch only, Anthropic
 * in its wire format without its SDK. Run here on Node's fetch against the scripted provider server;
 * test/e2e/edge-worker.test.ts runs the OpenAI path inside workerd.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LlmError, type ModelConfig } from '../../lib/llm/types.ts';
import { createWebLlmClient } from '../../lib/llm/web-client.ts';
import { ask } from '../support/llm-requests.ts';
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

describe('web model client (no SDK for Anthropic)', () => {
  it('asks Anthropic with a forced tool and the key, and counts the tokens the server billed', async () => {
    llm.setHandler(() => ({ json: { elementId: 3, reason: 'tool' } }));
    const res = await createWebLlmClient(anthropic()).generate(ask);
    expect(res.value).toEqual({ elementId: 3, reason: 'tool' });
    const sent = llm.requests[0]!;
    expect(sent.headers['x-api-key']).toBe('sk-ant-test');
    expect(sent.body).toMatchObject({ tool_choice: { type: 'tool', name: 'pick' } });
    expect(res.usage.promptTokens + res.usage.completionTokens).toBe(
      llm.served.promptTokens + llm.served.completionTokens,
    );
  });

  it('sorts provider errors as the SDK client does: a 429 is a rate limit, retried, then given up', async () => {
    llm.setHandler(() => ({ status: 429, headers: { 'retry-after': '0' } }));
    const err = await failure(createWebLlmClient(anthropic({ maxRetries: 1 })).generate(ask));
    expect(err).toBeInstanceOf(LlmError);
    expect(err.kind).toBe('rate_limit');
    expect(llm.requests.length).toBe(2);
  });

  it('asks OpenAI-compatible servers through the openai SDK on the runtime fetch', async () => {
    llm.setHandler(() => ({ json: { elementId: 5, reason: 'ok' } }));
    const client = createWebLlmClient({
      provider: 'openai-compatible',
      model: 'local',
      baseURL: llm.openaiBaseURL,
    });
    expect((await client.generate(ask)).value).toEqual({ elementId: 5, reason: 'ok' });
    expect(llm.requests[0]!.provider).toBe('openai');
  });
});
