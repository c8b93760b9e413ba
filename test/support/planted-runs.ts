/**
 * Finished samples planted straight into the stores, the way an agent leaves them (result record,
 * action_log.json, screenshots of real pages rendered by Chromium), with the truth of each key point
 * known to the test: what the judge must rule, and what a truthful judge model would answer.
 */
import type { Page } from 'playwright-core';
import type { StepRecord } from '../../lib/agent/state.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import type { EvidenceStore, Json, RunStore } from '../../lib/store/ports.ts';

export type PlantedKind =
  | 'right'
  | 'contradicts-screenshot'
  | 'missing-field'
  | 'captcha'
  | 'step-budget'
  | 'skipped-part';

export interface PlantedSample {
  sampleId: string;
  kind: PlantedKind;
  product: string;
  goal: string;
  /** Truth of each goal part, in order (what a truthful model answers). */
  truth: boolean[];
  expected: 'pass' | 'fail';
  expectedBlocker: 'captcha' | 'none';
}

const productHtml = (name: string, price: string, extra = '') =>
  `<html><body style="font:20px sans-serif;margin:40px"><h1>${name}</h1><p class="price" style="font-size:48px">${price}</p><button>Add to cart</button>${extra}</body></html>`;
const cartHtml = (name: string, price: string) =>
  `<html><body style="font:20px sans-serif;margin:40px;background:#eef"><h1>Your cart</h1><ul><li>${name} — ${price}</li></ul><p>1 item</p></body></html>`;
const captchaHtml = () =>
  `<html><body style="font:20px sans-serif;margin:40px;background:#fee"><h1>Are you a robot?</h1><div style="width:300px;height:80px;border:2px solid #999">I'm not a robot ☐ — reCAPTCHA</div></body></html>`;

async function shot(page: Page, html: string): Promise<Uint8Array> {
  await page.setContent(html);
  return page.screenshot({ type: 'png' });
}

const step = (
  n: number,
  url: string,
  actions: StepRecord['actions'],
  extra: Partial<StepRecord> = {},
): StepRecord => ({
  step: n,
  url,
  signature: `sig${n}`,
  actions,
  tokens: { prompt: 0, completion: 0, cached: 0 },
  observeMs: 0,
  modelMs: 0,
  actMs: 0,
  ms: 0,
  notices: [],
  ...extra,
});

const act = (tool: string, input: Json, outcome: string, ok = true) => ({ tool, input, ok, outcome, ms: 5 });

/** The i-th planted sample: kinds cycle so every 40 hold 20 right and 20 wrong in four ways. */
export function plannedSample(i: number): PlantedSample {
  const product = `Kettle model K${100 + i}`;
  const goal = `Open the product page of ${product} and read its price. Then add it to the cart`;
  const wrongKinds: PlantedKind[] = [
    'contradicts-screenshot',
    'missing-field',
    'captcha',
    'step-budget',
    'skipped-part',
  ];
  const kind: PlantedKind =
    i % 2 === 0 ? 'right' : (wrongKinds[Math.floor(i / 2) % wrongKinds.length] ?? 'captcha');
  const truth =
    kind === 'right'
      ? [true, true]
      : kind === 'contradicts-screenshot'
        ? [false, true]
        : kind === 'skipped-part'
          ? [true, false]
          : kind === 'step-budget'
            ? [true, false]
            : kind === 'captcha'
              ? [false, false]
              : [true, true];
  return {
    sampleId: `s${String(i).padStart(3, '0')}`,
    kind,
    product,
    goal,
    truth,
    expected: kind === 'right' ? 'pass' : 'fail',
    expectedBlocker: kind === 'captcha' ? 'captcha' : 'none',
  };
}

