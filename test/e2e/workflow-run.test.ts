import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { openSession, type Session } from '../../lib/browser/session.ts';
import { newWorkflowState, runWorkflow, runWorkflowSlice } from '../../lib/workflows/executor.ts';
import type { WorkflowInputDoc } from '../../lib/workflows/schema.ts';
import type { WorkflowDeps, WorkflowState } from '../../lib/workflows/types.ts';
import { parseWorkflow, validateWorkflow, WorkflowError } from '../../lib/workflows/validate.ts';
import { startBrowser } from '../support/browser.ts';
import { type CatalogueSite, startCatalogueSite } from '../support/catalogue-site.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { client } from '../support/ops-env.ts';

/** The executor on a real page: control nodes, deterministic nodes with no model, AI nodes with one. */

let browser: Browser;
let site: CatalogueSite;
let llm: ScriptedModel;
let session: Session;

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([
    startBrowser(),
    startCatalogueSite({ products: 30 }),
    startScriptedModel(),
  ]);
});
afterAll(async () => {
  await session?.close();
  await closeGuardProxies();
  await llm?.close();
  await site?.close();
  await browser?.close();
});
beforeEach(async () => {
  await session?.close();
  session = await openSession({
    browser,
    policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [`127.0.0.1:${site.port}`] }),
  });
});

const deps = (page: Page, withModel = false): WorkflowDeps => ({
  page,
  checkNavigation: session.checkNavigation,
  ...(withModel ? { llm: client(llm, 'openai') } : {}),
});

