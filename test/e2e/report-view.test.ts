/**
 * The report worth sharing and `workflow show`, opened in real Chromium (issue 23 item 9, issue 28
 * item 6): a run of agent, extract and workflow samples planted in the stores (screenshots rendered
 * by the browser) is served by the API; its report opens through a signed link with no header, and
 * shows the chart, failures grouped, tokens by mode, heals, per-field columns and screenshots; a
 * rendered screenshot of it is not blank; expired, tampered and other-run links are refused. The
 * workflow page opens from the API (tenant-scoped, under its CSP) and from the CLI with a sample's
 * results and heal, deterministic and AI nodes in different colours, without a CSP complaint.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser, Page } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { signReportToken } from '../../lib/api/report-link.ts';
import { workflowShowCommand } from '../../lib/cli/workflow-show.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { Json, JsonObject } from '../../lib/store/ports.ts';
import { WORKFLOW_PAGE_CSP } from '../../lib/workflows/show.ts';
import { tempRoot } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { serveOnLoopback } from '../support/serve.ts';

const TENANT = 'local';
const KEY = new TextEncoder().encode('report-view-test-key-0123456789abcdef');
let browser: Browser;
let server: ServerType;
let base: string;
let root: string;
let runStore: LocalRunStore;
let evidence: LocalEvidenceStore;
let workflows: LocalWorkflowStore;
const savedEnv: Record<string, string | undefined> = {};

const WORKFLOW = {
  name: 'Shop flow',
  inputs: { product: { type: 'string', default: 'kettle' } },
  nodes: [
    {
      alias: 'open_shop',
      description: 'open the catalogue',
      type: 'browser_action',
      config: { action: 'navigate', url: 'https://shop.test/' },
    },
    {
      alias: 'add_to_cart',
      description: 'put the product in the cart',
      type: 'browser_action',
      config: {
        action: 'click',
        target: {
          candidates: [
            { kind: 'css', value: '.buy-btn' },
            { kind: 'role', role: 'button', name: 'Add to cart' },
          ],
          instruction: 'click the Add to cart button',
        },
      },
    },
    {
      alias: 'each_offer',
      type: 'iterate',
      config: {
        over: '[1, 2]',
        nodes: [
          {
            alias: 'read_offer',
            type: 'browser_ai_query',
            config: { method: 'extract', instruction: 'read the offer price' },
          },
        ],
      },
    },
    {
      alias: 'guard',
      type: 'handle',
      config: {
        nodes: [{ alias: 'tidy', type: 'transform', config: { expression: 'inputs.product' } }],
        fallback: [{ alias: 'ask', type: 'cognition', config: { instruction: 'say what went wrong' } }],
      },
    },
  ],
};

const HEAL = {
  alias: 'add_to_cart',
  path: 'nodes.1',
  url: 'https://shop.test/p/kettle',
  old: [{ kind: 'css', value: '.buy-btn' }],
  new: [{ kind: 'role', role: 'button', name: 'Add to cart' }],
  via: 'llm',
  reason: 'no candidate matched: .buy-btn is gone after the redesign',
  confirmed: true,
};

const page = (title: string, colour: string, body = '') =>
  `<html><body style="font:22px sans-serif;margin:30px;background:${colour}"><h1>${title}</h1>${body}</body></html>`;

interface Planted {
  id: string;
  status: 'done' | 'failed' | 'needs_review';
  reason: string;
  data: Json;
  usage: JsonObject;
  shots: [string, string][];
}

const LONG_NOTE = `Shipping notes: ${'handled with care, '.repeat(20)}end.`;
const SAMPLES: Planted[] = [
  {
    id: 'agent1',
    status: 'done',
    reason: 'done: all required fields present',
    data: { name: 'Steel kettle', price: '$25.00' },
    usage: { mode: 'agent', promptTokens: 5000, completionTokens: 300, costUsd: 0.01 },
    shots: [
      ['01_product.png', page('Steel kettle', '#ffffff', '<p>$25.00</p>')],
      ['02_final.png', page('Your cart', '#e3f2fd', '<p>1 item</p>')],
    ],
  },
  {
    id: 'agent2',
    status: 'failed',
    reason: 'the agent gave up: a captcha blocks the page',
    data: {},
    usage: { mode: 'agent', promptTokens: 2000, completionTokens: 100, costUsd: 0.004 },
    shots: [['01_final.png', page('Are you a robot?', '#ffebee')]],
  },
  {
    id: 'ex1',
    status: 'done',
    reason: 'extracted',
    data: { name: 'Red lamp', price: '$12.00', notes: LONG_NOTE },
    usage: { mode: 'extract', promptTokens: 1200, completionTokens: 80, costUsd: 0.002 },
    shots: [['01_page.jpg', page('Red lamp', '#fff8e1')]],
  },
  {
    id: 'ex2',
    status: 'failed',
    reason: 'could not open https://shop.test/p/ex2: net::ERR_CONNECTION_REFUSED',
    data: null,
    usage: { mode: 'extract', promptTokens: 0, completionTokens: 0, costUsd: 0 },
    shots: [['01_page.jpg', page('Error', '#eeeeee')]],
  },
  {
    id: 'ex3',
    status: 'failed',
    reason: 'could not open https://shop.test/p/ex3: net::ERR_CONNECTION_REFUSED',
    data: null,
    usage: { mode: 'extract', promptTokens: 0, completionTokens: 0, costUsd: 0 },
    shots: [['01_page.jpg', page('Error', '#eeeeee')]],
  },
  {
    id: 'wf1',
    status: 'done',
    reason: 'workflow done',
    data: { name: 'Blue mug', price: '$8.00' },
    usage: {
      mode: 'workflow',
      workflow: { id: 'shop-flow', version: 1, name: 'Shop flow' },
      resolvedBy: { deterministic: 4 },
      heals: [],
      paid: [],
      promptTokens: 0,
      completionTokens: 0,
      costUsd: 0,
    },
    shots: [['01_final.png', page('Blue mug', '#e8f5e9')]],
  },
  {
    id: 'wf2',
    status: 'done',
    reason: 'workflow done',
    data: { name: 'Steel kettle', price: '$25.00' },
    usage: {
      mode: 'workflow',
      workflow: { id: 'shop-flow', version: 1, name: 'Shop flow' },
      resolvedBy: { deterministic: 3, 'heal-llm': 1 },
      heals: [HEAL],
      paid: [{ reason: 'heal', alias: 'add_to_cart', promptTokens: 900, completionTokens: 40 }],
      promptTokens: 900,
      completionTokens: 40,
      costUsd: 0.0015,
    },
    shots: [['01_final.png', page('Kettle in cart', '#e8f5e9')]],
  },
  {
    id: 'wf3',
    status: 'done',
    reason: 'done by the agent after the workflow failed',
    data: { name: 'Green pot', price: '$30.00' },
    usage: {
      mode: 'workflow',
      workflow: { id: 'shop-flow', version: 2, name: 'Shop flow' },
      resolvedBy: { deterministic: 1 },
      heals: [],
      paid: [{ reason: 'fallback', promptTokens: 3000, completionTokens: 200 }],
      fallback: { reason: 'add_to_cart: no candidate matched and the heal found nothing' },
      promptTokens: 3000,
      completionTokens: 200,
      costUsd: 0.006,
    },
    shots: [['01_final.png', page('Green pot', '#e8f5e9')]],
  },
];

async function plantRun(runId: string): Promise<void> {
  const now = new Date().toISOString();
  await runStore.createRun({
    tenant: TENANT,
    runId,
    status: 'done',
    spec: {
      goal: 'Open each product page, read its name and price, and add it to the cart',
      mode: 'agent',
      model: 'openai/gpt-4.1-mini',
      concurrency: 3,
      outputSchema: { type: 'object', properties: { name: { type: 'string' }, price: { type: 'string' } } },
    },
    sampleCount: SAMPLES.length,
    createdAt: now,
    updatedAt: now,
  });
  await runStore.putSamples(
    SAMPLES.map((s) => ({
      tenant: TENANT,
      runId,
      sampleId: s.id,
      url: `https://shop.test/p/${s.id}`,
      input: {},
      status: s.status,
      attempts: 1,
      updatedAt: now,
    })),
  );
  const shooter = await browser.newPage();
  try {
    for (const s of SAMPLES) {
      const files: { key: string; sha256: string }[] = [];
      for (const [file, html] of s.shots) {
        await shooter.setContent(html);
        const jpeg = file.endsWith('.jpg');
        const body = await shooter.screenshot(jpeg ? { type: 'jpeg', quality: 70 } : { type: 'png' });
        const key = sampleEvidenceKey(TENANT, runId, s.id, file);
        const put = await evidence.put(key, body);
        files.push({ key, sha256: put.sha256 });
      }
      await runStore.putResult({
        tenant: TENANT,
        runId,
        sampleId: s.id,
        status: s.status,
        reason: s.reason,
        data: s.data,
        usage: s.usage,
        evidence: files,
        writtenAt: now,
      });
    }
  } finally {
    await shooter.close();
  }
  // The workflow sample's last state, as its checkpoint keeps it: what `workflow show --run` reads.
  const usage = (p: number) => ({
    promptTokens: p,
    completionTokens: 0,
    cachedTokens: 0,
    model: 'm',
    ms: 5,
    calls: 1,
  });
  const result = (alias: string, type: string, status: string, resolvedBy: string, tokens = 0) => ({
    alias,
    type,
    status,
    usage: usage(tokens),
    resolvedBy,
    ms: 12,
  });
  await runStore.saveCheckpoint(TENANT, runId, 'wf2', {
    seq: 3,
    savedAt: now,
    state: {
      run: {
        results: {
          open_shop: result('open_shop', 'browser_action', 'ok', 'deterministic'),
          add_to_cart: { ...result('add_to_cart', 'browser_action', 'ok', 'heal-llm', 940), heal: HEAL },
          'read_offer[0]': result('read_offer', 'browser_ai_query', 'ok', 'llm', 300),
          'read_offer[1]': result('read_offer', 'browser_ai_query', 'ok', 'cache'),
        },
        heals: [HEAL],
      },
    } as unknown as JsonObject,
  });
}

beforeAll(async () => {
  browser = await startBrowser();
  root = await tempRoot();
  const dirs = {
    BROWSERFN_RUNS_DIR: join(root, 'runs'),
    BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
    BROWSERFN_WORKFLOWS_DIR: join(root, 'workflows'),
  };
  for (const [k, v] of Object.entries(dirs)) {
    savedEnv[k] = process.env[k];
    process.env[k] = v;
  }
  runStore = new LocalRunStore(dirs.BROWSERFN_RUNS_DIR);
  evidence = new LocalEvidenceStore(dirs.BROWSERFN_EVIDENCE_DIR);
  workflows = new LocalWorkflowStore(dirs.BROWSERFN_WORKFLOWS_DIR);
  const app = createApp({
    keys: new Map([
      ['key-a', TENANT],
      ['key-b', 'other'],
    ]),
    policy: { allowPrivate: false, allowHosts: [] },
    runs: { runStore, evidence, launch: async () => undefined },
    workflows,
    reportLinkKey: KEY,
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
  await plantRun('r-view');
  await plantRun('r-other');
  for (const note of [undefined, 'healed add_to_cart: .buy-btn is gone']) {
    const latest = await workflows.getVersion(TENANT, 'shop-flow');
    await workflows.putVersion({
      tenant: TENANT,
      id: 'shop-flow',
      version: (latest?.version ?? 0) + 1,
      document: WORKFLOW as unknown as JsonObject,
      ...(note ? { note, parent: 1 } : {}),
    });
  }
}, 60_000);

afterAll(async () => {
  server?.close();
  await browser?.close();
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** A fresh context with no Authorization header, collecting console errors (CSP refusals among them). */
async function openClean(): Promise<{ page: Page; errors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) errors.push(m.text());
  });
  return { page, errors, close: () => context.close() };
}

