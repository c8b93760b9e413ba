/**
 * The run test/e2e/report-view.test.ts opens: agent, extract, workflow and scenario samples as their slices
 * leave them (results with the per-sample usage contract, screenshots rendered by Chromium, a workflow
 * sample's checkpoint with its node results and heal), and the workflow they ran.
 */
import type { Browser } from 'playwright-core';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import type { EvidenceStore, Json, JsonObject, RunStore } from '../../lib/store/ports.ts';

export const TENANT = 'local';

export const WORKFLOW = {
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

export const HEAL = {
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

export const LONG_NOTE = `Shipping notes: ${'handled with care, '.repeat(20)}end.`;
export const SAMPLES: Planted[] = [
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
    id: 'sc1',
    status: 'done',
    reason: 'scenario passed: 2 steps, 2 verifications',
    data: {
      scenario: 'passed',
      failedStep: null,
      stepsCompleted: 2,
      steps: 2,
      verificationsPassed: 2,
      verificationsFailed: 0,
    },
    usage: { mode: 'scenario', promptTokens: 700, completionTokens: 60, costUsd: 0.0012, steps: 2 },
    shots: [['step_2_end.png', page('Notes: Tea', '#f3e5f5')]],
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

/** Plants run `runId` (the samples above, screenshots rendered by `browser`) and wf2's checkpoint. */
export async function plantReportRun(
  stores: { runStore: RunStore; evidence: EvidenceStore },
  browser: Browser,
  runId: string,
): Promise<void> {
  const { runStore, evidence } = stores;
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
