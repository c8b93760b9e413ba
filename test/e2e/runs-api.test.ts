import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import { parse } from 'csv-parse/sync';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { localRunsApi } from '../../lib/api/runs-local.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { activeLocalRuns } from '../../lib/runs/local-runner.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { finishWith, headingIn, tempStores } from '../support/runs-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let stores: Awaited<ReturnType<typeof tempStores>>;
let base: string;
let server: ServerType;
let modelDelayMs = 0;

beforeAll(async () => {
  [browser, site, llm, stores] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    tempStores('bfn-runs-api-'),
  ]);
  llm.setHandler((req) => {
    const reply = finishWith({ title: headingIn(req) ?? null });
    return modelDelayMs ? { delayMs: modelDelayMs, reply } : reply;
  });
  const app = runsApp();
  ({ server, base } = await serveOnLoopback(app.fetch));
});
afterAll(async () => {
  server?.close();
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await stores?.cleanup();
});

/** The API with local runs on this file's stores, browser and scripted model; `limits` as a server sets them. */
function runsApp(limits?: { runsPerTenant: number; concurrency: number }) {
  const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
  return createApp({
    keys: new Map([
      ['key-a', 'tenant-a'],
      ['key-b', 'tenant-b'],
    ]),
    policy,
    browser: async () => browser,
    runs: localRunsApi({
      runStore: stores.runStore,
      evidence: stores.evidence,
      browser: async () => browser,
      policy,
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
      ...(limits ? { limits } : {}),
    }),
  });
}

