/**
 * Plan, compile and run over real HTTP and the real CLI (one server, Chromium once, the generated
 * catalogue, the scripted model through the real OpenAI SDK, local stores):
 * - plan: a valid plan answers at once; an invalid one is repaired by one call naming its problems;
 *   one invalid twice is a 400 naming node alias and field, and nothing is saved;
 * - compile: a finished /v1/agent sample of the key becomes a saved workflow (another key gets 404, a
 *   failed sample 409 saying why); acts compile from their action log;
 * - run: the stored workflow replays on another product with 0 model requests and the right data; on
 *   the redesigned template it heals and writes the next version, which then runs without the model;
 * - CLI: compile a file of acts, run it with no model configured, plan with --save and --out.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { act } from '../../lib/ops/act.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { ActRecord } from '../../lib/workflows/compile.ts';
import { validateWorkflow } from '../../lib/workflows/validate.ts';
import { currentUrl, isDecision, reply } from '../support/agent-env.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type CatalogueSite, price, product, startCatalogueSite } from '../support/catalogue-site.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

let browser: Browser;
let site: CatalogueSite;
let llm: ScriptedModel;
let server: ServerType;
let base: string;
let dir: string;
let workflows: LocalWorkflowStore;
let runStore: LocalRunStore;
/** Times the server asked for the browser (a call that needs no page asks for none). */
let browserAsks = 0;

const MODEL_ENV = () => ({
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: llm.openaiBaseURL,
  BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
});

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([
    startBrowser(),
    startCatalogueSite({ products: 60 }),
    startScriptedModel(),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-wf-actions-'));
  runStore = new LocalRunStore(join(dir, 'runs'));
  const evidence = new LocalEvidenceStore(join(dir, 'evidence'));
  workflows = new LocalWorkflowStore(join(dir, 'workflows'));
  const app = createApp({
    keys: new Map([
      ['key-a', 'tenant-a'],
      ['key-b', 'tenant-b'],
    ]),
    policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
    browser: async () => {
      browserAsks++;
      return browser;
    },
    env: MODEL_ENV(),
    agentStores: () => ({ runStore, evidence }),
    runs: {
      runStore,
      evidence,
      launch: async () => {
        throw new Error('this file starts no runs');
      },
    },
    workflows,
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
});
afterAll(async () => {
  server?.close();
  await closeGuardProxies();
  await Promise.all([browser?.close(), site?.close(), llm?.close()]);
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  site.setTemplate('v1');
  llm.requests.length = 0;
  llm.setHandler(undefined);
});

const call = (path: string, body: unknown, key = 'key-a', method = 'POST') =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify(body) } : {}),
  });

/** A plan that reads a list page: navigation and a model read, then a transform of what it read. */
const goodPlan = {
  name: 'Catalogue prices',
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
    {
      alias: 'read',
      type: 'browser_ai_query',
      config: { method: 'extract', instruction: 'every product name and price' },
    },
    { alias: 'names', type: 'transform', config: { expression: 'read.products.name', store_variable: true } },
  ],
};
const badPlan = {
  name: 'Catalogue prices',
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate' } },
    { alias: 'read', type: 'browser_ai_query', config: { method: 'extract' } },
  ],
};

