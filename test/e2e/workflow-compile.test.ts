/**
 * Compiling real AI runs on the generated catalogue: an agent sample (driven by the scripted model
 * through the real agent loop) and extract-mode samples (the real extract op) become workflows that
 * replay on other pages with 0 model requests and the same results; an extractor that finds nothing
 * on the redesign asks the model once. The exported Playwright script runs on its own.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { chromiumArgs, embeddedExecutablePath } from '../../lib/browser/launch.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { act } from '../../lib/ops/act.ts';
import { extract } from '../../lib/ops/extract.ts';
import {
  CompileError,
  compileActs,
  compileAgentSample,
  compileExtractSample,
} from '../../lib/workflows/compile.ts';
import { exportPlaywright } from '../../lib/workflows/export-playwright.ts';
import { agentEnv, currentUrl, isDecision, reply } from '../support/agent-env.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type CatalogueSite, PAGE_SIZE, product, startCatalogueSite } from '../support/catalogue-site.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { client, idInPrompt } from '../support/ops-env.ts';
import { replay } from '../support/workflow-replay.ts';

const run = promisify(execFile);

let browser: Browser;
let site: CatalogueSite;
let llm: ScriptedModel;
let model: LlmClient;
let context: BrowserContext | undefined;
let page: Page;

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([
    startBrowser(),
    startCatalogueSite({ products: 60 }),
    startScriptedModel(),
  ]);
  model = client(llm, 'openai');
});
afterAll(async () => {
  await context?.close();
  await Promise.all([browser?.close(), site?.close(), llm?.close()]);
});
beforeEach(async () => {
  await context?.close();
  ({ page, context } = await openPage(browser));
  site.setTemplate('v1');
  llm.requests.length = 0;
  llm.setHandler(undefined);
});

const price = (cents: number) => Math.round(cents) / 100;
/** A list page's products as a model reads them (what the scripted model answers). */
const listData = (pageNo: number) => ({
  products: Array.from({ length: PAGE_SIZE }, (_, i) => product((pageNo - 1) * PAGE_SIZE + i + 1)).map(
    (p) => ({
      name: p.name,
      price: price(p.cents),
      inStock: p.inStock,
    }),
  ),
});
const LIST_SCHEMA = {
  type: 'object',
  properties: {
    products: {
      type: 'array',
      items: {
        type: 'object',
        properties: { name: { type: 'string' }, price: { type: 'number' }, inStock: { type: 'boolean' } },
        required: ['name', 'price', 'inStock'],
      },
    },
  },
  required: ['products'],
};

