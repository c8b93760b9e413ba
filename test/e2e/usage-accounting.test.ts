/**
 * Every token the model server billed is counted: replies in the wrong shape and their repair
 * requests, refusals, and the fallback model's calls reach the step, the sample, the run totals and
 * the live progress line. The scripted server keeps its own count of what it served.
 */
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runAgent } from '../../lib/agent/run-agent.ts';
import type { StepRecord } from '../../lib/agent/state.ts';
import { createApp } from '../../lib/api/app.ts';
import { ProgressTally } from '../../lib/cli/progress.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { metered, spentOn } from '../../lib/llm/spent.ts';
import { LlmError } from '../../lib/llm/types.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { agentEnv, isDecision } from '../support/agent-env.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { modelConfig } from '../support/ops-env.ts';
import { runDeps, tempStores } from '../support/runs-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

/** Tokens the server billed from now on. */
function servedFrom(model: ScriptedModel) {
  const start = { ...model.served };
  return () => ({
    tokens:
      model.served.promptTokens -
      start.promptTokens +
      (model.served.completionTokens - start.completionTokens),
    replies: model.served.replies - start.replies,
  });
}

/** A decision in a shape the agent's schema refuses (no `actions`). */
const wrongShape = { json: { thinking: 'I would like to click something', steps: ['click'] } };

let n = 0;

describe('a model that answers in the wrong shape', () => {
  for (const flavour of ['openai', 'anthropic'] as const) {
    it(`${flavour}: every reply and repair is counted in the steps, the sample and its cost`, async () => {
      const env = await agentEnv({ browser: () => browser, site, llm, flavour });
      llm.setHandler(() => wrongShape);
      const served = servedFrom(llm);
      const state = await runAgent(
        {
          tenant: 't',
          runId: 'usage',
          sampleId: `wrong-${flavour}-${++n}`,
          url: `${site.url}/agent/counter.html`,
          task: { goal: 'Press the button', maxSteps: 4 },
        },
        env.deps,
      );
      const billed = served();
      // 4 lost steps, each a first answer and one repair request.
      expect(state.status).toBe('failed');
      expect(billed.replies).toBe(8);
      expect(llm.requests.filter(isDecision)).toHaveLength(8);
      expect(billed.tokens).toBeGreaterThan(0);
      expect(state.usage.promptTokens + state.usage.completionTokens).toBe(billed.tokens);
      expect(state.usage.calls).toBe(8);
      // Both models have list prices: the sample's cost is not zero.
      expect(state.usage.costUsd).toBeGreaterThan(0);

      const result = await env.runStore.getResult('t', 'usage', state.sampleId);
      expect(Number(result?.usage.promptTokens) + Number(result?.usage.completionTokens)).toBe(billed.tokens);
      const logKey = state.evidence.find((e) => e.key.endsWith('/action_log.json'))!.key;
      const log = JSON.parse(Buffer.from((await env.evidence.get(logKey))!).toString('utf8')) as StepRecord[];
      expect(log).toHaveLength(4);
      for (const step of log) {
        expect(step.notices.join(' ')).toMatch(/step lost: .*wrong shape/);
        expect(step.tokens.prompt).toBeGreaterThan(0);
      }
      expect(log.reduce((sum, s) => sum + s.tokens.prompt + s.tokens.completion, 0)).toBe(billed.tokens);
    });
  }
});

