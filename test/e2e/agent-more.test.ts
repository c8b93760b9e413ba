import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { agentEnv, currentUrl, isDecision, offered, perStep, reply, stepOf } from '../support/agent-env.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import {
  type RecordedRequest,
  type ScriptedModel,
  type ScriptedReply,
  startScriptedModel,
} from '../support/llm-server.ts';
import { idInPrompt, modelConfig } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

let n = 0;
const init = (path: string, task: Parameters<typeof runAgent>[0]['task']) => ({
  tenant: 't',
  runId: 'more',
  sampleId: `m${++n}`,
  url: `${site.url}${path}`,
  task,
});
const addOrWait = (step: number, r: RecordedRequest): ScriptedReply =>
  reply([
    step % 2 ? { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') } : { tool: 'wait', ms: 5 },
  ]);

describe('agent circuit breaker', () => {
  it('stops after 5 model failures in a row (the default) (500s after retries) as retryable, keeping saved data', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler(
      perStep((step) =>
        step === 1
          ? reply([{ tool: 'save_progress', data: { items: ['a'] }, note: 'first' }])
          : { status: 500 },
      ),
    );
    const state = await runAgent(init('/agent/counter.html', { goal: 'Collect', maxSteps: 10 }), env.deps);
    expect(state.status).toBe('partial_success');
    expect(state.retryable).toBe(true);
    expect(state.reason).toMatch(/circuit breaker: 5 infrastructure errors in a row \(retryable\).*500/);
    expect(state.data).toEqual({ items: ['a'] });
    // 1 good call, then 5 failed steps of 2 attempts each (maxRetries 1).
    expect(llm.requests.filter(isDecision)).toHaveLength(11);
    const result = await env.runStore.getResult('t', 'more', state.sampleId);
    expect(result?.status).toBe('partial_success');
  });

  it('a start page that answers 404 ends failed, saying so, without asking the model', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    const before = llm.requests.length;
    const state = await runAgent(init('/agent/no-such-page', { goal: 'Collect', maxSteps: 5 }), env.deps);
    expect(state.status).toBe('failed');
    expect(state.retryable).not.toBe(true);
    expect(state.reason).toMatch(
      /could not open http:\/\/.+\/agent\/no-such-page: the page answered HTTP 404 \(not found\)/,
    );
    expect(llm.requests.length).toBe(before);
  });

  it('stops after the browser dies and cannot be reopened, as retryable', async () => {
    const doomed = await startBrowser();
    const env = await agentEnv({ browser: () => doomed, site, llm, flavour: 'anthropic' });
    // After the first step, the whole browser process crashes (as an out-of-memory kill would).
    const cdp = await doomed.newBrowserCDPSession();
    env.deps.onStep = () => {
      cdp.send('Browser.crash').catch(() => undefined);
    };
    llm.setHandler(perStep(addOrWait));
    const state = await runAgent(init('/agent/counter.html', { goal: 'Count', maxSteps: 10 }), env.deps);
    expect(state.status).toBe('failed');
    expect(state.retryable).toBe(true);
    expect(state.step).toBe(1);
    expect(state.reason).toMatch(/circuit breaker: 5 infrastructure errors in a row \(retryable\)/);
    expect(state.reason).toMatch(/closed|crash|disconnected/i);
    await doomed.close().catch(() => undefined);
  });
});