/** A list page read with a deterministic extractor, then data work: no model anywhere. */
const catalogue: WorkflowInputDoc = {
  name: 'catalogue prices',
  inputs: { min_cents: { type: 'number', default: 0 } },
  nodes: [
    { alias: 'open_list', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
    {
      alias: 'is_list',
      type: 'browser_query',
      config: { method: 'validate', rules: [{ type: 'element_exists', selector: 'ul.product-list' }] },
    },
    {
      alias: 'cards',
      type: 'browser_query',
      config: {
        method: 'extract',
        instruction: 'every product with its name and price',
        extractor: {
          item: 'li.product-card',
          list: 'products',
          fields: { name: { selector: '.product-name' }, price: { selector: '.product-price' } },
        },
      },
    },
    { alias: 'count', type: 'transform', config: { expression: '$count(cards.products)' } },
    { alias: 'remember', type: 'context', config: { set: { first: 'cards.products[0].name' } } },
    {
      alias: 'size',
      type: 'route',
      config: {
        branches: [
          {
            when: 'count >= 20',
            nodes: [{ alias: 'big', type: 'transform', config: { expression: '"full page"' } }],
          },
        ],
        otherwise: [{ alias: 'small', type: 'transform', config: { expression: '"short page"' } }],
      },
    },
    {
      alias: 'each',
      type: 'iterate',
      config: {
        over: 'cards.products[[0..2]]',
        as: 'p',
        nodes: [
          { alias: 'label', type: 'transform', config: { expression: 'p.name & " costs " & p.price' } },
        ],
      },
    },
    {
      alias: 'summary',
      type: 'transform',
      config: { expression: '{"first": context.first, "size": big, "labels": each.label}' },
    },
  ],
};

describe('the workflow executor', () => {
  it('runs control and deterministic nodes end to end with zero model requests', async () => {
    const workflow = parseWorkflow(catalogue);
    const before = llm.requests.length;
    const state = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'r', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} },
      deps(session.page),
    );
    expect(state.status).toBe('done');
    expect(llm.requests.length).toBe(before);
    expect(state.outputs.count).toBe(20);
    expect(state.outputs.size).toEqual({ big: 'full page' });
    expect(state.results.small).toBeUndefined();
    expect(state.outputs.each).toHaveLength(3);
    expect((state.outputs.summary as { labels: string[] }).labels[0]).toMatch(/ costs \$/);
    expect(state.data.count).toBe(20);
    // Every node says how it was resolved, and what it cost: nothing.
    for (const r of Object.values(state.results)) expect(r.resolvedBy).toBe('deterministic');
    expect(state.usage.calls).toBe(0);
    expect(Object.keys(state.results)).toContain('label[2]');
  });

  it('runs in slices from plain JSON with the same result as one slice', async () => {
    const workflow = parseWorkflow(catalogue);
    const one = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'r1', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} },
      deps(session.page),
    );
    let state: WorkflowState = newWorkflowState({
      tenant: 't',
      runId: 'r2',
      sampleId: 's',
      workflow,
      url: `${site.url}/catalogue`,
      inputs: {},
    });
    let slices = 0;
    while (state.status === 'running' && slices < 40) {
      // Each slice on a fresh page (another machine): it goes back to where the last one left off.
      const fresh = await openSession({
        browser,
        policy: mergePolicy(
          { allowPrivate: false, allowHosts: [] },
          { allowHosts: [`127.0.0.1:${site.port}`] },
        ),
      });
      await fresh.page.goto(state.url);
      state = JSON.parse(
        JSON.stringify(await runWorkflowSlice(workflow, state, deps(fresh.page), { maxNodes: 2 })),
      );
      await fresh.close();
      slices++;
    }
    expect(slices).toBeGreaterThan(3);
    expect(state.status).toBe('done');
    expect(state.data).toEqual(one.data);
  });

  it('iterate with concurrency: elements in their own tabs, results in element order, lanes resumed across slices', async () => {
    const workflow = parseWorkflow({
      name: 'details at once',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
        {
          alias: 'cards',
          type: 'browser_query',
          config: {
            method: 'extract',
            instruction: 'the links of the first products',
            extractor: {
              item: 'li.product-card',
              list: 'products',
              fields: { href: { selector: 'a.product-link', attr: 'href' } },
            },
          },
        },
        {
          alias: 'each',
          type: 'iterate',
          config: {
            over: 'cards.products[[0..4]]',
            as: 'p',
            concurrency: 3,
            nodes: [
              {
                alias: 'open_detail',
                type: 'browser_action',
                config: { action: 'navigate', url: '{{p.href}}' },
              },
              {
                alias: 'title',
                type: 'browser_query',
                config: {
                  method: 'extract',
                  instruction: 'the product title',
                  extractor: { fields: { name: { selector: 'h1.product-title' } } },
                },
              },
            ],
          },
        },
      ],
    });
    const init = { tenant: 't', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} };
    const tabsBefore = session.page.context().pages().length;
    const one = await runWorkflow(workflow, { ...init, runId: 'c1' }, deps(session.page));
    expect(one.reason).toBe('every node ran');
    const names = (one.outputs.each as { title: { name: string } }[]).map((o) => o.title.name);
    // Element order, whatever order the tabs finished in: each title is the one its link leads to.
    const hrefs = (one.outputs.cards as { products: { href: string }[] }).products.slice(0, 5);
    const expected = await Promise.all(
      hrefs.map(async ({ href }) => {
        const html = await (await fetch(href)).text();
        return /<h1 class="product-title">([^<]+)</.exec(html)![1]!.replace(/&amp;/g, '&');
      }),
    );
    expect(names).toEqual(expected);
    expect(Object.keys(one.results)).toEqual(
      expect.arrayContaining(['title[0]', 'title[4]', 'open_detail[2]']),
    );
    expect(session.page.context().pages().length).toBe(tabsBefore);

    // The same in slices of one node per lane, through plain JSON: lanes resume where they were.
    let state: WorkflowState = newWorkflowState({ ...init, runId: 'c2', workflow });
    let slices = 0;
    let sawLanes = false;
    while (state.status === 'running' && slices < 40) {
      state = JSON.parse(
        JSON.stringify(await runWorkflowSlice(workflow, state, deps(session.page), { maxNodes: 1 })),
      );
      sawLanes ||= state.cursor.some((f) => (f.lanes?.length ?? 0) > 0);
      slices++;
    }
    expect(sawLanes).toBe(true);
    expect(state.status).toBe('done');
    expect(state.outputs.each).toEqual(one.outputs.each);
    expect(state.steps).toBe(one.steps);
  });

  it('handle: retries with backoff, then its fallback sees the error; an unhandled failure names node and selector', async () => {
    const workflow = parseWorkflow({
      name: 'handled',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
        {
          alias: 'guarded',
          type: 'handle',
          config: {
            retry: { attempts: 3, backoffMs: 10, factor: 2 },
            nodes: [
              {
                alias: 'needs_grid',
                type: 'browser_query',
                config: { method: 'validate', rules: [{ type: 'element_exists', selector: '.grid' }] },
              },
            ],
            fallback: [{ alias: 'why', type: 'transform', config: { expression: 'guarded.error.selector' } }],
          },
        },
        {
          alias: 'strict',
          type: 'browser_query',
          config: { method: 'validate', rules: [{ type: 'element_exists', selector: '#nope' }] },
        },
      ],
    });
    const state = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'h', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} },
      deps(session.page),
    );
    expect(state.outputs.why).toBe('.grid');
    expect(state.status).toBe('failed');
    expect(state.failedAt).toBe('strict');
    expect(state.reason).toContain('strict (browser_query): Element not found: #nope');
  });

  it('AI nodes ask the model and carry its usage; without a model they say so', async () => {
    const workflow = parseWorkflow({
      name: 'ai',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
        {
          alias: 'title',
          type: 'browser_ai_query',
          config: {
            method: 'extract',
            instruction: 'the page heading',
            schema: { type: 'object', properties: { heading: { type: 'string' } } },
          },
        },
        {
          alias: 'verdict',
          type: 'cognition',
          config: { instruction: 'is the heading about a catalogue?', input: 'title' },
        },
      ],
    });
    llm.setHandler((r) =>
      r.schemaName === 'cognition'
        ? { json: { result: 'yes' } }
        : { json: { data: { heading: 'Catalogue' }, done: true } },
    );
    const state = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'a', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} },
      deps(session.page, true),
    );
    expect(state.status).toBe('done');
    expect(state.outputs.title).toEqual({ heading: 'Catalogue' });
    expect(state.outputs.verdict).toBe('yes');
    expect(state.results.title!.resolvedBy).toBe('llm');
    expect(state.usage.calls).toBe(2);
    const none = await runWorkflow(
      workflow,
      { tenant: 't', runId: 'b', sampleId: 's', url: `${site.url}/catalogue`, inputs: {} },
      deps(session.page),
    );
    expect(none.status).toBe('failed');
    expect(none.reason).toMatch(/title \(browser_ai_query\): .*model/);
  });

  it('bad documents get every problem named by alias and field', () => {
    const r = validateWorkflow({
      name: 'bad',
      nodes: [
        { alias: 'go', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.site}}' } },
        { alias: 'go', type: 'transform', config: { expression: 'a +* b' } },
        {
          alias: 'ask',
          type: 'browser_ai_action',
          config: { action: 'click', instruction: 'type %password% here' },
        },
        { alias: 'Bad-Name', type: 'transform', config: { expression: '1' } },
      ],
    });
    expect(r.ok).toBe(false);
    const issues = r.ok ? [] : r.issues;
    expect(issues).toContainEqual(expect.objectContaining({ alias: 'Bad-Name', field: 'nodes.3.alias' }));
    // Schema problems come first; fix them and the cross-node ones are all named.
    const fixed = validateWorkflow({
      name: 'bad',
      nodes: [
        { alias: 'go', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.site}}' } },
        { alias: 'go', type: 'transform', config: { expression: 'a +* b' } },
        {
          alias: 'ask',
          type: 'browser_ai_action',
          config: { action: 'click', instruction: 'type %password% here' },
        },
      ],
    });
    const all = fixed.ok ? [] : fixed.issues;
    expect(all.map((i) => `${i.alias} ${i.field}`)).toEqual(
      expect.arrayContaining([
        'go nodes.1.alias',
        'go nodes.1.config.expression',
        'ask nodes.2.config.instruction',
      ]),
    );
    expect(() => parseWorkflow({ name: 'x', nodes: [] })).toThrow(WorkflowError);
  });
});