describe('every call of a client is billed to its caller', () => {
  const schema = z.object({ answer: z.string() });
  const ask = (client: ReturnType<typeof createLlmClient>) =>
    client.generate({
      system: 'Answer briefly.',
      messages: [{ role: 'user', content: 'What is on the page?' }],
      schema,
      schemaName: 'answer',
    });

  it('a failed call carries what it spent; the live progress line shows it before any sample ends', async () => {
    llm.setHandler(() => ({ malformed: 'not json at all' }));
    const served = servedFrom(llm);
    const tally = new ProgressTally(1, 0, Date.now(), true);
    const client = metered(createLlmClient(modelConfig(llm, 'openai')), (u) => tally.spend(u));
    const err = await ask(client).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).kind).toBe('invalid_output');
    const billed = served();
    expect(billed.replies).toBe(2);
    const spent = spentOn(err);
    expect((spent?.promptTokens ?? 0) + (spent?.completionTokens ?? 0)).toBe(billed.tokens);
    expect(spent?.costUsd).toBeGreaterThan(0);
    expect(tally.tokens).toBe(billed.tokens);
    expect(tally.line()).toContain(`${billed.tokens} tokens`);
    expect(tally.line()).not.toContain('$0.0000');
  });

  it('the first model’s rejected reply and the fallback’s answer are both counted', async () => {
    // The primary answers in the wrong shape, then fails its repair with 500s; the fallback answers.
    llm.setHandler((r) =>
      r.model === 'gpt-4.1-mini'
        ? r.text.includes('does not fit the required shape')
          ? { status: 500 }
          : { malformed: '{"nope": true}' }
        : { json: { answer: 'a button' } },
    );
    const served = servedFrom(llm);
    const client = createLlmClient(
      { ...modelConfig(llm, 'openai'), maxRetries: 1 },
      { fallback: { ...modelConfig(llm, 'openai'), model: 'gpt-4.1' } },
    );
    const res = await ask(client);
    expect(res.value.answer).toBe('a button');
    const billed = served();
    expect(billed.replies).toBe(2);
    expect(res.usage.promptTokens + res.usage.completionTokens).toBe(billed.tokens);
    expect(res.usage.calls).toBe(2);

    // Both fail: the error still carries both models' replies.
    llm.setHandler((r) =>
      r.model === 'gpt-4.1-mini'
        ? r.text.includes('does not fit the required shape')
          ? { status: 500 }
          : { malformed: '{"nope": true}' }
        : { malformed: '{"still": "wrong"}' },
    );
    const served2 = servedFrom(llm);
    const err = await ask(client).catch((e: unknown) => e);
    expect((err as LlmError).kind).toBe('invalid_output');
    const spent = spentOn(err);
    // Primary: 1 reply; fallback: an answer and its repair.
    expect(served2().replies).toBe(3);
    expect((spent?.promptTokens ?? 0) + (spent?.completionTokens ?? 0)).toBe(served2().tokens);
  });

  it('an OpenAI refusal is billed like an answer', async () => {
    llm.setHandler(() => ({
      raw: {
        id: 'chatcmpl-r',
        object: 'chat.completion',
        created: 0,
        model: 'gpt-4.1-mini',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
            finish_reason: 'stop',
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 321, completion_tokens: 7, total_tokens: 328 },
      },
    }));
    const err = await ask(createLlmClient(modelConfig(llm, 'openai'))).catch((e: unknown) => e);
    expect((err as LlmError).message).toMatch(/refused/);
    expect(spentOn(err)).toMatchObject({ promptTokens: 321, completionTokens: 7, calls: 1 });
  });
});

describe('a run whose model answers in the wrong shape', () => {
  it('has run totals equal to what the model server billed', async () => {
    const stores = await tempStores();
    try {
      const spec = parseTaskSpec({ goal: 'Press the button', mode: 'agent', maxSteps: 3, concurrency: 2 });
      const input = await createRun(stores.runStore, stores.evidence, {
        tenant: 'acme',
        spec,
        samples: [
          { sampleId: 'one', url: `${site.url}/agent/counter.html`, input: {} },
          { sampleId: 'two', url: `${site.url}/agent/counter.html`, input: {} },
        ],
      });
      llm.setHandler(() => wrongShape);
      const served = servedFrom(llm);
      await startLocalRun(input, runHandlers(runDeps(stores, browser, site, llm))).result;
      const billed = served();
      expect(billed.replies).toBe(12);
      const run = await stores.runStore.getRun('acme', input.runId);
      const totals = run?.totals as { promptTokens: number; completionTokens: number; costUsd: number };
      expect(totals.promptTokens + totals.completionTokens).toBe(billed.tokens);
      expect(totals.costUsd).toBeGreaterThan(0);
    } finally {
      await stores.cleanup();
    }
  });
});

describe('an API call whose model answers in the wrong shape', () => {
  it('fails with the tokens it spent in the error, equal to what the server billed', async () => {
    const app = createApp({
      keys: new Map([['k', 't']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.openaiBaseURL },
    });
    llm.setHandler(() => ({ json: { rows: 'not what was asked' } }));
    const served = servedFrom(llm);
    const res = await app.request('/v1/extract', {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/products.html`, instruction: 'all product names' }),
    });
    expect(res.status).toBe(502);
    const body = (await res.json()) as {
      error: { kind: string; message: string; usage?: { promptTokens: number; completionTokens: number } };
    };
    expect(body.error.kind).toBe('model');
    expect(body.error.message).toMatch(/wrong shape/);
    const billed = served();
    expect(billed.replies).toBe(2);
    expect((body.error.usage?.promptTokens ?? 0) + (body.error.usage?.completionTokens ?? 0)).toBe(
      billed.tokens,
    );
  });
});
