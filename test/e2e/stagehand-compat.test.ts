import { Stagehand } from '@browserbasehq/stagehand';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { idInPrompt } from '../support/ops-env.ts';
import { type StagehandEnv, sdkFor, stagehandSuite } from '../support/stagehand-env.ts';

/**
 * What real Stagehand scripts do beyond the basics (stagehand-sdk.test.ts), through the unchanged
 * SDK: how they are told no at init, the model names and system prompt they pass, the results they
 * store and replay themselves, and long agent runs.
 */

let env: StagehandEnv;
let a: Stagehand;
const quiet = { verbose: 0 as const, disablePino: true, logger: () => {} };

// A short deadline, so that an agent that would outrun it shows what it does instead.
stagehandSuite({ requestTimeoutMs: 8000, agentFinishMs: 4000 }, (e, s) => {
  env = e;
  a = s;
});

describe('init', () => {
  it('fails with the reason, not "Unknown error", when the key has no session left', async () => {
    const open = [sdkFor('key-c'), sdkFor('key-c')];
    await Promise.all(open.map((s) => s.init()));
    const over = sdkFor('key-c');
    const err = await over.init().catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect(String(err)).toMatch(/2 open Stagehand sessions/);
    await Promise.all(open.map((s) => s.close()));
    await over.close().catch(() => undefined);
  });

  it('fails with the reason when the script names a model browserfn cannot serve', async () => {
    const sh = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-b',
      model: { modelName: 'google/gemini-2.5-flash', apiKey: 'g-key' },
      ...quiet,
    });
    const err = await sh.init().catch((e: Error) => e);
    expect(String(err)).toMatch(/modelName: .*provider/);
    expect(env.service.registry.size()).toBe(1);
    await sh.close().catch(() => undefined);
  });

  it('takes the bare model names the SDK still accepts, with the caller’s key', async () => {
    const sh = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-b',
      model: { modelName: 'gpt-4o-mini', apiKey: 'sk-bare' },
      ...quiet,
    });
    await sh.init();
    try {
      await sh.context.pages()[0]!.goto(`${env.site.url}/login.html`);
      env.llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme' }, done: true } }));
      const out = await sh.extract('the page heading', z.object({ heading: z.string() }));
      expect(out.heading).toBe('Sign in to Acme');
      const asked = env.llm.requests.at(-1)!;
      expect(asked.model).toBe('gpt-4o-mini');
      expect(asked.headers.authorization).toBe('Bearer sk-bare');
    } finally {
      await sh.close();
    }
  });
});

describe('a resumed session', () => {
  it('takes the model and system prompt the resuming script names', async () => {
    const first = sdkFor('key-b');
    await first.init();
    const resumed = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-b',
      browserbaseSessionID: first.browserbaseSessionID!,
      model: { modelName: 'openai/gpt-4o', apiKey: 'sk-second' },
      systemPrompt: 'RESUMED-MARK',
      ...quiet,
    });
    await resumed.init();
    try {
      expect(resumed.browserbaseSessionID).toBe(first.browserbaseSessionID);
      await resumed.context.pages()[0]!.goto(`${env.site.url}/login.html`);
      env.llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme' }, done: true } }));
      await resumed.extract('the page heading', z.object({ heading: z.string() }));
      const asked = env.llm.requests.at(-1)!;
      expect(asked.model).toBe('gpt-4o');
      expect(asked.headers.authorization).toBe('Bearer sk-second');
      expect(asked.system).toContain('RESUMED-MARK');
    } finally {
      await resumed.close();
      await first.close().catch(() => undefined);
    }
  });
});

describe('a model browserfn does not serve, named without a key', () => {
  it('is replaced, and the call’s log says so at the SDK’s default level', async () => {
    const lines: { message: string; level?: number }[] = [];
    const sh = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-b',
      model: 'groq/llama-3.3-70b-versatile',
      verbose: 1,
      disablePino: true,
      logger: (l) => {
        lines.push({ message: l.message, level: l.level });
      },
    });
    await sh.init();
    try {
      await sh.context.pages()[0]!.goto(`${env.site.url}/login.html`);
      const found = await sh.observe('the Sign in button');
      expect(found[0]?.description).toMatch(/Sign in/);
      const note = lines.find((l) => /groq\/llama-3\.3-70b-versatile/.test(l.message));
      expect(note?.message).toMatch(/zero-token tier only/);
      expect(note?.level).toBe(1);
    } finally {
      await sh.close();
    }
  });
});