describe('agent budgets and memory', () => {
  it('consolidates collected data when the steps run out without a done', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler((r) => {
      if (r.schemaName === 'final_result') {
        const collected = JSON.parse(/Data collected: (.*)/.exec(r.text)![1]!);
        return { json: { data: { items: collected.items, count: collected.items.length } } };
      }
      const step = stepOf(r);
      if (step === 1) return reply([{ tool: 'save_progress', data: { items: ['a'] }, note: '1' }]);
      if (step === 2) return reply([{ tool: 'save_progress', data: { items: ['b'] }, note: '2' }]);
      return { malformed: 'I think we are done here.' };
    });
    const state = await runAgent(init('/agent/counter.html', { goal: 'Collect', maxSteps: 3 }), env.deps);
    expect(state.status).toBe('partial_success');
    expect(state.reason).toContain('step budget of 3 used up');
    expect(state.data).toEqual({ items: ['a', 'b'], count: 2 });
    expect(llm.requests.filter((r) => r.schemaName === 'final_result')).toHaveLength(1);
    // The lost step is in the action log too, with why it was lost.
    const logKey = state.evidence.find((e) => e.key.endsWith('/action_log.json'))!.key;
    const log = JSON.parse(await readFile(env.evidence.pathOf(logKey), 'utf8'));
    expect(log.map((s: { step: number }) => s.step)).toEqual([1, 2, 3]);
    expect(log[2].notices[0]).toMatch(/^step lost: .*wrong shape/);
  });

  it('summarizes history every 10 steps with the summary model and offers what worked on the site', async () => {
    const summaryModel = await startScriptedModel({
      handler: () => ({ json: { summary: 'Clicked Add one five times; the count went up each time.' } }),
    });
    try {
      const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
      env.deps.summaryLlm = createLlmClient(modelConfig(summaryModel, 'anthropic'));
      llm.setHandler(
        perStep((step, r) =>
          step === 12 ? reply([{ tool: 'done', data: { count: 6 } }]) : addOrWait(step, r),
        ),
      );
      const state = await runAgent(
        init('/agent/counter.html', { goal: 'Count to six', maxSteps: 15 }),
        env.deps,
      );
      expect(state.status).toBe('done');
      expect(summaryModel.requests).toHaveLength(1);
      expect(summaryModel.requests[0]!.text).toMatch(/^1\. click \[\d+\] button "Add one"/m);
      const at = (s: number) => llm.requests.filter(isDecision).find((r) => stepOf(r) === s)!;
      expect(at(10).text).not.toContain('Earlier steps, summarized');
      expect(at(11).text).toContain('Earlier steps, summarized: Clicked Add one five times');
      expect(at(11).text).not.toMatch(/^1\. click/m);
    } finally {
      await summaryModel.close();
    }
  });

  const invoicesEnv = () =>
    agentEnv({
      browser: () => browser,
      site,
      llm,
      flavour: 'anthropic',
      variables: { pw: 'correct-horse-battery-staple' },
    });
  /** Signs in, opens the invoices, pages once (new items on step 4), then is done. */
  const pagingThroughInvoices = () =>
    llm.setHandler(
      perStep((step, r) => {
        const url = currentUrl(r);
        if (url.endsWith('/login.html'))
          return reply([
            { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Username'), text: 'alice' },
            { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Password'), text: '%pw%', submit: true },
          ]);
        if (url.endsWith('/home.html'))
          return reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Invoices') }]);
        if (url.endsWith('/invoices.html'))
          return reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Next') }]);
        if (step === 4)
          return reply([{ tool: 'save_progress', data: { invoices: ['INV-103', 'INV-090'] }, note: 'p2' }]);
        return reply([{ tool: 'done', data: {} }]);
      }),
    );

  it('grants bonus steps while pagination keeps yielding new items', async () => {
    const env = await invoicesEnv();
    pagingThroughInvoices();
    const state = await runAgent(
      init('/agent/login.html', { goal: 'Collect invoices', maxSteps: 5 }),
      env.deps,
    );
    const decisions = llm.requests.filter(isDecision);
    expect(decisions[3]!.text).toMatch(/^Step 4 of 5/);
    expect(decisions[4]!.text).toMatch(/^Step 5 of 8/);
    expect(offered(decisions[4]!)).toHaveLength(12);
    expect(state.status).toBe('done');
    // Memory of the site: what navigated before is offered on later steps.
    expect(decisions[2]!.text).toContain(
      'What worked or failed on this site before:\nworked: type "%pw%" into textbox "Password"\nworked: click link "Invoices"',
    );
  });

  it('with strictMaxSteps (the Stagehand SDK maxSteps), paging earns no bonus steps', async () => {
    const env = await invoicesEnv();
    pagingThroughInvoices();
    await runAgent(
      init('/agent/login.html', { goal: 'Collect invoices', maxSteps: 5, strictMaxSteps: true }),
      env.deps,
    );
    const decisions = llm.requests.filter(isDecision);
    expect(decisions[4]!.text).toMatch(/^Step 5 of 5/);
    expect(decisions).toHaveLength(5);
  });

  it('asks a targeted vision question on a page the DOM cannot explain, and adds the answer', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler((r) => {
      if (r.schemaName === 'vision_answer') return { json: { answer: 'A green bar labelled Revenue: 42.' } };
      return reply([{ tool: 'done', data: { revenue: 42 } }]);
    });
    const state = await runAgent(
      init('/agent/chart.html', { goal: 'Read the revenue', maxSteps: 3 }),
      env.deps,
    );
    const vision = llm.requests.find((r) => r.schemaName === 'vision_answer')!;
    expect(vision.images).toBe(1);
    expect(vision.text).toContain('Task: Read the revenue');
    const decision = llm.requests.find(isDecision)!;
    expect(decision.images).toBe(0);
    expect(decision.text).toContain(
      'Seen in a screenshot but not in the outline: A green bar labelled Revenue: 42.',
    );
    expect(state.status).toBe('done');
  });

  it('nudges when the expected items are in, and calls a done with fewer items a partial success', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler(
      perStep((step) =>
        step === 1
          ? reply([{ tool: 'save_progress', data: { items: ['a', 'b', 'c'] }, note: 'three' }])
          : reply([{ tool: 'done', data: {} }]),
      ),
    );
    const full = await runAgent(
      init('/agent/counter.html', { goal: 'Collect 3', expectedItems: 3 }),
      env.deps,
    );
    expect(llm.requests.filter(isDecision)[1]!.text).toContain(
      'All 3 expected items are collected. Call done now.',
    );
    expect(full.status).toBe('done');
    const short = await runAgent(
      init('/agent/counter.html', { goal: 'Collect 5', expectedItems: 5 }),
      env.deps,
    );
    expect(short.status).toBe('partial_success');
    expect(short.reason).toBe('done with 3 of 5 expected items');
  });
});

