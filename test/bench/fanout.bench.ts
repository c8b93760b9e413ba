/**
 * bench:fanout — a run that discovers its samples and fans out over them, end to end on this machine:
 * a generated paginated listing (50 links a page, numbered pager + Next) on an in-bench loopback
 * server, the Discover state reading it with real Chromium, then the inline Map over every found URL
 * with a one-step extract task (`mode: "extract"`) against an instant scripted model (real OpenAI
 * client), local-file stores, the real local state machine. Prints its ok count first (every URL of
 * the listing found, every sample done with the product's name; else it exits 1 with no figures),
 * then URLs/s discovered, pages/min processed, peak RSS (Node + Chromium), tokens tracked by the run
 * against those the model server billed, and a paper model of the same run on AWS at 1,000
 * concurrent Lambdas.
 *
 *   npm run bench:fanout                     (2,500 URLs: 50 listing pages × 50 links, concurrency 6)
 *   npm run bench:fanout -- --urls 200       (a smaller run)
 *   BENCH_CONCURRENCY=4 npm run bench:fanout
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
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
import { AWS, sampleCostLines } from './lib/aws-cost.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { productPage } from './lib/product-page.ts';
import { percentile, round, table } from './lib/report.ts';
import { treeRssBytes } from './lib/rss.ts';

const PER_PAGE = 50;
const { values } = parseArgs({ options: { urls: { type: 'string' } } });
const URLS = Number(values.urls ?? 2500);
if (!Number.isInteger(URLS) || URLS < 1)
  throw new Error(`--urls expects a positive whole number, got ${values.urls}`);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 6);
const LISTING_PAGES = Math.ceil(URLS / PER_PAGE);

/** Listing page `page` of LISTING_PAGES: its products, a numbered pager and a Next link. */
function listingPage(page: number): string {
  const first = (page - 1) * PER_PAGE;
  const items = Array.from({ length: Math.min(PER_PAGE, URLS - first) }, (_, i) => {
    const n = first + i;
    return `<li><a class="item" href="/p/${n}.html?utm_source=list">Product ${n}</a></li>`;
  }).join('');
  const pager = Array.from({ length: LISTING_PAGES }, (_, i) =>
    i + 1 === page
      ? `<span aria-current="page">${i + 1}</span>`
      : `<a href="/list?page=${i + 1}">${i + 1}</a>`,
  ).join(' ');
  const next = page < LISTING_PAGES ? ` <a rel="next" href="/list?page=${page + 1}">Next</a>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Catalogue ${page}</title></head>
<body><header><a href="/">Home</a> <a href="/about">About</a></header><main><h1>Catalogue</h1>
<ul>${items}</ul><nav aria-label="Pagination">${pager}${next}</nav></main></body></html>`;
}

async function main() {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const product = /^\/p\/(\d+)\.html$/.exec(url.pathname);
    const body =
      url.pathname === '/list'
        ? listingPage(Number(url.searchParams.get('page') ?? 1))
        : product
          ? productPage(Number(product[1]))
          : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? '<h1>Not found</h1>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const llm = await startScriptedModel({
    handler: (req) => finishWith({ name: headingIn(req) ?? null }, req),
  });
  const browser = await launchBrowser();
  const client = createLlmClient(modelConfig(llm, 'openai'));
  const stores = await tempStores('bfn-bench-fanout-');
  const spec = parseTaskSpec({
    goal: 'the product name',
    // One read of each page: what this bench measures. (No mode means the step-by-step agent.)
    mode: 'extract',
    outputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    requiredFields: ['name'],
    concurrency: CONCURRENCY,
    discovery: {
      listings: [`${origin}/list?page=1`],
      linkSelector: 'a.item',
      maxUrls: URLS,
      maxPages: LISTING_PAGES + 1,
    },
  });
  const input = await createRun(stores.runStore, stores.evidence, { tenant: 'bench', spec, samples: [] });
  let discovery: { urls: number; ms: number; listingPages: number } | undefined;
  let fanoutStart = 0;
  let done = 0;
  const handlers = runHandlers({
    runStore: stores.runStore,
    evidence: stores.evidence,
    slices: agentSliceRunner,
    browser: async () => browser,
    policy: { allowPrivate: false, allowHosts: [new URL(origin).host] },
    llmFor: async () => client,
    log: (e) => {
      if (e.msg === 'discovery done') {
        discovery = { urls: Number(e.urls), ms: Number(e.ms), listingPages: Number(e.listingPages) };
        fanoutStart = performance.now();
      }
    },
    onSlice: (e) => {
      if (e.final && ++done % 250 === 0)
        process.stderr.write(`  ${done}/${discovery?.urls ?? '?'} samples\n`);
    },
  });
  let peak = treeRssBytes();
  const sampler = setInterval(() => {
    peak = Math.max(peak, treeRssBytes());
  }, 250);
  const t0 = performance.now();
  await startLocalRun(input, handlers).result;
  const end = performance.now();
  clearInterval(sampler);
  if (!discovery) throw new Error('the Discover state did not run');
  const fanoutMs = end - fanoutStart;
  const results = await stores.runStore.listResults('bench', input.runId);
  const outcome = new BenchOutcome('bench:fanout', 'checks (URLs found, each sample, tokens)');
  outcome.record(discovery.urls === URLS, `discovery found ${discovery.urls} of the listing's ${URLS} URLs`);
  // Each sample must have read its own page's heading (the product number is in its URL).
  const urlOf = new Map(
    (await stores.runStore.listSamples('bench', input.runId)).map((s) => [s.sampleId, s.url]),
  );
  for (const r of results) {
    const name = String((r.data as { name?: unknown } | null)?.name ?? '');
    const n = /\/p\/(\d+)\.html/.exec(urlOf.get(r.sampleId) ?? '')?.[1];
    outcome.record(
      r.status === 'done' && n !== undefined && name.startsWith(`Product ${n} `),
      `${r.sampleId}: ${r.status} ${JSON.stringify(r.data)} (${r.reason})`,
    );
  }
  const tracked = results.reduce(
    (n, r) => n + Number(r.usage.promptTokens ?? 0) + Number(r.usage.completionTokens ?? 0),
    0,
  );
  const served = llm.served.promptTokens + llm.served.completionTokens;
  outcome.record(tracked === served, `tokens tracked ${tracked} ≠ tokens the model server billed ${served}`);
  await outcome.gate(async () => {
    await browser.close();
    await llm.close();
    server.close();
  });
  const ok = results.filter((r) => r.status === 'done').length;
  const sampleMs = results.map((r) => Number(r.usage.ms ?? 0));
  const p50 = percentile(sampleMs, 50);

  console.log(`\nbench:fanout — discover then fan out, concurrency ${CONCURRENCY}, local state machine\n`);
  console.log(
    table([
      [
        'URLs found',
        'listing pages',
        'discovery s',
        'URLs/s',
        'fan-out s',
        'pages/min',
        'p50 sample ms',
        'peak RSS MB',
        'ok',
      ],
      [
        discovery.urls,
        discovery.listingPages,
        round(discovery.ms / 1000, 2),
        round(discovery.urls / (discovery.ms / 1000)),
        round(fanoutMs / 1000, 1),
        round((results.length / fanoutMs) * 60_000),
        round(p50),
        round(peak / 1e6),
        `${ok}/${results.length} (total ${round((end - t0) / 1000, 1)} s)`,
      ],
    ]),
  );
  console.log(`tokens: tracked by the run ${tracked}, billed by the model server ${served}`);
  console.log(paperModel(discovery, p50));
  await browser.close();
  await closeGuardProxies();
  await llm.close();
  await stores.cleanup();
  server.close();
}