describe('the script’s systemPrompt', () => {
  it('reaches the model in act, observe and extract', async () => {
    const sh = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-b',
      model: { modelName: 'openai/gpt-4.1-mini', apiKey: 'sk-test' },
      systemPrompt: 'Prefer the checkbox labelled Remember me. MARKER-7f3a',
      ...quiet,
    });
    await sh.init();
    try {
      await sh.context.pages()[0]!.goto(`${env.site.url}/login.html`);
      env.llm.setHandler((r) =>
        r.schemaName === 'choose_action'
          ? {
              json: {
                elementId: idInPrompt(r.text, 'checkbox', 'Remember me'),
                method: 'check',
                arguments: [],
                twoStep: false,
                reason: 'the box',
              },
            }
          : r.schemaName === 'list_elements'
            ? {
                json: {
                  elements: [
                    {
                      elementId: idInPrompt(r.text, 'checkbox', 'Remember me'),
                      description: 'remember me',
                      method: 'check',
                      arguments: [],
                    },
                  ],
                },
              }
            : { json: { data: { heading: 'Sign in to Acme' }, done: true } },
      );
      const asked = env.llm.requests.length;
      await sh.act('make sure I stay signed in next time');
      await sh.observe('something to tick so that I stay signed in');
      await sh.extract('the page heading', z.object({ heading: z.string() }));
      const seen = env.llm.requests.slice(asked);
      expect(seen.map((r) => r.schemaName)).toEqual(['choose_action', 'list_elements', 'extracted']);
      for (const r of seen) expect(r.system).toContain('MARKER-7f3a');
    } finally {
      await sh.close();
    }
    // Another session's calls do not carry it.
    await a.context.pages()[0]!.goto(`${env.site.url}/login.html`);
    await a.extract('the page heading', z.object({ heading: z.string() }));
    expect(env.llm.requests.at(-1)!.system).not.toContain('MARKER-7f3a');
  });
});

describe('extract with a zod v3 schema that reuses parts', () => {
  it('resolves the `$ref`s, a URL field behind one included, and returns the data', async () => {
    await a.context.pages()[0]!.goto(`${env.site.url}/products.html`);
    const Price = z3.string();
    const Product = z3.object({ name: z3.string(), url: z3.string().url(), price: Price });
    const schema = z3.object({ cheapest: Product, priciest: Product, lowest: Price, highest: Price });

    let sent = '';
    env.llm.setHandler((r) => {
      sent = JSON.stringify(r.body.response_format);
      return {
        json: {
          data: {
            cheapest: {
              name: 'Trail Map Set',
              url: idInPrompt(r.text, 'link', 'Trail Map Set'),
              price: '$12.00',
            },
            priciest: {
              name: 'Rain Jacket',
              url: idInPrompt(r.text, 'link', 'Rain Jacket'),
              price: '$120.00',
            },
            lowest: '$12.00',
            highest: '$120.00',
          },
          done: true,
        },
      };
    });
    const data = await a.extract('the cheapest and the priciest product, and their prices', schema);

    expect(env.llm.requests.at(-1)?.schemaName).toBe('extracted');
    // The model saw the reused parts spelled out, with link ids for both URL fields.
    expect(sent).not.toContain('$ref');
    expect(data).toEqual({
      cheapest: { name: 'Trail Map Set', url: `${env.site.url}/products/trail-maps.html`, price: '$12.00' },
      priciest: { name: 'Rain Jacket', url: `${env.site.url}/products/rain-jacket.html`, price: '$120.00' },
      lowest: '$12.00',
      highest: '$120.00',
    });
  });
});

describe('metrics', () => {
  it('count the tokens of an act the model could not resolve', async () => {
    await a.context.pages()[0]!.goto(`${env.site.url}/login.html`);
    env.llm.setHandler(() => ({
      json: { elementId: null, method: 'click', arguments: [], twoStep: false, reason: 'no such thing here' },
    }));
    const before = await a.metrics;
    const asked = env.llm.requests.length;
    const result = await a.act('open the quarterly tax report');
    expect(result.success).toBe(false);
    expect(env.llm.requests.length).toBeGreaterThan(asked);
    const after = await a.metrics;
    expect(after.actPromptTokens).toBeGreaterThan(before.actPromptTokens);
  });
});

describe('page.goto', () => {
  it('returns a response whose body the script can read', async () => {
    const response = await a.context.pages()[0]!.goto(`${env.site.url}/login.html`);
    expect(response?.status()).toBe(200);
    expect(await response!.text()).toContain('Sign in to Acme');
  });
});

describe('agent().execute()', () => {
  it('that would outlast the call answers in time with its steps so far, not completed', async () => {
    const page = a.context.pages()[0]!;
    await page.goto(`${env.site.url}/login.html`);
    env.llm.setHandler((r) => {
      if (r.schemaName !== 'next_actions') return { status: 400 };
      // A slow model that never finishes: it would run far past the call's 8 s.
      return {
        delayMs: 700,
        reply: {
          json: {
            evaluation_previous_step: 'looking',
            next_goal: 'keep looking',
            actions: [{ tool: 'scroll', direction: 'down' }],
          },
        },
      };
    });
    const started = Date.now();
    const result = await a.agent().execute({ instruction: 'find the quarterly report', maxSteps: 20 });
    expect(Date.now() - started).toBeLessThan(8000);
    expect(result.completed).toBe(false);
    expect(result.success).toBe(false);
    expect(result.message).toMatch(/time ran out/);
    expect(result.actions.length).toBeGreaterThanOrEqual(1);
    expect(result.usage?.input_tokens).toBeGreaterThan(0);
  });

  it('stopped by its step budget is not completed', async () => {
    env.llm.setHandler((r) =>
      r.schemaName === 'next_actions'
        ? {
            json: {
              evaluation_previous_step: 'looking',
              next_goal: 'keep looking',
              actions: [{ tool: 'scroll', direction: 'down' }],
            },
          }
        : { status: 400 },
    );
    const result = await a.agent().execute({ instruction: 'find the quarterly report', maxSteps: 2 });
    expect(result.completed).toBe(false);
    expect(result.success).toBe(false);
  });
});