describe('compile an agent sample', () => {
  it('records candidates in the action log, compiles, and replays on another product with 0 model requests and the same kind of result', async () => {
    const env = await agentEnv({
      browser: () => browser,
      site: { port: site.port } as FixtureServer,
      llm,
      flavour: 'openai',
    });
    llm.setHandler((r) => {
      if (!isDecision(r)) return { status: 400 };
      const url = currentUrl(r);
      // Decides from what the page shows, so a batch cut short by a page change is picked up again.
      if (url.includes('/product/') && r.text.includes('Saved to your list'))
        return reply([{ tool: 'click', id: idInPrompt(r.text, 'button', 'Add to cart') }]);
      if (url.includes('/product/') && /checkbox: Gift wrap checked/.test(r.text))
        return reply([{ tool: 'click', id: idInPrompt(r.text, 'button', 'Save for later') }]);
      if (url.includes('/product/'))
        return reply([
          { tool: 'type', id: idInPrompt(r.text, 'spinbutton', 'Quantity'), text: '2' },
          { tool: 'click', id: idInPrompt(r.text, 'checkbox', 'Gift wrap') },
          { tool: 'click', id: idInPrompt(r.text, 'button', 'Save for later') },
        ]);
      const line = /Added \d+ × [^.]+ to your cart\./.exec(r.text)?.[0] ?? '';
      return reply([{ tool: 'done', data: { cartLine: line } }]);
    });
    const state = await runAgent(
      {
        tenant: 't1',
        runId: 'wf-agent',
        sampleId: 's1',
        url: `${site.url}/product/1`,
        input: { quantity: '2' },
        task: { goal: 'Add 2 gift-wrapped units to the cart and report the cart line', maxSteps: 5 },
      },
      env.deps,
    );
    expect(state.reason).toMatch(/done/);
    expect(state.status).toBe('done');
    expect(state.data).toEqual({ cartLine: `Added 2 × ${product(1).name} to your cart.` });
    const result = await env.runStore.getResult('t1', 'wf-agent', 's1');
    const logKey = result!.evidence.find((e) => e.key.endsWith('action_log.json'))!.key;
    const resultKey = result!.evidence.find((e) => e.key.endsWith('result.json'))!.key;
    const actionLog = JSON.parse(await readFile(env.evidence.pathOf(logKey), 'utf8'));
    const resultJson = JSON.parse(await readFile(env.evidence.pathOf(resultKey), 'utf8'));
    // The log carries, per element action, the element's candidates and what followed it.
    expect(actionLog[0].actions[0].recorded.candidates).toContainEqual({ kind: 'css', value: '#qty' });
    expect(actionLog[0].actions[1].recorded.after.checked).toBe(true);

    // Compile with the sample's final page open, so its data is pinned as a checked extractor.
    await page.goto(resultJson.url);
    const wf = await compileAgentSample(
      { actionLog, result: resultJson, input: { quantity: '2' }, sampleId: 's1' },
      { page },
    );
    expect(wf.nodes.map((n) => n.type)).toEqual([
      'browser_action',
      'browser_action',
      'browser_action',
      'browser_action',
      'browser_action',
      'browser_query',
    ]);
    expect(wf.nodes[2]!.config).toMatchObject({
      action: 'check',
      postconditions: [{ kind: 'checked', equals: true }],
    });
    expect(wf.nodes[1]!.config).toMatchObject({ action: 'fill', value: '{{inputs.quantity}}' });
    // A click that stayed on the page is checked by the message it brought up.
    expect(wf.nodes[3]!.config).toMatchObject({
      action: 'click',
      postconditions: [{ kind: 'text', contains: 'Saved to your list' }],
    });
    expect(wf.nodes[4]!.config).toMatchObject({
      action: 'click',
      postconditions: [{ kind: 'url', pattern: '*/cart*' }],
    });

    llm.requests.length = 0;
    const again = await replay(wf, { url: `${site.url}/product/21`, quantity: '3' }, { page, llm: model });
    expect(again.failedAt).toBeUndefined();
    expect(again.data).toEqual({ result: { cartLine: `Added 3 × ${product(21).name} to your cart.` } });
    expect(site.carts.at(-1)).toEqual({ id: 21, qty: 3, gift: true, template: 'v1' });
    expect(llm.requests).toHaveLength(0);
  });

  it('refuses a failed sample with the reason', async () => {
    await expect(
      compileAgentSample({
        actionLog: [],
        result: { status: 'failed', reason: 'step budget spent' },
        sampleId: 's9',
      }),
    ).rejects.toThrow(
      new CompileError(
        'sample s9 did not succeed (status failed: step budget spent); only a successful sample compiles',
      ),
    );
  });
});