/** The same run on AWS with 1,000 Lambdas at once, from the times measured here. */
function paperModel(discovery: { urls: number; ms: number; listingPages: number }, sampleMs: number): string {
  const lambdas = 1000;
  const urls = discovery.urls;
  const childStartMs = 300; // a Distributed Map child execution and its first Lambda invoke
  const mergeMsPer1k = 2000; // merge reads results and writes the CSV: ~2 s per 1,000 samples
  const waves = Math.ceil(urls / lambdas);
  const discoverMs = discovery.ms + AWS.coldStartMs;
  const waveMs = sampleMs + childStartMs;
  const fanoutMs = waves * waveMs + AWS.coldStartMs;
  const mergeMs = (urls / 1000) * mergeMsPer1k;
  const wallMs = discoverMs + fanoutMs + mergeMs;
  const perSample = sampleCostLines(sampleMs, 1);
  const samplesUsd = perSample.reduce((n, l) => n + l[1], 0) * urls;
  const lambdaUsd = (ms: number) => (ms / 1000) * AWS.memoryGb * AWS.lambdaGbSecond + AWS.lambdaRequest;
  const fixedUsd = lambdaUsd(discoverMs) + lambdaUsd(mergeMs) + 6 * AWS.transition + 2 * AWS.s3Put;
  const rows: (string | number)[][] = [
    ['part', 'wall s', 'USD', 'assumption'],
    [
      'Discover',
      round(discoverMs / 1000, 1),
      round(lambdaUsd(discoverMs), 4),
      `one Lambda reads ${discovery.listingPages} listing pages at the rate measured here, + cold start`,
    ],
    [
      'Samples',
      round(fanoutMs / 1000, 1),
      round(samplesUsd, 4),
      `${urls} samples in ${waves} wave(s) of ${lambdas}; ${round(sampleMs)} ms p50 + ${childStartMs} ms child start`,
    ],
    ['Merge', round(mergeMs / 1000, 1), round(lambdaUsd(mergeMs), 4), `${mergeMsPer1k} ms per 1,000 results`],
    ['total', round(wallMs / 1000, 1), round(samplesUsd + fixedUsd, 4), 'model cost excluded'],
  ];
  return [
    `\npaper model: the same ${urls} URLs on AWS at ${lambdas} concurrent Lambdas (us-east-1 list prices)`,
    table(rows),
    '\nassumptions:',
    `  - every sample is one slice; sample time on Lambda = p50 measured here (same Chromium, ${AWS.memoryGb} GB)`,
    `  - cold start ${AWS.coldStartMs} ms, paid once per wave front; a container serves ~${AWS.samplesPerWarmContainer} samples`,
    '  - account concurrency ≥ 1,000 (the default quota) and Distributed Map MaxConcurrency 1,000',
    '  - the site answers 1,000 pages at once (no rate limit configured); a rate limit caps waves instead',
    '  - per-sample cost parts as in bench:runs (test/bench/lib/aws-cost.ts):',
    ...perSample.map(([part, usd, why]) => `      ${part}: $${round(usd * 1000, 4)} per 1,000 (${why})`),
  ].join('\n');
}

await main();
