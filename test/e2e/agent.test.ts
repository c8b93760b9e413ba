import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { agentEnv, currentUrl, isDecision, offered, reply } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from '../support/llm-server.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { type Flavour, idInPrompt } from '../support/ops-env.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  llm.setHandler(undefined);
});

const PASSWORD = 'correct-horse-battery-staple';
const INVOICES_GOAL =
  'Sign in with username alice and the password, open the invoices and list every invoice from March 2026';
const INVOICE_SCHEMA = {
  type: 'object',
  properties: {
    invoices: {
      type: 'array',
      items: {
        type: 'object',
        properties: { number: { type: 'string' }, date: { type: 'string' }, amount: { type: 'number' } },
        required: ['number', 'date', 'amount'],
      },
    },
  },
  required: ['invoices'],
};

/** Invoice rows as the page outline shows them to the model: the scripted model reads its data there. */
function marchRows(text: string) {
  const rows = [...text.matchAll(/(INV-\d+)\D+?(2026-\d\d-\d\d)\D+?(\d+\.\d\d)/g)];
  return rows
    .filter((m) => m[2]!.startsWith('2026-03'))
    .map((m) => ({ number: m[1]!, date: m[2]!, amount: Number(m[3]) }));
}

/** A model that does the invoice task the way a good one would, from what each prompt shows. */
function invoiceModel(r: RecordedRequest): ScriptedReply {
  if (!isDecision(r)) return { status: 400 };
  const url = currentUrl(r);
  if (url.endsWith('/agent/login.html'))
    return reply([
      { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Username'), text: 'alice' },
      { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Password'), text: '%password%' },
      { tool: 'click', id: idInPrompt(r.text, 'button', 'Sign in') },
    ]);
  if (url.endsWith('/agent/home.html'))
    return reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Invoices') }]);
  if (url.endsWith('/agent/invoices.html'))
    return reply([
      { tool: 'save_progress', data: { invoices: marchRows(r.text) }, note: 'page 1 read' },
      { tool: 'click', id: idInPrompt(r.text, 'link', 'Next') },
    ]);
  if (url.endsWith('/agent/invoices-2.html'))
    return reply([{ tool: 'done', data: { invoices: marchRows(r.text) } }], {
      memory_update: 'page 2 is the last',
    });
  return reply([{ tool: 'fail', reason: `unexpected page ${url}` }]);
}

describe.each<Flavour>(['openai', 'anthropic'])('agent through the %s SDK', (flavour) => {
  it('signs in, pages through the invoices and ends done with the March invoices and verifiable evidence', async () => {
    const env = await agentEnv({
      browser: () => browser,
      site,
      llm,
      flavour,
      variables: { password: PASSWORD },
    });
    llm.setHandler(invoiceModel);
    const steps: string[] = [];
    env.deps.onStep = (s) => steps.push(`${s.step}:${s.actions.map((a) => a.tool).join('+')}`);
    const state = await runAgent(
      {
        tenant: 't1',
        runId: 'r1',
        sampleId: 'invoices',
        url: `${site.url}/agent/login.html`,
        task: { goal: INVOICES_GOAL, schema: INVOICE_SCHEMA, maxSteps: 8 },
      },
      env.deps,
    );
    expect(state.reason).toMatch(/done/);
    expect(state.status).toBe('done');
    expect(state.data).toEqual({
      invoices: [
        { number: 'INV-101', date: '2026-03-02', amount: 120 },
        { number: 'INV-102', date: '2026-03-15', amount: 75.5 },
        { number: 'INV-103', date: '2026-03-28', amount: 42 },
      ],
    });
    expect(steps).toEqual(['1:type+type+click', '2:click', '3:save_progress+click', '4:done']);
    // The static system part is the same on every step (what providers cache).
    const decisions = llm.requests.filter(isDecision);
    expect(new Set(decisions.map((r) => r.system)).size).toBe(1);
    expect(decisions[0]!.system).toContain(INVOICES_GOAL);
    // The result is stored once, with the same data, and every evidence hash matches its file.
    const result = await env.runStore.getResult('t1', 'r1', 'invoices');
    expect(result?.status).toBe('done');
    expect(result?.data).toEqual(state.data);
    const files = result!.evidence.map((e) => e.key.split('/').pop());
    expect(files).toEqual(expect.arrayContaining(['action_log.json', 'result.json']));
    for (const e of result!.evidence)
      expect(sha256Hex(await readFile(env.evidence.pathOf(e.key)))).toBe(e.sha256);
    const log = JSON.parse(
      await readFile(
        env.evidence.pathOf(result!.evidence[0]!.key.replace(/[^/]+$/, 'action_log.json')),
        'utf8',
      ),
    );
    expect(log.map((s: { step: number }) => s.step)).toEqual([1, 2, 3, 4]);
    expect(log[3].memory).toBe('page 2 is the last');
    // The password reached the page but no request, log or evidence file.
    expect(JSON.stringify(llm.requests)).not.toContain(PASSWORD);
    expect(env.logs.join('\n')).not.toContain(PASSWORD);
    for (const key of await env.evidence.list('')) {
      const bytes = await readFile(env.evidence.pathOf(key));
      expect(bytes.toString('latin1')).not.toContain(PASSWORD);
    }
    expect(offered(decisions[0]!)).toHaveLength(12);
  });
});
