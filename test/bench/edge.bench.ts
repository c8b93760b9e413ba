/**
 * bench:edge — the edge worker (functions/edge.ts, bundled as a Workers build, run in workerd by
 * miniflare) against the Node server (lib/api/app.ts on @hono/node-server), both over HTTP on
 * loopback, both driving the same remote Chromium over CDP on the same fixture pages; no model
 * (plain act, observe). Then the raw-CDP snapshot against Playwright's on one browser, the bundle's
 * size and the worker's cold start. Targets (issue 26): act and observe p50 ≤ 1.2× the Node
 * server's; raw-CDP snapshot p50 ≤ 1.1× Playwright's; bundle ≤ 1 MB compressed without the SDKs.
 */
import { Miniflare } from 'miniflare';
import type { Browser } from 'playwright-core';
import WebSocket from 'ws';
import { bundleEdge, describeNodeImports } from '../../infra/edge/bundle.ts';
import { createApp } from '../../lib/api/app.ts';
import { connectCdp } from '../../lib/browser/cdp-connect.ts';
import { connectCdpDriver } from '../../lib/ops/portable.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { startRemoteChrome } from '../support/remote-chrome.ts';
import { serveOnLoopback } from '../support/serve.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const WARMUP = 2;
const KEY = 'bench-key';
const outcome = new BenchOutcome('bench:edge', 'calls');

const [chrome, site] = await Promise.all([startRemoteChrome(), startFixtureServer()]);
const bundle = await bundleEdge();
if (bundle.nodeImports.length > 0) {
  console.log(`bench:edge: the edge bundle imports Node:\n${describeNodeImports(bundle.nodeImports)}`);
  await chrome.close();
  await site.close();
  process.exit(1);
}

const coldStarted = performance.now();
const mf = new Miniflare({
  host: '127.0.0.1',
  port: 0,
  modules: [{ type: 'ESModule', path: 'edge.mjs', contents: bundle.code }],
  compatibilityDate: '2025-09-01',
  kvNamespaces: ['BROWSERFN_CACHE'],
  bindings: {
    BROWSERFN_API_KEYS: `${KEY}:bench`,
    BROWSERFN_CDP_URL: chrome.wsUrl,
    BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
  },
});
const edgeBase = (await mf.ready).toString().replace(/\/$/, '');
const workerdUpMs = performance.now() - coldStarted;
const firstStarted = performance.now();
const first = await fetch(`${edgeBase}/healthz`);
const firstRequestMs = performance.now() - firstStarted;
outcome.record(first.status === 200, `first request: ${first.status}`);

const pwBrowser: Browser = await connectCdp(chrome.wsUrl);
const app = createApp({
  keys: new Map([[KEY, 'bench']]),
  policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
  browser: async () => pwBrowser,
  env: {},
});
const { server, base: nodeBase } = await serveOnLoopback(app.fetch);

const cleanup = async () => {
  server.close();
  await mf.dispose();
  await pwBrowser.close().catch(() => undefined);
  await chrome.close();
  await site.close();
};

type Call = { path: string; body: Record<string, unknown>; ok: (b: Record<string, unknown>) => boolean };
const CALLS: Record<string, Call> = {
  'act (plain)': {
    path: '/v1/act',
    body: { url: `${site.url}/login.html`, instruction: 'click the Sign in button' },
    ok: (b) => b.success === true,
  },
  observe: {
    path: '/v1/observe',
    body: { url: `${site.url}/login.html`, instruction: 'the Sign in button' },
    ok: (b) => Array.isArray(b.elements) && b.elements.length > 0,
  },
};

