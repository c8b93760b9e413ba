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
import { readdirSync, readFileSync } from 'node:fs';
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
import { percentile, round, table } from './lib/report.ts';

const SIZES = (process.env.BENCH_SIZES ?? '100,1000').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 6);

/** A real-looking product page: nav, breadcrumbs, heading, price, specs table, reviews, footer. */
function productPage(n: number): string {
  const name = `Product ${n} ${['Lamp', 'Chair', 'Desk', 'Shelf', 'Rug'][n % 5]}`;
  const specs = Array.from(
    { length: 8 },
    (_, i) => `<tr><th>Spec ${i + 1}</th><td>${(n * 7 + i) % 97} units</td></tr>`,
  ).join('');
  const reviews = Array.from(
    { length: 4 },
    (_, i) =>
      `<li><b>Reviewer ${i}</b> <span>${(n + i) % 5} stars</span><p>Solid build, fair price, arrived on day ${i + 2}.</p></li>`,
  ).join('');
  const nav = Array.from({ length: 12 }, (_, i) => `<a href="/c/${i}">Category ${i}</a>`).join(' ');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title>
<style>body{font:15px sans-serif;margin:0}header,footer{background:#eef;padding:8px}main{padding:16px}</style></head>
<body><header><nav>${nav}</nav><form role="search"><input aria-label="Search" name="q"><button>Search</button></form></header>
<main><nav aria-label="Breadcrumb"><a href="/">Home</a> › <a href="/c/${n % 12}">Category ${n % 12}</a></nav>
<h1>${name}</h1><p class="price">$${(n % 400) + 19}.99</p><button>Add to cart</button>
<p>${'A well made item for everyday use. '.repeat(6)}</p><table>${specs}</table>
<section><h2>Reviews</h2><ul>${reviews}</ul></section></main>
<footer>${Array.from({ length: 10 }, (_, i) => `<a href="/f/${i}">Footer link ${i}</a>`).join(' ')}</footer></body></html>`;
}

/** RSS of this process plus every descendant (Chromium's browser, renderer and GPU processes). */
function treeRssBytes(): number {
  const children = new Map<number, number[]>();
  const rss = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      const pid = Number(name);
      rss.set(pid, Number(fields[21]) * 4096);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // The process ended while we looked.
    }
  }
  let total = 0;
  const stack = [process.pid];
  while (stack.length) {
    const pid = stack.pop()!;
    total += rss.get(pid) ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

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

/** AWS cost per 1,000 pages before model cost, from the measured per-sample time. */
function awsCost(sampleMs: number, slicesPerSample: number): string {
  const memoryGb = 2; // Chromium wants 1.5–2 GB on Lambda
  const lambdaGbSecond = 0.0000166667; // x86, us-east-1
  const lambdaRequest = 0.2 / 1e6;
  const coldStartMs = 1500; // unpacking Chromium + launch, amortised below
  const samplesPerWarmContainer = 50;
  const transition = 0.025 / 1000; // Standard workflows
  // Per sample in the Distributed Map child: start, Slice, Sample ended?, Sample done (+ 2 per extra slice).
  const transitions = 4 + 2 * Math.max(0, slicesPerSample - 1);
  const ddbWrite = 0.625 / 1e6; // on-demand write request unit
  const ddbWrites = 5; // sample running, checkpoint, result (conditional), sample final, rate bucket
  const ddbRead = 0.125 / 1e6;
  const ddbReads = 6; // result?, run, sample, checkpoint, spec, result after
  const s3Put = 0.005 / 1000;
  const s3Puts = 3; // screenshot, action log, checkpoint body when over the item limit
  const s3Get = 0.0004 / 1000;
  const seconds = (sampleMs + coldStartMs / samplesPerWarmContainer) / 1000;
  const lines: [string, number, string][] = [
    [
      'Lambda compute',
      seconds * memoryGb * lambdaGbSecond * 1000,
      `${round(seconds, 2)} s × ${memoryGb} GB at $${lambdaGbSecond}/GB-s`,
    ],
    [
      'Lambda requests',
      slicesPerSample * lambdaRequest * 1000,
      `${round(slicesPerSample, 2)} slice invocations/sample at $0.20/M`,
    ],
    [
      'Step Functions',
      transitions * transition * 1000,
      `${transitions} transitions/sample at $0.025/1k (Standard)`,
    ],
    [
      'DynamoDB',
      (ddbWrites * ddbWrite + ddbReads * ddbRead) * 1000,
      `${ddbWrites} writes + ${ddbReads} reads/sample, on demand`,
    ],
    ['S3', (s3Puts * s3Put + 2 * s3Get) * 1000, `${s3Puts} PUTs + 2 GETs/sample (merge, report)`],
  ];
  const total = lines.reduce((n, l) => n + l[1], 0);
  return [
    '\nestimated AWS cost per 1,000 pages (model cost excluded; us-east-1 list prices):',
    table([
      ['part', 'USD', 'assumption'],
      ...lines.map(([a, b, c]) => [a, round(b, 4), c]),
      [
        'total',
        round(total, 4),
        `sample time ${round(sampleMs)} ms measured here (p50, one sample per slice)`,
      ],
    ]),
  ].join('\n');
}

await main();