describe('POST /v1/workflows/plan', () => {
  it('answers a valid plan with one call; repairs an invalid one with one call naming its problems', async () => {
    llm.push({ json: goodPlan });
    const res = await call('/v1/workflows/plan', {
      prompt: 'read the product names of a catalogue page',
      url: `${site.url}/catalogue?page=1`,
      save: true,
      id: 'prices',
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(body).toMatchObject({ id: 'prices', version: 1, repaired: false, aiNodes: ['read'] });
    expect(body.workflow.source).toEqual({ kind: 'plan', url: `${site.url}/catalogue?page=1` });
    expect(body.usage.calls).toBe(1);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]!.schemaName).toBe('workflow');
    expect(llm.requests[0]!.system).toContain('deterministic navigation, intelligent processing');
    expect(llm.requests[0]!.text).toContain(`Start page: ${site.url}/catalogue?page=1`);
    const stored = await (await call('/v1/workflows/prices', undefined, 'key-a', 'GET')).json();
    expect(stored.workflow.nodes.map((n: { alias: string }) => n.alias)).toEqual(['open', 'read', 'names']);

    llm.requests.length = 0;
    llm.push({ json: badPlan }, { json: goodPlan });
    const fixed = await call('/v1/workflows/plan', { prompt: 'read the product names' });
    expect(fixed.status).toBe(200);
    const fixedBody = await fixed.json();
    expect(fixedBody).toMatchObject({ repaired: true, workflow: { name: 'Catalogue prices' } });
    expect(fixedBody.usage.calls).toBe(2);
    expect(llm.requests).toHaveLength(2);
    // The repair names every problem of the first answer by field and alias.
    expect(llm.requests[1]!.text).toContain('nodes.0.config.url (open)');
    expect(llm.requests[1]!.text).toContain('nodes.1.config.instruction (read)');
  });

  it('refuses a plan that is still invalid after the repair with 400 naming alias and field, saving nothing', async () => {
    llm.push({ json: badPlan }, { json: badPlan });
    const res = await call('/v1/workflows/plan', { prompt: 'read prices', save: true, id: 'never-saved' });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error.kind).toBe('invalid_plan');
    expect(body.error.issues).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ alias: 'open', path: 'nodes.0.config.url' }),
        expect.objectContaining({ alias: 'read', path: 'nodes.1.config.instruction' }),
      ]),
    );
    expect(body.error.message).toContain('nodes.0.config.url (open)');
    expect(llm.requests).toHaveLength(2);
    expect((await call('/v1/workflows/never-saved', undefined, 'key-a', 'GET')).status).toBe(404);
    const spec = await (await fetch(`${base}/openapi.json`)).json();
    for (const path of ['/v1/workflows/plan', '/v1/workflows/compile', '/v1/workflows/{id}/run'])
      expect(Object.keys(spec.paths[path].post.responses)).toEqual(
        expect.arrayContaining(['400', '401', '429', '504']),
      );
    expect(Object.keys(spec.paths['/v1/workflows/{id}/run'].post.responses)).toContain('404');
    const noPrompt = await call('/v1/workflows/plan', { url: site.url });
    expect(noPrompt.status).toBe(400);
    expect((await noPrompt.json()).error.message).toMatch(/^prompt:/);
  });
});

/** The agent adds 2 gift-wrapped units of the product to the cart and reports the cart line. */
function cartAgent() {
  llm.setHandler((r) => {
    if (!isDecision(r)) return { status: 400 };
    const url = currentUrl(r);
    if (url.includes('/product/') && /checkbox: Gift wrap checked/.test(r.text))
      return reply([{ tool: 'click', id: idInPrompt(r.text, 'button', 'Add to cart') }]);
    if (url.includes('/product/'))
      return reply([
        { tool: 'type', id: idInPrompt(r.text, 'spinbutton', 'Quantity'), text: '2' },
        { tool: 'click', id: idInPrompt(r.text, 'checkbox', 'Gift wrap') },
      ]);
    const line = /Added \d+ × [^.]+ to your cart\./.exec(r.text)?.[0] ?? '';
    return reply([{ tool: 'done', data: { cartLine: line } }]);
  });
}