describe('compile an extract sample', () => {
  it('derives a list extractor checked against the model, replays on another page with 0 requests, and heals once on the redesign', async () => {
    llm.setHandler((r) => {
      const pageNo = Number(
        /Catalogue — page (\d+)|Shop — page (\d+)/.exec(r.text)?.slice(1).find(Boolean) ?? 1,
      );
      return { json: { data: listData(pageNo), done: true } };
    });
    await page.goto(`${site.url}/catalogue?page=1`);
    const instruction = 'every product on the page with its name, price and whether it is in stock';
    const sample = await extract({ page, llm: model }, instruction, LIST_SCHEMA);
    expect(sample.data).toEqual(listData(1));
    const wf = await compileExtractSample(page, {
      url: page.url(),
      instruction,
      schema: LIST_SCHEMA,
      data: sample.data,
    });
    const node = wf.nodes[1]!;
    expect(node.type).toBe('browser_query');
    expect(node.config).toMatchObject({
      method: 'extract',
      extractor: { item: expect.any(String), list: 'products' },
    });

    llm.requests.length = 0;
    const page3 = await replay(wf, { url: `${site.url}/catalogue?page=3` }, { page, llm: model });
    expect(page3.data).toEqual({ data: listData(3) });
    expect(llm.requests).toHaveLength(0);

    // The redesign renamed every class: the extractor finds nothing, the model reads the page once.
    site.setTemplate('v2');
    const healed = await replay(wf, { url: `${site.url}/catalogue?page=2` }, { page, llm: model });
    expect(healed.results[1]).toMatchObject({ status: 'ok', resolvedBy: 'heal-llm' });
    expect(healed.data).toEqual({ data: listData(2) });
    expect(llm.requests).toHaveLength(1);
  });

  it('derives a record extractor on a detail page that gives the same values on other products', async () => {
    const data = {
      name: product(1).name,
      price: price(product(1).cents),
      sku: product(1).sku,
      inStock: true,
    };
    await page.goto(`${site.url}/product/1`);
    const wf = await compileExtractSample(page, {
      url: page.url(),
      instruction: 'name, price, SKU and stock',
      data,
    });
    expect(wf.nodes[1]!.type).toBe('browser_query');
    for (const id of [3, 44]) {
      const p = product(id);
      const r = await replay(wf, { url: `${site.url}/product/${id}` }, { page });
      expect(r.data).toEqual({
        data: { name: p.name, price: price(p.cents), sku: p.sku, inStock: p.inStock },
      });
    }
    // id 3 is out of stock: the boolean was read, not copied.
    expect(product(3).inStock).toBe(false);
  });

  it('keeps a model extraction when no selectors reproduce what the model said', async () => {
    await page.goto(`${site.url}/product/1`);
    const wf = await compileExtractSample(page, {
      url: page.url(),
      instruction: 'a summary',
      data: { summary: 'A cheerful kettle, great value' },
    });
    expect(wf.nodes[1]).toMatchObject({
      type: 'browser_ai_query',
      config: { method: 'extract', instruction: 'a summary' },
    });
  });
});

describe('export to Playwright', () => {
  async function runScript(source: string, args: string[]): Promise<{ stdout: string }> {
    const dir = await mkdtemp(join(tmpdir(), 'bfn-export-'));
    await symlink(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'));
    await writeFile(join(dir, 'workflow.ts'), source);
    return run(process.execPath, ['--import', 'tsx', join(dir, 'workflow.ts'), ...args], {
      cwd: dir,
      env: {
        ...process.env,
        CHROMIUM_PATH: await embeddedExecutablePath(),
        CHROMIUM_ARGS: chromiumArgs().join(' '),
      },
      timeout: 60_000,
    });
  }

  it('writes a script that runs on its own: candidates as a fallback chain, inputs as arguments, checks as post-conditions', async () => {
    await page.goto(`${site.url}/product/1`);
    const acts = [];
    for (const instruction of [
      'type "2" into the Quantity field',
      'check the Gift wrap checkbox',
      'click the Add to cart button',
    ])
      acts.push({ instruction, result: await act({ page }, instruction) });
    const wf = compileActs(acts, { startUrl: `${site.url}/product/1`, input: { qty: '2' } });
    const script = exportPlaywright(wf);
    expect(script).toContain("from 'playwright-core'");
    expect(script).toContain('--qty=');
    await runScript(script, [`--url=${site.url}/product/13`, '--qty=4']);
    expect(site.carts.at(-1)).toEqual({ id: 13, qty: 4, gift: true, template: 'v1' });
    // A post-condition that fails makes the script fail (exit code ≠ 0), with the step named.
    const broken = script.replace('"*/cart*"', '"*/checkout*"');
    await expect(runScript(broken, [`--url=${site.url}/product/14`])).rejects.toThrow(
      /click_add_to_cart: expected the URL to match \*\/checkout\*/,
    );
  }, 120_000);

  it('exports an extractor; the script prints the data', async () => {
    await page.goto(`${site.url}/product/1`);
    const data = { name: product(1).name, price: price(product(1).cents), inStock: true };
    const wf = await compileExtractSample(page, { url: page.url(), instruction: 'name, price, stock', data });
    const { stdout } = await runScript(exportPlaywright(wf), [`--url=${site.url}/product/10`]);
    const p = product(10);
    expect(JSON.parse(stdout)).toEqual({ data: { name: p.name, price: price(p.cents), inStock: p.inStock } });
  }, 120_000);
});