const post = (path: string, body?: unknown, key = 'key-a') =>
  fetch(base + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

describe('the run report', () => {
  it('opens through a signed link with no header and shows what a person scans first', async () => {
    const res = await post('/v1/runs/r-view/report-link');
    expect(res.status).toBe(200);
    const link = (await res.json()) as { url: string; expiresAt: string };
    const lifetime = Date.parse(link.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(10 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(15 * 60_000);
    expect(new URL(link.url).pathname).toBe('/v1/runs/r-view/report');

    const { page, errors, close } = await openClean();
    try {
      const answer = await page.goto(link.url);
      expect(answer?.status()).toBe(200);
      expect(answer?.headers()['content-security-policy']).toContain("script-src 'sha256-");
      expect(await page.title()).toBe('browserfn run r-view');
      expect(await page.textContent('#goal')).toContain('read its name and price');
      expect(await page.textContent('#spec-model')).toBe('openai/gpt-4.1-mini');
      expect(await page.textContent('#spec-concurrency')).toBe('3');

      // The chart: one bar per status, as long as its count says, in its own colour.
      const bars = await page.locator('#status-chart rect.bar').evaluateAll((rects) =>
        rects.map((r) => ({
          status: r.getAttribute('data-status'),
          count: Number(r.getAttribute('data-count')),
          width: (r as SVGRectElement).getBBox().width,
          fill: getComputedStyle(r).fill,
        })),
      );
      const bar = Object.fromEntries(bars.map((b) => [b.status, b]));
      expect(bar.done?.count).toBe(5);
      expect(bar.failed?.count).toBe(3);
      expect(bar.done!.width).toBeGreaterThan(bar.failed!.width);
      expect(bar.failed!.width).toBeGreaterThan(0);
      expect(bar.done!.fill).not.toBe(bar.failed!.fill);

      // Failures grouped by reason: the two refused connections are one line, the captcha another.
      const groups = await page
        .locator('#failures tr.failure-group')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.querySelector('.n')?.textContent,
            r.querySelector('.why')?.textContent,
            r.querySelector('.ids')?.textContent,
          ]),
        );
      expect(groups).toEqual([
        ['2', 'could not open <url>: net::ERR_CONNECTION_REFUSED', 'ex2, ex3'],
        ['1', 'the agent gave up: a captcha blocks the page', 'agent2'],
      ]);

      // Tokens and cost by what paid for them.
      const costs = await page
        .locator('#costs tr.mode-cost')
        .evaluateAll((rows) =>
          rows.map((r) => [
            r.getAttribute('data-mode'),
            r.querySelector('.mode-tokens')?.textContent,
            r.querySelector('.mode-cost-usd')?.textContent,
          ]),
        );
      expect(costs).toEqual([
        ['agent', '7400', '$0.0140'],
        ['extract', '1280', '$0.0020'],
        ['workflow', '0', '$0.0000'],
        ['heal', '940', '$0.0015'],
        ['fallback', '3200', '$0.0060'],
      ]);

      // The heal: which sample and step, old → new locator, why.
      const heal = page.locator('#heals tr.heal[data-sample=wf2]');
      expect(await heal.getAttribute('data-alias')).toBe('add_to_cart');
      expect(await heal.locator('code.old').textContent()).toBe('css .buy-btn');
      expect(await heal.locator('code.new').textContent()).toBe('role button "Add to cart"');
      expect(await heal.textContent()).toContain('.buy-btn is gone after the redesign');

      // One column per output field, readable cells, long text clipped with the whole of it kept.
      const heads = await page.locator('thead th.field').allTextContents();
      expect(heads).toEqual(['name', 'price', 'notes']);
      expect(await page.textContent('tr[data-sample=ex1] td[data-field=name]')).toBe('Red lamp');
      expect(await page.textContent('tr[data-sample=wf2] td[data-field=price]')).toBe('$25.00');
      const notes = page.locator('tr[data-sample=ex1] td[data-field=notes] details.clip');
      const shown = await notes.locator('summary').textContent();
      expect(shown!.length).toBeLessThan(LONG_NOTE.length);
      await notes.locator('summary').click();
      expect(await notes.textContent()).toContain(LONG_NOTE);
      expect(await page.locator('tr[data-sample=wf3] .wf').textContent()).toBe('workflow shop-flow v2');

      // Each row shows its sample's final screenshot, decoded as a real image.
      const finals = await page
        .locator('tr.sample td.shot img')
        .evaluateAll((imgs) =>
          imgs.map((i) => [
            i.closest('tr')?.getAttribute('data-sample'),
            (i as HTMLImageElement).naturalWidth,
          ]),
        );
      expect(finals.map(([id]) => id)).toEqual(SAMPLES.map((s) => s.id));
      for (const [, width] of finals) expect(Number(width)).toBeGreaterThan(100);
      expect(await page.getAttribute('tr[data-sample=agent1] td.shot img', 'alt')).toContain('02_final.png');

      // A screenshot of the rendered report is not blank: many colours, and far from all white.
      const shot = PNG.sync.read(await page.screenshot({ fullPage: true, path: join(root, 'report.png') }));
      const colours = new Set<number>();
      let white = 0;
      for (let i = 0; i < shot.data.length; i += 4) {
        const [r, g, b] = [shot.data[i]!, shot.data[i + 1]!, shot.data[i + 2]!];
        colours.add((r << 16) | (g << 8) | b);
        if (r > 245 && g > 245 && b > 245) white++;
      }
      expect(colours.size).toBeGreaterThan(50);
      expect(white / (shot.data.length / 4)).toBeLessThan(0.95);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  }, 60_000);

  it('refuses an expired, tampered or other-run link, and a link opens nothing but its report', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const expired = signReportToken({ tenant: TENANT, runId: 'r-view', exp: nowS - 5 }, KEY);
    const other = (await (await post('/v1/runs/r-other/report-link')).json()) as { url: string };
    const otherToken = new URL(other.url).searchParams.get('token')!;
    const good = (await (await post('/v1/runs/r-view/report-link', { expiresInSeconds: 600 })).json()) as {
      url: string;
    };
    const goodToken = new URL(good.url).searchParams.get('token')!;
    const [payload, sig] = goodToken.split('.');
    const forged = Buffer.from(JSON.stringify({ t: 'other', r: 'r-view', e: nowS + 600 })).toString(
      'base64url',
    );
    const { page, close } = await openClean();
    try {
      for (const token of [
        expired,
        otherToken,
        `${forged}.${sig}`,
        `${payload}.${sig!.slice(0, -1)}${sig!.endsWith('A') ? 'B' : 'A'}`,
      ]) {
        const answer = await page.goto(`${base}/v1/runs/r-view/report?token=${encodeURIComponent(token)}`);
        expect(answer?.status()).toBe(401);
        expect(await page.textContent('body')).not.toContain('Steel kettle');
      }
      const expiredBody = await (await fetch(`${base}/v1/runs/r-view/report?token=${expired}`)).json();
      expect(JSON.stringify(expiredBody)).toMatch(/expired/);
      // The other run's own link still works; and a token is no key for anything else.
      expect((await page.goto(other.url))?.status()).toBe(200);
      expect((await fetch(`${base}/v1/runs/r-view/results?token=${goodToken}`)).status).toBe(401);
      expect(
        (await fetch(`${base}/v1/runs/r-view/report-link?token=${goodToken}`, { method: 'POST' })).status,
      ).toBe(401);
    } finally {
      await close();
    }
    // Asking: another key's run is not found; a lifetime beyond 24 h is refused naming the field.
    expect((await post('/v1/runs/r-view/report-link', undefined, 'key-b')).status).toBe(404);
    const tooLong = await post('/v1/runs/r-view/report-link', { expiresInSeconds: 90_000 });
    expect(tooLong.status).toBe(400);
    expect(JSON.stringify(await tooLong.json())).toContain('expiresInSeconds');
  }, 60_000);
});