/** Writes one planted sample into the stores; `page` renders its screenshots. */
export async function plantSample(
  stores: { runStore: RunStore; evidence: EvidenceStore },
  page: Page,
  tenant: string,
  runId: string,
  p: PlantedSample,
): Promise<void> {
  const price = `$${(20 + (Number(p.sampleId.slice(1)) % 50)).toFixed(2)}`;
  const wrongPrice = `$${(99 + (Number(p.sampleId.slice(1)) % 50)).toFixed(2)}`;
  const url = `https://shop.test/p/${p.sampleId}`;
  const key = (file: string) => sampleEvidenceKey(tenant, runId, p.sampleId, file);
  const put = (file: string, body: Uint8Array | string, type: string) =>
    stores.evidence.put(key(file), body, type);

  let steps: StepRecord[];
  let status = 'done';
  let reason = 'the task is done';
  let data: Json = { price, inCart: true };
  const shots: [string, string][] = [];
  if (p.kind === 'captcha') {
    steps = [
      step(1, url, [act('goto', { url }, 'navigated; the page shows a reCAPTCHA check')], {
        evaluation: 'a captcha appeared',
      }),
      step(2, url, [act('screenshot', { label: 'blocked' }, 'saved 01_blocked.png')]),
      step(3, url, [act('fail', { reason: 'a captcha blocks the page' }, 'stopped')]),
    ];
    shots.push(['01_blocked.png', captchaHtml()]);
    status = 'failed';
    reason = 'a captcha blocks the page';
    data = {};
  } else {
    steps = [
      step(1, url, [act('goto', { url }, 'navigated')], { evaluation: 'start', nextGoal: 'read the price' }),
      step(2, url, [act('screenshot', { label: 'product' }, 'saved 01_product.png')], {
        memory: `price read`,
      }),
      step(2, url, [act('screenshot', { label: 'product_again' }, 'saved 02_product_again.png')]),
    ];
    shots.push(['01_product.png', productHtml(p.product, price)]);
    // The same page again: a near-duplicate the judge should not pay for twice.
    shots.push(['02_product_again.png', productHtml(p.product, price)]);
    if (p.kind === 'contradicts-screenshot') data = { price: wrongPrice, inCart: true };
    if (p.kind === 'missing-field') data = { inCart: true };
    if (p.kind !== 'skipped-part' && p.kind !== 'step-budget') {
      steps.push(
        step(3, `${url}/cart`, [
          act('click', { id: 7 }, 'clicked [7] button "Add to cart"; navigated to /cart'),
        ]),
      );
      steps.push(step(4, `${url}/cart`, [act('screenshot', { label: 'cart' }, 'saved 03_cart.png')]));
      shots.push(['03_cart.png', cartHtml(p.product, price)]);
    } else data = { price, inCart: true };
    if (p.kind === 'step-budget') {
      for (let n = 3; n <= 10; n++)
        steps.push(
          step(n, url, [act('scroll', { direction: 'down' }, 'scrolled; nothing new')], {
            evaluation: 'still looking for the cart',
          }),
        );
      status = 'needs_review';
      reason = 'step budget of 10 used up before done';
      data = { price };
    }
  }
  for (const [file, html] of shots) await put(file, await shot(page, html), 'image/png');
  await put('action_log.json', JSON.stringify(steps, null, 2), 'application/json');
  await stores.runStore.putResult({
    tenant,
    runId,
    sampleId: p.sampleId,
    status: status as 'done',
    reason,
    data,
    usage: {},
    evidence: [],
    writtenAt: new Date().toISOString(),
  });
}

/** What a truthful judge model answers for a planted sample: each open goal point by its truth. */
export function truthfulReply(p: PlantedSample, openPoints: { index: number; point: string }[]) {
  return {
    keyPoints: openPoints.map((o) => {
      const part = o.point.toLowerCase().includes('cart') ? 1 : 0;
      const met = p.truth[part] ?? false;
      return {
        index: o.index,
        met: met ? 'yes' : 'no',
        evidenceStep: met ? 0 : part === 0 ? 2 : 3,
        why: met ? 'shown' : 'not shown',
      };
    }),
    blockedBy: p.kind === 'captcha' ? 'captcha' : 'none',
    impossibleTask: false,
    reasoning: `planted ${p.kind}`,
  };
}

/** The open key points as the judge lists them in its prompt (`1. …`), read back from the request text. */
export function openPointsIn(text: string): { index: number; point: string }[] {
  const tail = text.split('Open key points:')[1] ?? '';
  return [...tail.matchAll(/^(\d+)\. (.+)$/gm)].map((m) => ({ index: Number(m[1]), point: m[2] ?? '' }));
}