const call = (method: string, path: string, body?: unknown, key = 'key-a') =>
  fetch(base + path, {
    method,
    redirect: 'manual',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

const spec = {
  goal: 'the product name',
  mode: 'extract',
  outputSchema: { type: 'object', properties: { title: { type: 'string' } } },
  requiredFields: ['title'],
  concurrency: 2,
};

async function waitFor(runId: string, statuses: string[], key = 'key-a') {
  for (let i = 0; i < 600; i++) {
    const run = (await (await call('GET', `/v1/runs/${runId}`, undefined, key)).json()) as {
      status: string;
      totals: { counts: Record<string, number>; promptTokens: number; samples: number };
    };
    if (statuses.includes(run.status)) return run;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${runId} did not reach ${statuses.join('/')}`);
}

let runId: string;

describe('runs API', () => {
  it('POST /v1/runs with CSV text → 202, then the run finishes with counts, tokens, results and evidence', async () => {
    const csv = [
      'sample_id,url,shelf',
      `lamp,${site.url}/products/desk-lamp.html,A`,
      `chair,${site.url}/products/oak-chair.html,B`,
      // Not on the allow-list: the network guard refuses it and the sample fails, the run does not.
      'outside,http://example.test/page,C',
    ].join('\n');
    const res = await call('POST', '/v1/runs', { spec, csv });
    expect(res.status).toBe(202);
    runId = ((await res.json()) as { runId: string }).runId;
    const run = await waitFor(runId, ['done', 'failed']);
    expect(run.status).toBe('done');
    expect(run.totals.samples).toBe(3);
    expect(run.totals.counts).toMatchObject({ done: 2, failed: 1, pending: 0 });
    expect(run.totals.promptTokens).toBeGreaterThan(0);

    const json = (await (await call('GET', `/v1/runs/${runId}/results?format=json`)).json()) as {
      results: {
        sampleId: string;
        status: string;
        reason: string;
        data: unknown;
        evidence: { key: string }[];
      }[];
    };
    expect(json.results.map((r) => [r.sampleId, r.status])).toEqual([
      ['chair', 'done'],
      ['lamp', 'done'],
      ['outside', 'failed'],
    ]);
    expect(json.results[2]!.reason).toMatch(/blocked|not allowed/i);
    expect(json.results[1]!.data).toEqual({ title: 'Desk Lamp' });
    // Storage keys start with the tenant.
    for (const r of json.results)
      for (const e of r.evidence) expect(e.key.startsWith('tenant-a/')).toBe(true);

    const csvRes = await call('GET', `/v1/runs/${runId}/results?format=csv`);
    expect(csvRes.headers.get('content-type')).toMatch(/text\/csv/);
    const rows = parse(await csvRes.text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.sample_id, r.status, r.title])).toEqual([
      ['chair', 'done', 'Oak Chair'],
      ['lamp', 'done', 'Desk Lamp'],
      ['outside', 'failed', ''],
    ]);

    const shot = await call('GET', `/v1/runs/${runId}/evidence/samples/lamp/01_page.jpg`);
    expect(shot.status).toBe(200);
    expect(shot.headers.get('content-type')).toBe('image/jpeg');
    // JPEG starts with FF D8 FF.
    expect(
      Buffer.from(await shot.arrayBuffer())
        .subarray(0, 3)
        .toString('hex'),
    ).toBe('ffd8ff');
    expect((await call('GET', `/v1/runs/${runId}/evidence/samples/lamp/..%2F..%2Frun.json`)).status).toBe(
      400,
    );
    expect((await call('GET', `/v1/runs/${runId}/evidence/samples/lamp/none.jpg`)).status).toBe(404);
    expect((await call('GET', `/v1/runs/${runId}/evidence/samples/%E0%A4%A`)).status).toBe(400);
  });

  it('the runs routes are in /openapi.json', async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v1/runs', '/v1/runs/{id}', '/v1/runs/{id}/results', '/v1/runs/{id}/cancel']),
    );
  });

  it('another tenant cannot see, read or cancel the run: 404 everywhere', async () => {
    for (const [method, path] of [
      ['GET', `/v1/runs/${runId}`],
      ['GET', `/v1/runs/${runId}/results?format=json`],
      ['GET', `/v1/runs/${runId}/results?format=csv`],
      ['GET', `/v1/runs/${runId}/report`],
      ['GET', `/v1/runs/${runId}/evidence/samples/lamp/01_page.jpg`],
      ['POST', `/v1/runs/${runId}/cancel`],
      ['POST', `/v1/runs/${runId}/resume`],
    ] as const) {
      const res = await call(method, path, undefined, 'key-b');
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(((await res.json()) as { error: { kind: string } }).error.kind).toBe('not_found');
    }
    // The owner still sees it.
    expect((await call('GET', `/v1/runs/${runId}`)).status).toBe(200);
  });

  it('bad input: 400 naming the field or the CSV line', async () => {
    const cases: [unknown, RegExp][] = [
      [{ spec: { ...spec, goal: '' }, csv: 'sample_id,url\na,http://x.test/' }, /goal/],
      [{ spec: { ...spec, maxSteps: 0 }, csv: 'sample_id,url\na,http://x.test/' }, /maxSteps/],
      [{ spec, csv: 'sample_id,url\na,http://x.test/\nb,notaurl' }, /line 3, column 2 \(url\)/],
      [
        { spec, csv: 'sample_id,url\na,http://x.test/\na,http://y.test/' },
        /line 3: sample_id "a" is already used at csv line 2/,
      ],
      [{ spec, csv: 'id,link\na,http://x.test/' }, /"sample_id" and "url"/],
      [
        {
          spec: { ...spec, authProfile: { file: '/etc/passwd' } },
          samples: [{ sample_id: 'a', url: 'http://x.test/' }],
        },
        /authProfile\.file/,
      ],
      [{ spec, samples: [{ sample_id: 'a b', url: 'http://x.test/' }] }, /samples\[0\]: sample_id "a b"/],
      [{ csv: 'sample_id,url\na,http://x.test/' }, /spec: required/],
    ];
    for (const [body, message] of cases) {
      const res = await call('POST', '/v1/runs', body);
      expect(res.status).toBe(400);
      const err = ((await res.json()) as { error: { kind: string; message: string } }).error;
      expect(err.kind).toBe('invalid');
      expect(err.message).toMatch(message);
    }
  });

  it('cancel stops a run with samples left; resume finishes them, each with one result', async () => {
    modelDelayMs = 400;
    try {
      const samples = Array.from({ length: 6 }, (_, i) => ({
        sample_id: `s${i}`,
        url: `${site.url}/products/thing-${i}.html`,
      }));
      const res = await call('POST', '/v1/runs', { spec: { ...spec, concurrency: 1 }, samples });
      const id = ((await res.json()) as { runId: string }).runId;
      for (let i = 0; i < 100 && !(await stores.runStore.listResults('tenant-a', id)).length; i++)
        await new Promise((r) => setTimeout(r, 50));
      // Resuming a run that is still going would only do its work twice.
      const again = await call('POST', `/v1/runs/${id}/resume`);
      expect(again.status).toBe(409);
      expect(((await again.json()) as { error: { kind: string } }).error.kind).toBe('conflict');
      const cancel = await call('POST', `/v1/runs/${id}/cancel`);
      expect(cancel.status).toBe(202);
      const cancelled = await waitFor(id, ['cancelled']);
      expect((cancelled.totals.counts.pending ?? 0) + (cancelled.totals.counts.running ?? 0)).toBeGreaterThan(
        0,
      );
      modelDelayMs = 0;
      expect((await call('POST', `/v1/runs/${id}/resume`)).status).toBe(202);
      const done = await waitFor(id, ['done']);
      expect(done.totals.counts.done).toBe(6);
      const results = await stores.runStore.listResults('tenant-a', id);
      expect(results.map((r) => r.sampleId)).toEqual(samples.map((s) => s.sample_id));
    } finally {
      modelDelayMs = 0;
    }
  });

  it('a cancel right after the start sticks: the slice already working finishes, the run stays cancelled', async () => {
    modelDelayMs = 300;
    try {
      const samples = ['x1', 'x2', 'x3'].map((id) => ({
        sample_id: id,
        url: `${site.url}/products/${id}.html`,
      }));
      const res = await call('POST', '/v1/runs', { spec: { ...spec, concurrency: 1 }, samples });
      const id = ((await res.json()) as { runId: string }).runId;
      expect((await call('POST', `/v1/runs/${id}/cancel`)).status).toBe(202);
      // Wait until no sample is being worked on any more.
      for (let i = 0; i < 200; i++) {
        const list = await stores.runStore.listSamples('tenant-a', id);
        if (!list.some((s) => s.status === 'running')) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const run = (await (await call('GET', `/v1/runs/${id}`)).json()) as {
        status: string;
        totals: { counts: Record<string, number> };
      };
      expect(run.status).toBe('cancelled');
      expect(run.totals.counts.pending).toBeGreaterThanOrEqual(2);
      expect((await call('POST', `/v1/runs/${id}/cancel`)).status).toBe(202);
    } finally {
      modelDelayMs = 0;
    }
  });

  it('holds a key to its runs in progress and its samples at once (429 limit / 400 naming the field)', async () => {
    const limited = runsApp({ runsPerTenant: 1, concurrency: 2 });
    const start = (body: unknown, key = 'key-a') =>
      limited.request('/v1/runs', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    const samples = [{ sample_id: 'lamp', url: `${site.url}/products/desk-lamp.html` }];
    const tooWide = await start({ spec: { ...spec, concurrency: 3 }, samples });
    expect(tooWide.status).toBe(400);
    expect((await tooWide.json()).error.message).toMatch(/^spec\.concurrency: at most 2 samples at once/);
    const tooWideToo = await start({ spec, samples, concurrency: 5 });
    expect((await tooWideToo.json()).error.issues[0].path).toBe('concurrency');

    // Runs of the tests before may still be winding down in this process; they count too.
    for (let i = 0; i < 100 && activeLocalRuns('tenant-a') > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    modelDelayMs = 1500;
    try {
      // Sent together, one start gets the key's one place; the others are refused, not let in.
      const burst = await Promise.all([1, 2, 3, 4].map(() => start({ spec, samples })));
      expect(burst.map((r) => r.status).sort()).toEqual([202, 429, 429, 429]);
      const first = burst.find((r) => r.status === 202)!;
      const firstId = ((await first.json()) as { runId: string }).runId;
      const second = burst.find((r) => r.status === 429)!;
      expect(second.headers.get('retry-after')).toBe('30');
      const refused = await second.json();
      expect(refused.error).toMatchObject({ kind: 'limit', retryable: true });
      expect(refused.error.message).toContain('already has 1 run in progress');
      // Another key starts its own run meanwhile.
      const other = await start({ spec, samples }, 'key-b');
      expect(other.status).toBe(202);
      const otherId = ((await other.json()) as { runId: string }).runId;
      await waitFor(firstId, ['done', 'failed']);
      await waitFor(otherId, ['done', 'failed'], 'key-b');
    } finally {
      modelDelayMs = 0;
    }
    // The finished run gave its place back.
    const again = await start({ spec, samples });
    expect(again.status).toBe(202);
    await waitFor(((await again.json()) as { runId: string }).runId, ['done', 'failed']);
  });

  it('the report opens in Chromium with the rows, counts, screenshots and a working status filter', async () => {
    const res = await call('GET', `/v1/runs/${runId}/report`);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const file = join(stores.dir, 'report.html');
    await writeFile(file, await res.text());
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`file://${file}`);
      await expect.poll(() => page.locator('tr.sample').count()).toBe(3);
      expect(await page.locator('b.count[data-status=done]').textContent()).toBe('2');
      expect(await page.locator('b.count[data-status=failed]').textContent()).toBe('1');
      expect(await page.locator('tr[data-sample=lamp] .status').textContent()).toBe('done');
      expect(await page.locator('tr[data-sample=lamp] pre.data').textContent()).toContain('"Desk Lamp"');
      expect(Number(await page.locator('tr[data-sample=lamp] .tokens').textContent())).toBeGreaterThan(0);
      // Screenshots are inlined and decode as images; each carries its hash.
      const sizes = await page
        .locator('tr[data-sample=lamp] figure img')
        .evaluateAll((imgs) => imgs.map((i) => (i as HTMLImageElement).naturalWidth));
      expect(sizes.length).toBe(1);
      expect(sizes[0]).toBeGreaterThan(100);
      expect(await page.locator('tr[data-sample=lamp] figure').getAttribute('data-sha256')).toMatch(
        /^[0-9a-f]{64}$/,
      );
      expect(await page.locator('tr[data-sample=lamp] pre.actions').textContent()).toContain('"extract"');
      await page.selectOption('#filter', 'failed');
      expect(await page.locator('tr.sample:visible').count()).toBe(1);
      expect(await page.locator('tr.sample:visible').getAttribute('data-sample')).toBe('outside');
      expect(await page.locator('#shown').textContent()).toBe('1');
    } finally {
      await context.close();
    }
  });
});
