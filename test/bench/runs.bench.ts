/**
 * bench:runs — a one-step extract task over generated local product pages, through the real local
 * state machine (aws-local-stepfunctions), real Chromium, the real OpenAI client against an instant
 * scripted model, and local-file stores. Prints pages/min, peak RSS (Node + Chromium), the time per
 * sample split into browser / snapshot / model / store, per-sample time at two run sizes (flatness),
 * and an AWS cost estimate per 1,000 pages from those measurements, with its assumptions.
 *
 *   npm run bench:runs                      (100 then 1,000 samples, concurrency 6)
 *   BENCH_SIZES=50,200 BENCH_CONCURRENCY=4 npm run bench:runs
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { modelConfig } from '../support/ops-env.ts';
import { finishWith, headingIn, tempStores } from '../support/runs-env.ts';
import { awsCost } from './lib/aws-cost.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { productPage } from './lib/product-page.ts';
import { percentile, round, table } from './lib/report.ts';
import { treeRssBytes } from './lib/rss.ts';

const SIZES = (process.env.BENCH_SIZES ?? '100,1000').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 6);

interface Timings {
  browserMs: number;
  snapshotMs: number;
  modelMs: number;
  storeMs: number;
}

async function main() {
  const pages = http.createServer((req, res) => {
    const m = /^\/p\/(\d+)\.html$/.exec(req.url ?? '');
    res.writeHead(m ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(m ? productPage(Number(m[1])) : '<h1>Not found</h1>');
  });
  await new Promise<void>((r) => pages.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
  const llm = await startScriptedModel({
    handler: (req) => finishWith({ name: headingIn(req) ?? null }),
  });
  const browser = await launchBrowser();
  const spec = parseTaskSpec({
    goal: 'the product name',
    mode: 'extract',
    outputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    requiredFields: ['name'],
    concurrency: CONCURRENCY,
  });
  const client = createLlmClient(modelConfig(llm, 'openai'));
  const rows: (string | number)[][] = [
    ['samples', 'pages/min', 'per sample ms (wall/conc.)', 'p50 ms', 'p95 ms', 'peak RSS MB', 'ok'],
  ];
  let last: { split: Timings; perSampleMs: number; slices: number; results: number } | undefined;
  const outcome = new BenchOutcome('bench:runs', 'samples');
  for (const size of SIZES) {
    const stores = await tempStores('bfn-bench-runs-');
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant: 'bench',
      spec,
      samples: Array.from({ length: size }, (_, i) => ({
        sampleId: `p${String(i).padStart(5, '0')}`,
        url: `${origin}/p/${i}.html`,
        input: {},
      })),
    });
    let slices = 0;
    const handlers = runHandlers({
      runStore: stores.runStore,
      evidence: stores.evidence,
      slices: agentSliceRunner,
      browser: async () => browser,
      policy: { allowPrivate: false, allowHosts: [new URL(origin).host] },
      llmFor: async () => client,
      onSlice: () => {
        slices++;
      },
    });
    let peak = treeRssBytes();
    const sampler = setInterval(() => {
      peak = Math.max(peak, treeRssBytes());
    }, 250);
    const t0 = performance.now();
    await startLocalRun(input, handlers).result;
    const wallMs = performance.now() - t0;
    clearInterval(sampler);
    const results = await stores.runStore.listResults('bench', input.runId);
    const ok = results.filter((r) => r.status === 'done').length;
    // Every sample of every size: done, with its own page's product name.
    for (let i = 0; i < size; i++) {
      const r = results.find((x) => x.sampleId === `p${String(i).padStart(5, '0')}`);
      const name = String((r?.data as { name?: unknown } | null)?.name ?? '');
      outcome.record(
        r?.status === 'done' && name.startsWith(`Product ${i} `),
        `run of ${size}, sample ${i}: ${r ? `${r.status} ${JSON.stringify(r.data)} (${r.reason})` : 'no result'}`,
      );
    }
    const sampleMs = results.map((r) => Number(r.usage.ms ?? 0));
    const split: Timings = { browserMs: 0, snapshotMs: 0, modelMs: 0, storeMs: 0 };
    for (const r of results) {
      const t = (r.usage as { timings?: Partial<Timings> }).timings ?? {};
      for (const k of Object.keys(split) as (keyof Timings)[]) split[k] += (t[k] ?? 0) / results.length;
    }
    rows.push([
      size,
      round((size / wallMs) * 60_000),
      round((wallMs / size) * CONCURRENCY),
      round(percentile(sampleMs, 50)),
      round(percentile(sampleMs, 95)),
      round(peak / 1e6),
      `${ok}/${size}`,
    ]);
    last = { split, perSampleMs: percentile(sampleMs, 50), slices, results: results.length };
    await stores.cleanup();
  }
  await outcome.gate(async () => {
    await browser.close();
    await llm.close();
    pages.close();
  });
  console.log(
    `\nbench:runs — one-step extract, concurrency ${CONCURRENCY}, local state machine, local-file stores\n`,
  );
  console.log(table(rows));
  if (last) {
    const s = last.split;
    const sum = s.browserMs + s.snapshotMs + s.modelMs + s.storeMs;
    console.log('\ntime per sample (mean over the largest run), ms:');
    console.log(
      table([
        [
          'browser (context, goto, settle, screenshot)',
          'snapshot (+ prompt)',
          'model (scripted, HTTP)',
          'store',
          'sum',
        ],
        [round(s.browserMs), round(s.snapshotMs), round(s.modelMs), round(s.storeMs), round(sum)],
      ]),
    );
    console.log(awsCost(last.perSampleMs, last.slices / Math.max(1, last.results)));
  }
  await browser.close();
  await closeGuardProxies();
  await llm.close();
  pages.close();
}

await main();
