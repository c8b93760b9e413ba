import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { agentEnv, currentUrl, isDecision, offered, reply } from '../support/agent-env.ts';
import { openPage } from '../support/browser.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from '../support/llm-server.ts';
import { type Flavour, idInPrompt } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
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
  // It asks to save and page on in one step; save_progress ends the batch, so the click is skipped
  // and it pages on at the next step, once the prompt shows page 1 saved.
  if (url.endsWith('/agent/invoices.html'))
    return /Data saved so far: [^\n]*INV-101/.test(r.text)
      ? reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Next') }])
      : reply([
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
    const notices: string[] = [];
    env.deps.onStep = (s) => {
      steps.push(`${s.step}:${s.actions.map((a) => a.tool).join('+')}`);
      notices.push(...s.notices.map((n) => `${s.step}:${n}`));
    };
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
    expect(steps).toEqual(['1:type+type+click', '2:click', '3:save_progress', '4:click', '5:done']);
    expect(notices).toContain('3:batch stopped: save_progress ends a step');
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
    expect(log.map((s: { step: number }) => s.step)).toEqual([1, 2, 3, 4, 5]);
    expect(log[4].memory).toBe('page 2 is the last');
    // The password reached the page but no request, log or evidence file.
    expect(JSON.stringify(llm.requests)).not.toContain(PASSWORD);
    expect(env.logs.join('\n')).not.toContain(PASSWORD);
    for (const key of await env.evidence.list('')) {
      const bytes = await readFile(env.evidence.pathOf(key));
      expect(bytes.toString('latin1')).not.toContain(PASSWORD);
    }
    expect(offered(decisions[0]!)).toHaveLength(12);
  });

  it('paints a secret over in screenshots and keeps it out of every request, log and file; bounces done until the required screenshot exists', async () => {
    const email = 'grace.hopper@secret-mail.example';
    const env = await agentEnv({ browser: () => browser, site, llm, flavour, variables: { email } });
    llm.setHandler((r) => {
      const step = Number(/^Step (\d+)/.exec(r.text)?.[1]);
      if (step === 1)
        return reply([
          { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Email'), text: '%email%' },
          { tool: 'click', id: idInPrompt(r.text, 'button', 'Sign in') },
        ]);
      if (step === 2) return reply([{ tool: 'done', data: { signedIn: true } }]);
      return reply([
        { tool: 'screenshot', label: 'signed_in' },
        { tool: 'done', data: { signedIn: true } },
      ]);
    });
    const state = await runAgent(
      {
        tenant: 't1',
        runId: 'r2',
        sampleId: `secret-${flavour}`,
        url: `${site.url}/login.html`,
        task: { goal: 'Sign in with my email', requiredArtifacts: ['signed_in'], maxSteps: 5 },
      },
      env.deps,
    );
    expect(state.status).toBe('done');
    const decisions = llm.requests.filter(isDecision);
    expect(decisions[2]!.text).toContain('missing screenshots (take them with these labels): signed_in');
    // The page echoes the email ("Signed in as …"); the model saw only the placeholder.
    expect(decisions[1]!.text).toContain('Signed in as %email%');
    expect(JSON.stringify(llm.requests)).not.toContain(email);
    expect(env.logs.join('\n')).not.toContain(email);
    const shot = state.evidence.find((e) => e.key.endsWith('/01_signed_in.png'))!;
    const png = await readFile(env.evidence.pathOf(shot.key));
    expect(sha256Hex(png)).toBe(shot.sha256);
    for (const key of await env.evidence.list(''))
      expect((await readFile(env.evidence.pathOf(key))).toString('latin1')).not.toContain(email);

    // Where the echoed email sits on screen, from the same page in the same state.
    const { page, context } = await openPage(browser, `${site.url}/login.html`);
    await page.fill('#email', email);
    await page.click('button[type=submit]');
    const box = (await page.locator('#status').evaluate((el) => {
      const r = document.createRange();
      r.selectNodeContents(el);
      const b = r.getBoundingClientRect();
      return { x: b.x, y: b.y, w: b.width, h: b.height };
    })) as { x: number; y: number; w: number; h: number };
    const darkShare = async (image: Buffer) =>
      page.evaluate(
        async ({ data, b }) => {
          const img = new Image();
          img.src = `data:image/png;base64,${data}`;
          await img.decode();
          const c = document.createElement('canvas');
          c.width = img.width;
          c.height = img.height;
          const g = c.getContext('2d')!;
          g.drawImage(img, 0, 0);
          const px = g.getImageData(Math.round(b.x), Math.round(b.y), Math.round(b.w), Math.round(b.h)).data;
          let dark = 0;
          for (let i = 0; i < px.length; i += 4)
            if (px[i] === 34 && px[i + 1] === 34 && px[i + 2] === 34) dark++;
          return dark / (px.length / 4);
        },
        { data: image.toString('base64'), b: box },
      );
    const plain = await page.screenshot({ type: 'png' });
    expect(await darkShare(plain)).toBeLessThan(0.05);
    expect(await darkShare(png)).toBeGreaterThan(0.95);
    await context.close();
  });
});
