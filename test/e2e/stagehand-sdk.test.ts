import { spawn } from 'node:child_process';
import { Stagehand } from '@browserbasehq/stagehand';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idInPrompt } from '../support/ops-env.ts';
import { type StagehandEnv, sdkFor, startStagehandEnv } from '../support/stagehand-env.ts';

/**
 * The official Stagehand v3 SDK, unchanged, pointed at browserfn with the two environment
 * variables and a browserfn key in place of a Browserbase key. (Tenancy, the CDP proxy's
 * refusals, limits and idle sessions: stagehand-sessions.test.ts.)
 */

let env: StagehandEnv;
let a: Stagehand;
let b: Stagehand;
const SECRET = 'hunter2-never-to-a-model';

beforeAll(async () => {
  env = await startStagehandEnv();
  a = sdkFor('key-a');
  b = sdkFor('key-b');
  await Promise.all([a.init(), b.init()]);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await env?.close();
});

describe('the Stagehand SDK on browserfn', () => {
  it('init opens a session whose CDP URL is browserfn’s authenticated proxy', async () => {
    expect(env.service.registry.size()).toBe(2);
    const connectUrl = await env.connectUrlOf(a.browserbaseSessionID!, 'key-a');
    expect(connectUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:\\d+${env.service.prefix}/cdp/`));
    expect(connectUrl).toMatch(/token=[\w-]{40,}/);
    expect(connectUrl).not.toContain(new URL(env.dbg.wsEndpoint).port);
    expect(a.context.pages().length).toBe(1);
  });

  it('page.goto loads a fixture, and the page is reachable over the proxied CDP socket', async () => {
    const page = a.context.pages()[0]!;
    const response = await page.goto(`${env.site.url}/login.html`);
    expect(response?.status()).toBe(200);
    // evaluate runs over the SDK's own CDP connection, through the proxy.
    expect(await page.evaluate(() => document.querySelector('h1')?.textContent)).toBe('Sign in to Acme');
  });

  it('act with a plain instruction resolves with zero tokens, as stagehand.metrics shows', async () => {
    const before = await a.metrics;
    const asked = env.llm.requests.length;
    const result = await a.act('type "ada@acme.test" into the Email field');
    expect(result.success).toBe(true);
    expect(result.actions[0]?.method).toBe('fill');
    expect(env.llm.requests.length).toBe(asked);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => (document.getElementById('email') as HTMLInputElement).value)).toBe(
      'ada@acme.test',
    );
    const after = await a.metrics;
    expect(after.actPromptTokens).toBe(before.actPromptTokens);
  });

  it('act through the model keeps a secret variable away from it', async () => {
    env.llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'textbox', 'Password'),
        method: 'fill',
        arguments: ['%pw%'],
        twoStep: false,
        reason: 'the password box',
      },
    }));
    const asked = env.llm.requests.length;
    const result = await a.act('put the secret %pw% where the password goes', { variables: { pw: SECRET } });
    expect(result.success).toBe(true);
    expect(env.llm.requests.length).toBe(asked + 1);
    expect(env.llm.requests.at(-1)?.headers.authorization).toBe('Bearer sk-test');
    expect(JSON.stringify(env.llm.requests)).not.toContain(SECRET);
    expect(JSON.stringify(result)).not.toContain(SECRET);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => (document.getElementById('password') as HTMLInputElement).value)).toBe(
      SECRET,
    );
  });

  it('an act past its timeout fails, and nothing is done on the page after that answer', async () => {
    // The model answers after the call's deadline.
    env.llm.setHandler((r) => ({
      delayMs: 1200,
      reply: {
        json: {
          elementId: idInPrompt(r.text, 'checkbox', 'Remember me'),
          method: 'check',
          arguments: [],
          twoStep: false,
          reason: 'the remember-me box',
        },
      },
    }));
    const page = a.context.pages()[0]!;
    const ticked = () =>
      page.evaluate(() => (document.querySelector('input[type=checkbox]') as HTMLInputElement).checked);
    expect(await ticked()).toBe(false);
    const err = await a
      .act('something to tick so that I stay signed in', { timeout: 300 })
      .catch((e: Error) => e);
    expect(String(err)).toMatch(/longer than 300 ms/);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await ticked()).toBe(false);
  });

  it('observe returns actions that act replays with no model call', async () => {
    env.llm.setHandler((r) => ({
      json: {
        elements: [
          {
            elementId: idInPrompt(r.text, 'button', 'Sign in'),
            description: 'the Sign in button',
            method: 'click',
            arguments: [],
          },
        ],
      },
    }));
    const found = await a.observe('whatever I press once the form is filled in');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ description: 'the Sign in button', method: 'click' });
    expect(found[0]!.selector).toMatch(/^xpath=\//);
    const asked = env.llm.requests.length;
    const result = await a.act(found[0]!);
    expect(result.success).toBe(true);
    expect(env.llm.requests.length).toBe(asked);
    const page = a.context.pages()[0]!;
    expect(await page.evaluate(() => document.getElementById('status')?.textContent)).toBe(
      'Signed in as ada@acme.test',
    );
  });

  it('observe answers a plain description through the matcher: no model call, 0 tokens', async () => {
    const asked = env.llm.requests.length;
    const before = (await a.metrics).observePromptTokens;
    const found = await a.observe('the button that signs in');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ method: 'click' });
    expect(found[0]!.description).toContain('Sign in');
    expect(env.llm.requests.length).toBe(asked);
    expect((await a.metrics).observePromptTokens).toBe(before);
  });

  it('extract returns data in the shape of a zod schema', async () => {
    env.llm.setHandler(() => ({ json: { data: { heading: 'Sign in to Acme', links: 3 }, done: true } }));
    const data = await a.extract(
      'the page heading and how many nav links there are',
      z.object({
        heading: z.string(),
        links: z.number(),
      }),
    );
    expect(data).toEqual({ heading: 'Sign in to Acme', links: 3 });
    expect(env.llm.requests.at(-1)?.schemaName).toBe('extracted');
  });

  it('a change the script makes over its own CDP socket is seen by the next call, even with no event', async () => {
    const page = a.context.pages()[0]!;
    // Two read-only calls in a row: the second answers from the first one's read.
    expect(((await a.extract()) as { pageText: string }).pageText).toContain('Sign in to Acme');
    const before = (await a.extract()) as { pageText: string };
    expect(before.pageText).not.toContain('set-by-script@acme.test');
    // A property write fires no event and touches no attribute: only the CDP proxy sees it coming.
    await page.evaluate(() => {
      (document.getElementById('email') as HTMLInputElement).value = 'set-by-script@acme.test';
    });
    const after = (await a.extract()) as { pageText: string };
    expect(after.pageText).toContain('value="set-by-script@acme.test"');
  });

  it('works on the page the SDK names when several are open', async () => {
    const second = await a.context.newPage();
    try {
      await second.goto(`${env.site.url}/products.html`);
      const onSecond = await a.observe({ page: second });
      const names = onSecond.map((o) => o.description).join('\n');
      expect(names).toMatch(/combobox "Sort by"/);
      expect(names).not.toMatch(/button "Sign in"/);
      const text = (await a.extract({ page: a.context.pages()[0]! })) as { pageText: string };
      expect(text.pageText).toContain('Sign in to Acme');
    } finally {
      await second.close();
    }
  });

  it('stagehand.metrics adds up the model calls per operation', async () => {
    const m = await a.metrics;
    expect(m.actPromptTokens).toBeGreaterThan(100);
    expect(m.observePromptTokens).toBeGreaterThan(100);
    expect(m.extractPromptTokens).toBeGreaterThan(100);
    expect(m.actCompletionTokens).toBeGreaterThan(0);
    expect(m.totalPromptTokens).toBe(
      m.actPromptTokens + m.observePromptTokens + m.extractPromptTokens + m.agentPromptTokens,
    );
    // b made no call at all.
    expect((await b.metrics).totalPromptTokens).toBe(0);
  });

  it('agent().execute() runs browserfn’s agent on the session’s page and reports its steps and tokens', async () => {
    const page = a.context.pages()[0]!;
    await page.goto(`${env.site.url}/login.html`);
    const before = await a.metrics;
    const decisions: string[] = [];
    env.llm.setHandler((r) => {
      if (r.schemaName !== 'next_actions') return { status: 400 };
      decisions.push(r.text);
      const heading = /h1: ([^\n[]+)/.exec(r.text)?.[1]?.trim() ?? null;
      return {
        json: {
          evaluation_previous_step: 'start',
          next_goal: 'report the heading',
          actions: [{ tool: 'done', data: { heading } }],
        },
      };
    });
    const result = await a.agent().execute({ instruction: 'report the page heading', maxSteps: 3 });
    expect(result.success).toBe(true);
    expect(result.completed).toBe(true);
    expect(result.message).toContain('Sign in to Acme');
    expect(result.actions.map((x) => x.type)).toEqual(['done']);
    // The agent worked on the page the script had open, without reloading it elsewhere.
    expect(decisions[0]).toContain('/login.html');
    expect(page.url()).toBe(`${env.site.url}/login.html`);
    const after = await a.metrics;
    expect(after.agentPromptTokens).toBeGreaterThan(before.agentPromptTokens);
  });

  it('refuses a guarded URL through goto', async () => {
    const page = a.context.pages()[0]!;
    const before = page.url();
    // Loopback, but not on the allow-list: the fixture server's second origin, which logs every hit.
    await expect(page.goto(`${env.site.crossOriginUrl}/login.html?probe=goto`)).rejects.toThrow(
      /Blocked request/,
    );
    expect(await page.evaluate(() => location.href)).toBe(before);
    expect(env.site.hits.filter((h) => h.includes('probe='))).toEqual([]);
  });

  it('the release call from a killed client frees its session', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/scripts/stagehand-client.ts'], {
      env: { ...process.env, BFN_TEST_KEY: 'key-b' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const id = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        const m = /session (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`client exited early (${code})`)));
    });
    expect((await env.call(`/v1/sessions/${id}`, 'key-b')).status).toBe(200);
    child.kill('SIGKILL');
    let status = 200;
    for (let i = 0; i < 300 && status === 200; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await env.call(`/v1/sessions/${id}`, 'key-b')).status;
    }
    expect(status).toBe(404);
  });

  it('disableAPI: a Browserbase-style session runs the SDK’s own pipeline over the proxied socket', async () => {
    // Every CDP command of Stagehand's local snapshot and click goes through the filter here.
    env.llm.setHandler((r) => ({
      json: {
        elements: [
          {
            elementId: /\[(\d+-\d+)\] button: Sign in/.exec(r.text)?.[1] ?? 'none',
            description: 'Sign in',
            method: 'click',
            arguments: [],
          },
        ],
      },
    }));
    const local = new Stagehand({
      env: 'BROWSERBASE',
      apiKey: 'key-c',
      disableAPI: true,
      browserbaseSessionCreateParams: { browserSettings: { viewport: { width: 900, height: 640 } } },
      model: { modelName: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL: env.llm.openaiBaseURL },
      verbose: 0,
      disablePino: true,
      logger: () => {},
    });
    await local.init();
    try {
      expect(env.service.registry.get(local.browserbaseSessionID!, 'tenant-c')).toBeDefined();
      const page = local.context.pages()[0]!;
      await page.goto(`${env.site.url}/login.html`);
      // The create call's viewport is the session's.
      expect(await page.evaluate(() => [innerWidth, innerHeight])).toEqual([900, 640]);
      const found = await local.observe('the sign in button');
      expect(found[0]?.description).toBe('Sign in');
      expect(env.llm.requests.at(-1)?.schemaName).toBe('Observation');
      // Its own CDP navigation is guarded too.
      await expect(page.goto(`${env.site.crossOriginUrl}/login.html?probe=local`)).rejects.toThrow(
        /Blocked request/,
      );
    } finally {
      await local.close();
    }
  });

  it('close ends the session and frees its context', async () => {
    const id = a.browserbaseSessionID!;
    const { context } = env.service.registry.get(id, 'tenant-a')!.resources;
    await a.close();
    expect((await env.call(`/v1/sessions/${id}`, 'key-a')).status).toBe(404);
    expect(env.dbg.browser.contexts()).not.toContain(context);
  });
});