describe('workflow show', () => {
  it('draws the stored workflow from the API, and with a sample’s results and heal from the CLI', async () => {
    const served = await fetch(`${base}/v1/workflows/shop-flow/show`, {
      headers: { authorization: 'Bearer key-a' },
    });
    expect(served.status).toBe(200);
    expect(served.headers.get('content-security-policy')).toBe(WORKFLOW_PAGE_CSP);
    const html = await served.text();
    const elsewhere = await fetch(`${base}/v1/workflows/shop-flow/show`, {
      headers: { authorization: 'Bearer key-b' },
    });
    expect(elsewhere.status).toBe(404);

    const file = join(root, 'shop-flow.html');
    const printed: string[] = [];
    const code = await workflowShowCommand(
      ['shop-flow', '--version', '1', '--run', 'r-view/wf2', '--out', file],
      (s) => printed.push(s),
    );
    expect(code).toBe(0);
    expect(printed).toEqual([file]);

    const { page, errors, close } = await openClean();
    try {
      await page.setContent(html);
      expect(await page.locator('#versions tr.version').count()).toBe(2);
      expect(await page.textContent('#versions tr.version.current')).toContain('v2');

      await page.goto(`file://${file}`);
      const nodes = await page
        .locator('.node')
        .evaluateAll((els) => els.map((e) => [e.getAttribute('data-alias'), e.getAttribute('data-kind')]));
      expect(nodes).toEqual([
        ['open_shop', 'deterministic'],
        ['add_to_cart', 'deterministic'],
        ['each_offer', 'control'],
        ['read_offer', 'ai'],
        ['guard', 'control'],
        ['tidy', 'deterministic'],
        ['ask', 'ai'],
      ]);
      // Nested: the AI query sits inside the iterate's lane, the fallback inside the handle's.
      expect(await page.locator('[data-alias=each_offer] .lane [data-alias=read_offer]').count()).toBe(1);
      expect(await page.locator('[data-alias=guard] .lane [data-alias=ask]').count()).toBe(1);
      expect(await page.locator('#graph > .edge').count()).toBe(3);
      const colour = (alias: string) =>
        page.locator(`[data-alias=${alias}]`).evaluate((e) => {
          const s = getComputedStyle(e);
          return `${s.borderTopColor} ${s.backgroundColor}`;
        });
      expect(await colour('open_shop')).toBe(await colour('add_to_cart'));
      expect(await colour('open_shop')).not.toBe(await colour('read_offer'));
      expect(await colour('read_offer')).toBe(await colour('ask'));
      expect(await colour('each_offer')).not.toBe(await colour('open_shop'));
      // Per node: the first candidate, the last result, tokens, and the heal old → new with why.
      const add = page.locator('[data-alias=add_to_cart]');
      expect(await add.locator('.target').textContent()).toBe('target: css .buy-btn');
      expect(await add.locator('.result').textContent()).toBe('last result: ok · heal-llm · 12 ms');
      expect(await add.locator('.tokens').textContent()).toBe('tokens: 940');
      expect(await add.locator('.heal code.old').textContent()).toBe('css .buy-btn');
      expect(await add.locator('.heal code.new').textContent()).toBe('role button "Add to cart"');
      expect(await add.locator('.heal').textContent()).toContain('.buy-btn is gone after the redesign');
      expect(await page.locator('[data-alias=read_offer] .result').first().textContent()).toContain(
        '2 runs: 2 ok, 0 failed',
      );
      expect(await page.locator('[data-alias=tidy] .result').count()).toBe(0);
      expect(await page.textContent('.sub')).toContain('results from run r-view, sample wf2');
      expect(await page.textContent('#versions tr.version.current')).toContain('v1');
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
    expect((await readFile(file, 'utf8')).includes('<script')).toBe(false);
  }, 60_000);
});