// An agent sample, a compile with its page and replays: on a loaded machine this needs more than the default.
describe('compile and run', () => {
  it("compiles the key's finished agent sample, refuses another key's (404) and a failed one (409), and runs it with 0 model requests", async () => {
    cartAgent();
    const agent = await call('/v1/agent', {
      url: `${site.url}/product/1`,
      goal: 'Add 2 gift-wrapped units to the cart and report the cart line',
      maxSteps: 5,
      runId: 'agent-cart',
    });
    expect((await agent.json()).status).toBe('done');
    llm.setHandler(undefined);
    llm.requests.length = 0;

    const compiled = await call('/v1/workflows/compile', {
      runId: 'agent-cart',
      sampleId: 'main',
      id: 'cart',
    });
    expect(compiled.status).toBe(201);
    const wf = await compiled.json();
    expect(wf).toMatchObject({ id: 'cart', version: 1, aiNodes: [] });
    expect(wf.workflow.source).toMatchObject({ kind: 'agent', runId: 'agent-cart', sampleId: 'main' });
    expect(wf.workflow.name).toBe('compiled from agent-cart/main');
    expect(
      wf.workflow.nodes.map(
        (n: { config: { action?: string; method?: string } }) => n.config.action ?? n.config.method,
      ),
    ).toEqual(['navigate', 'fill', 'check', 'click', 'extract']);
    expect(llm.requests).toHaveLength(0);

    const other = await call('/v1/workflows/compile', { runId: 'agent-cart', sampleId: 'main' }, 'key-b');
    expect(other.status).toBe(404);
    expect((await other.json()).error.kind).toBe('not_found');

    // A sample that ran out of steps did not succeed: there is nothing right to replay.
    llm.setHandler((r) => (isDecision(r) ? reply([{ tool: 'scroll', direction: 'down' }]) : { status: 400 }));
    await call('/v1/agent', {
      url: `${site.url}/product/2`,
      goal: 'Add it to the cart',
      maxSteps: 1,
      runId: 'agent-stuck',
    });
    const refused = await call('/v1/workflows/compile', { runId: 'agent-stuck', sampleId: 'main' });
    expect(refused.status).toBe(409);
    expect((await refused.json()).error).toMatchObject({
      kind: 'not_compilable',
      message: expect.stringMatching(/did not succeed/),
    });
    llm.setHandler(undefined);
    llm.requests.length = 0;

    const run = await call('/v1/workflows/cart/run', { url: `${site.url}/product/21` });
    expect(run.status).toBe(200);
    const answer = await run.json();
    expect(answer).toMatchObject({ id: 'cart', status: 'done', version: 1, heals: [] });
    expect(answer.healedVersion).toBeUndefined();
    expect(answer.data).toEqual({ result: { cartLine: `Added 2 × ${product(21).name} to your cart.` } });
    expect(Object.values(answer.results).map((r) => (r as { resolvedBy: string }).resolvedBy)).toEqual(
      Array(5).fill('deterministic'),
    );
    expect(answer.usage.promptTokens + answer.usage.completionTokens).toBe(0);
    expect(site.carts.at(-1)).toEqual({ id: 21, qty: 2, gift: true, template: 'v1' });
    expect(llm.requests).toHaveLength(0);

    const missing = await call('/v1/workflows/cart/run', { url: `${site.url}/product/3`, version: 7 });
    expect(missing.status).toBe(404);
    expect((await call('/v1/workflows/cart/run', { url: `${site.url}/product/3` }, 'key-b')).status).toBe(
      404,
    );
  }, 120_000);

  it("compiles an extract-mode run's sample into a checked extractor that reads other pages with 0 model requests", async () => {
    // The sample as the extract mode leaves it: the run's spec (goal, schema), the sample, its result.
    const now = new Date().toISOString();
    await runStore.createRun({
      tenant: 'tenant-a',
      runId: 'extract-run',
      status: 'done',
      spec: {
        goal: 'the product name and price',
        mode: 'extract',
        outputSchema: {
          type: 'object',
          properties: { name: { type: 'string' }, price: { type: 'string' } },
          required: ['name', 'price'],
        },
      },
      sampleCount: 1,
      createdAt: now,
      updatedAt: now,
    });
    await runStore.putSamples([
      {
        tenant: 'tenant-a',
        runId: 'extract-run',
        sampleId: 's1',
        url: `${site.url}/product/5`,
        input: {},
        status: 'done',
        attempts: 1,
        updatedAt: now,
      },
    ]);
    await runStore.putResult({
      tenant: 'tenant-a',
      runId: 'extract-run',
      sampleId: 's1',
      status: 'done',
      reason: 'extracted',
      data: { name: product(5).name, price: price(product(5).cents) },
      usage: {},
      evidence: [],
      writtenAt: now,
    });
    const compiled = await call('/v1/workflows/compile', { runId: 'extract-run', sampleId: 's1' });
    expect(compiled.status).toBe(201);
    const wf = await compiled.json();
    expect(wf).toMatchObject({ id: 'compiled-from-extract-run-s1', version: 1, aiNodes: [] });
    expect(wf.workflow.nodes.map((n: { type: string }) => n.type)).toEqual([
      'browser_action',
      'browser_query',
    ]);
    // The product page holds its data in the served HTML: compile marked the workflow so, and the
    // run reads it without a page — the server never asks for the browser.
    expect(wf.workflow.staticRead, JSON.stringify(wf.workflow.staticRead)).toMatchObject({ verified: true });
    const asksBefore = browserAsks;
    const run = await (
      await call('/v1/workflows/compiled-from-extract-run-s1/run', { url: `${site.url}/product/6` })
    ).json();
    expect(run.status).toBe('done');
    expect(run.readBy).toBe('static-html');
    expect(run.data).toEqual({ data: { name: product(6).name, price: price(product(6).cents) } });
    expect(browserAsks).toBe(asksBefore);
    expect(llm.requests).toHaveLength(0);
    // A page the served HTML does not give (here a missing product): the browser reads it, once, and
    // the answer says why it was needed.
    const missing = await (
      await call('/v1/workflows/compiled-from-extract-run-s1/run', { url: `${site.url}/product/9999` })
    ).json();
    expect(missing).toMatchObject({ status: 'failed', readBy: 'browser' });
    expect(missing.staticFallback).toContain('404');
    expect(browserAsks).toBe(asksBefore + 1);
  });

  it('compiles acts, heals on the redesign and writes the next version, which then runs without the model; a failed workflow is a 200 saying where', async () => {
    const acts = await recordActs();
    const compiled = await call('/v1/workflows/compile', {
      actionLog: acts,
      url: `${site.url}/product/1`,
      input: { qty: '2' },
      id: 'buy',
    });
    expect(compiled.status).toBe(201);
    expect((await compiled.json()).workflow.inputs).toHaveProperty('qty');

    site.setTemplate('v2');
    llm.setHandler((r) => {
      if (r.schemaName !== 'list_elements') return { status: 400 };
      const id = idInPrompt(r.text, 'spinbutton', 'How many?');
      return {
        json: { elements: [{ elementId: id, description: 'quantity field', method: 'fill', arguments: [] }] },
      };
    });
    const healed = await (
      await call('/v1/workflows/buy/run', { url: `${site.url}/product/7`, inputs: { qty: 3 } })
    ).json();
    expect(healed).toMatchObject({ status: 'done', version: 1, healedVersion: 2 });
    expect(healed.heals.map((h: { via: string; confirmed: boolean }) => [h.via, h.confirmed])).toEqual([
      ['llm', true],
      ['matcher', true],
    ]);
    expect(site.carts.at(-1)).toEqual({ id: 7, qty: 3, gift: true, template: 'v2' });
    expect(llm.requests.map((r) => r.schemaName)).toEqual(['list_elements']);
    const versions = await (await call('/v1/workflows/buy/versions', undefined, 'key-a', 'GET')).json();
    expect(versions.versions.map((v: { version: number; parent?: number }) => [v.version, v.parent])).toEqual(
      [
        [1, undefined],
        [2, 1],
      ],
    );

    llm.requests.length = 0;
    const again = await (
      await call('/v1/workflows/buy/run', { url: `${site.url}/product/8`, inputs: { qty: 1 } })
    ).json();
    expect(again).toMatchObject({ status: 'done', version: 2, heals: [] });
    expect(site.carts.at(-1)).toEqual({ id: 8, qty: 1, gift: true, template: 'v2' });
    expect(llm.requests).toHaveLength(0);

    // Version 1 on a page with no such product: the workflow ran and failed at its first pinned step.
    llm.setHandler(() => ({ json: { elements: [] } }));
    const failed = await call('/v1/workflows/buy/run', {
      url: `${site.url}/product/99`,
      inputs: { qty: 1 },
      version: 1,
    });
    expect(failed.status).toBe(200);
    const failedBody = await failed.json();
    expect(failedBody.status).toBe('failed');
    expect(failedBody.failedAt).toBeDefined();
    expect(failedBody.results[failedBody.failedAt].error.message).toBeTruthy();
    // The request deadline holds as for /v1/act: a 504 naming what it waited for.
    await call('/v1/workflows', {
      id: 'slow',
      workflow: {
        name: 'Slow',
        nodes: [
          { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
          { alias: 'linger', type: 'browser_action', config: { action: 'wait', duration: 120_000 } },
        ],
      },
    });
    const quick = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      requestTimeoutMs: 10_000,
      workflows,
    });
    const timedOut = await quick.request('/v1/workflows/slow/run', {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/product/3` }),
    });
    expect(timedOut.status).toBe(504);
    expect((await timedOut.json()).error.message).toMatch(/waiting for workflow slow v1 to finish on/);

    // Inputs are checked before any page opens: each missing or mistyped one is named.
    await call('/v1/workflows', {
      id: 'needs-n',
      workflow: {
        name: 'Needs n',
        inputs: { n: { type: 'number', required: true } },
        nodes: [
          { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
        ],
      },
    });
    const missingInput = await call('/v1/workflows/needs-n/run', { url: `${site.url}/product/8` });
    expect(missingInput.status).toBe(400);
    expect((await missingInput.json()).error.message).toBe('inputs.n: no value given and no default');
  }, 120_000);
});

/** Three acts on product 1 with the zero-token matcher, as the act API answers them. */
async function recordActs(): Promise<ActRecord[]> {
  const { page, context } = await openPage(browser);
  try {
    await page.goto(`${site.url}/product/1`);
    const out: ActRecord[] = [];
    for (const instruction of [
      'type "2" into the Quantity field',
      'check the Gift wrap checkbox',
      'click the Add to cart button',
    ]) {
      const result = await act({ page }, instruction);
      expect(result.success, result.message).toBe(true);
      out.push({ instruction, result: JSON.parse(JSON.stringify(result)) });
    }
    return out;
  } finally {
    await context.close();
  }
}

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), ...env },
        timeout: 120_000,
        cwd: dir,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('browserfn workflow compile | run | plan', () => {
  // Three processes, each starting cold (and a browser for two): a loaded machine needs the time.
  it('compiles a file of acts, runs it with no model configured, and plans with --save and --out', async () => {
    await writeFile(
      join(dir, 'acts.json'),
      JSON.stringify({ url: `${site.url}/product/1`, acts: await recordActs() }),
    );
    const compiled = await cli(['workflow', 'compile', 'acts.json', '--id', 'cli-buy']);
    expect(compiled.stderr).toBe('');
    expect(compiled.stdout).toMatch(/^saved cli-buy v1 in .*: 4 nodes, no AI nodes/);

    const run = await cli(['workflow', 'run', 'cli-buy', `${site.url}/product/9`]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.filter((l) => /\tok\tdeterministic\t0 tokens$/.test(l))).toHaveLength(4);
    expect(lines.at(-1)).toBe('done: v1, 0 tokens, 0 heal(s)');
    expect(site.carts.at(-1)).toEqual({ id: 9, qty: 2, gift: true, template: 'v1' });

    llm.push({ json: goodPlan });
    const plan = await cli(
      [
        'workflow',
        'plan',
        'read the product names',
        '--url',
        `${site.url}/catalogue`,
        '--save',
        '--out',
        'plan.json',
      ],
      MODEL_ENV(),
    );
    expect(plan.stderr).toBe('');
    expect(plan.stdout).toMatch(
      /planned "Catalogue prices": 3 nodes, AI nodes: read; \d+\+\d+ tokens; wrote plan.json/,
    );
    expect(plan.stdout).toContain('saved catalogue-prices v1');
    expect(validateWorkflow(JSON.parse(await readFile(join(dir, 'plan.json'), 'utf8'))).ok).toBe(true);
  }, 180_000);
});