async function timed(base: string, call: Call, label: string): Promise<number | undefined> {
  const t0 = performance.now();
  const res = await fetch(`${base}${call.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(call.body),
  }).catch((err: unknown) => err as Error);
  const ms = performance.now() - t0;
  if (res instanceof Error) {
    outcome.record(false, `${label}: ${res.message}`);
    return undefined;
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  const good = res.status === 200 && call.ok(body);
  outcome.record(good, `${label}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return good ? ms : undefined;
}

const rows: (string | number)[][] = [['what', 'node p50 ms', 'edge p50 ms', 'ratio', 'target']];
const json: Record<string, unknown> = {};
for (const [name, call] of Object.entries(CALLS)) {
  const times = { node: [] as number[], edge: [] as number[] };
  for (let i = 0; i < RUNS + WARMUP; i++) {
    // Alternate which goes first, so neither always meets the warmer browser.
    const order = i % 2 === 0 ? (['node', 'edge'] as const) : (['edge', 'node'] as const);
    for (const side of order) {
      const ms = await timed(side === 'node' ? nodeBase : edgeBase, call, `${name} via ${side}`);
      if (ms !== undefined && i >= WARMUP) times[side].push(ms);
    }
  }
  const node = percentile(times.node, 50);
  const edge = percentile(times.edge, 50);
  rows.push([name, round(node), round(edge), round(edge / node, 2), '≤ 1.2']);
  json[name] = { nodeP50: round(node), edgeP50: round(edge), ratio: round(edge / node, 2) };
}

// The snapshot alone, on one page of the same browser: Playwright adapter vs raw CDP adapter.
const snapRows: [string, number, number][] = [];
for (const path of ['/login.html', '/large.html']) {
  const context = await pwBrowser.newContext();
  const pwPage = await context.newPage();
  await pwPage.goto(`${site.url}${path}`);
  const cdp = await connectCdpDriver(chrome.wsUrl, { WebSocket: WebSocket as never });
  await cdp.driver.goto(`${site.url}${path}`, { timeoutMs: 30_000 });
  const times = { pw: [] as number[], cdp: [] as number[] };
  for (let i = 0; i < RUNS + WARMUP; i++) {
    for (const side of i % 2 === 0 ? (['pw', 'cdp'] as const) : (['cdp', 'pw'] as const)) {
      const t0 = performance.now();
      const snap = await snapshot(side === 'pw' ? pwPage : cdp.driver).catch((err: unknown) => err as Error);
      const ms = performance.now() - t0;
      const good = !(snap instanceof Error) && snap.tree.length > 0;
      outcome.record(good, `snapshot ${path} via ${side}: ${snap instanceof Error ? snap.message : 'empty'}`);
      if (good && i >= WARMUP) times[side].push(ms);
    }
  }
  await cdp.close();
  await context.close();
  snapRows.push([path, percentile(times.pw, 50), percentile(times.cdp, 50)]);
}

await outcome.gate(cleanup);
for (const [path, pw, cdp] of snapRows) {
  rows.push([`snapshot ${path}`, round(pw), round(cdp), round(cdp / pw, 2), '≤ 1.1 (playwright | raw CDP)']);
  json[`snapshot ${path}`] = { playwrightP50: round(pw), cdpP50: round(cdp), ratio: round(cdp / pw, 2) };
}
console.log(table(rows));
const kb = (n: number) => round(n / 1024, 1);
console.log(
  table([
    ['bundle', 'raw KB', 'gzip KB', 'gzip KB without model SDKs', 'target'],
    ['functions/edge.ts', kb(bundle.bytes), kb(bundle.gzipBytes), kb(bundle.gzipBytesWithoutSdks), '≤ 1024'],
  ]),
);
console.log(
  table([
    ['cold start', 'ms'],
    ['workerd up (bundle loaded)', round(workerdUpMs)],
    ['first request after load (/healthz)', round(firstRequestMs)],
  ]),
);
json.bundle = {
  bytes: bundle.bytes,
  gzipBytes: bundle.gzipBytes,
  gzipBytesWithoutSdks: bundle.gzipBytesWithoutSdks,
};
json.coldStart = { workerdUpMs: round(workerdUpMs), firstRequestMs: round(firstRequestMs) };
console.log(JSON.stringify({ bench: 'edge', runs: RUNS, ...json }));
await cleanup();