describe('agent time limits', () => {
  it('ends at the wall-clock limit with what it has', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'anthropic' });
    llm.setHandler((r) => {
      if (r.schemaName === 'final_result') return { json: { data: { items: ['a'] } } };
      return { delayMs: 600, reply: reply([{ tool: 'save_progress', data: { items: ['a'] }, note: 'a' }]) };
    });
    const state = await runAgent(init('/agent/counter.html', { goal: 'Slow', wallClockMs: 1000 }), env.deps);
    expect(state.status).toBe('partial_success');
    // Each step takes ≥ 600 ms of model time: the limit stops it after one or two.
    expect(state.reason).toMatch(/^wall-clock limit of 1 s reached after [12] steps/);
    expect(llm.requests.filter(isDecision).length).toBe(state.step);
    expect(state.data).toEqual({ items: ['a'] });
  });

  it('returns a running sample when the deadline nears, and the next call carries on from the checkpoint', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler(
      perStep((step) =>
        step === 1
          ? {
              delayMs: 1500,
              reply: reply([{ tool: 'save_progress', data: { items: ['first'] }, note: '1' }]),
            }
          : reply([{ tool: 'done', data: { items: ['second'] } }]),
      ),
    );
    const sample = init('/agent/counter.html', { goal: 'Two steps' });
    const first = await runAgent(sample, env.deps, { deadline: Date.now() + 5000 });
    expect(first.status).toBe('running');
    expect(first.step).toBe(1);
    expect(await env.runStore.getResult('t', 'more', sample.sampleId)).toBeUndefined();
    const second = await runAgent(sample, env.deps);
    expect(second.status).toBe('done');
    expect(second.step).toBe(2);
    expect(second.data).toEqual({ items: ['first', 'second'] });
  });

  it('downloads linked files into the evidence under safe names with their hashes', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler(
      perStep((step, r) =>
        step === 1
          ? reply([
              { tool: 'download', id: idInPrompt(r.text, 'link', 'March report (CSV)') },
              { tool: 'download', id: idInPrompt(r.text, 'link', 'Odd report') },
            ])
          : reply([{ tool: 'done', data: { files: 2 } }]),
      ),
    );
    const state = await runAgent(init('/agent/downloads.html', { goal: 'Download the reports' }), env.deps);
    expect(state.status).toBe('done');
    const files = state.evidence.map((e) => e.key.split('/').pop());
    expect(files).toEqual(expect.arrayContaining(['01_download_report.csv', '01_download_evil.csv']));
    const csv = state.evidence.find((e) => e.key.endsWith('01_download_report.csv'))!;
    const bytes = await readFile(env.evidence.pathOf(csv.key));
    expect(bytes.toString()).toBe(
      await readFile(new URL('../fixtures/site/agent/report.csv', import.meta.url), 'utf8'),
    );
    expect(sha256Hex(bytes)).toBe(csv.sha256);
    // Nothing was written outside the sample's folder.
    const prefix = csv.key.slice(0, csv.key.lastIndexOf('/') + 1);
    expect((await env.evidence.list('')).every((k) => k.startsWith(prefix))).toBe(true);
  });

  it('reads the page with extract and shows the answer on the next step', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'anthropic' });
    llm.setHandler((r) => {
      if (r.schemaName === 'extracted') {
        const count = /Count: (\d+)/.exec(r.text)![1];
        return { json: { data: { count: Number(count) }, done: true } };
      }
      return stepOf(r) === 1
        ? reply([
            {
              tool: 'extract',
              instruction: 'the current count',
              schema: JSON.stringify({
                type: 'object',
                properties: { count: { type: 'number' } },
                required: ['count'],
              }),
            },
          ])
        : reply([{ tool: 'done', data: { count: Number(/"count":(\d+)/.exec(r.text)![1]) } }]);
    });
    const state = await runAgent(init('/agent/counter.html', { goal: 'Read the count' }), env.deps);
    expect(llm.requests.filter(isDecision)[1]!.text).toContain('extracted: {"count":0}');
    expect(state.data).toEqual({ count: 0 });
    expect(state.usage.calls).toBe(3);
  });

  it('works on a page it is handed (an attached session) without reloading it', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    const { page, context } = await openPage(browser, `${site.url}/agent/counter.html`);
    await page.click('#inc');
    await page.click('#inc');
    env.deps.newPage = async () => ({ page, close: async () => undefined });
    llm.setHandler(
      perStep((_step, r) =>
        reply([{ tool: 'done', data: { count: Number(/Count: (\d+)/.exec(r.text)![1]) } }]),
      ),
    );
    const state = await runAgent(
      { ...init('/agent/counter.html', { goal: 'Report the count' }), url: page.url() },
      env.deps,
    );
    expect(state.data).toEqual({ count: 2 });
    expect(page.isClosed()).toBe(false);
    await context.close();
  });

  it('keeps a big page within the page budget, with the task words and what is in view first', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    llm.setHandler(perStep(() => reply([{ tool: 'fail', reason: 'just looking' }])));
    await runAgent(init('/large.html', { goal: 'Look around', pageBudget: 800 }), env.deps);
    const decision = llm.requests.find(isDecision)!;
    const page = decision.text.slice(decision.text.indexOf('Current page:'));
    expect(page).toMatch(/lines left out, \d+ of them interactive: token budget 800/);
    expect(page.length).toBeLessThan(800 * 4 + 600);
  });
});
