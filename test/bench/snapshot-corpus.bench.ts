import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { chromiumArgs, embeddedExecutablePath, launchBrowser } from '../../lib/browser/launch.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { CORPUS, corpusPages, requireCorpus, VIEWPORT } from './lib/corpus.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { waitQuiet } from './lib/quiet.ts';
import { installedStagehandVersion, type StagehandPeer, startStagehand } from './lib/stagehand.ts';
import { fmt, fmtRatio, geomean, ratio, renderTable, round, summarize, timed } from './lib/stats.ts';
import { tokens } from './lib/tokens.ts';

requireCorpus('bench:snapshot-corpus');

const PER_FOLDER = Number(process.env.BENCH_PAGES ?? 60) || Infinity;
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5) || 5);
const WARMUP = 1;
const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** Stagehand's Chromium: our flags, and no way off the machine (a dead proxy on loopback, no DNS). */
const OFFLINE_FLAGS = [
  '--proxy-server=http://127.0.0.1:9',
  '--proxy-bypass-list=<-loopback>',
  '--host-resolver-rules=MAP * ~NOTFOUND',
];

interface PageFigures {
  page: string;
  nodes: number;
  oursMs: number;
  stagehandMs: number;
  ratio: number;
  /** The first read of the page, in a fresh context (ours) or a fresh tab (Stagehand's). */
  oursFirstMs: number;
  stagehandFirstMs: number;
  oursTokens: number;
  stagehandTokens: number;
}

const SIZES: [string, (n: number) => boolean][] = [
  ['< 500 elements', (n) => n < 500],
  ['500–2,000', (n) => n >= 500 && n < 2000],
  ['≥ 2,000', (n) => n >= 2000],
];

function report(rows: PageFigures[], seconds: number): string {
  const median = (xs: number[]) => summarize(xs).p50;
  const line = (name: string, rs: PageFigures[]) => [
    name,
    String(rs.length),
    fmt(median(rs.map((r) => r.nodes))),
    fmt(median(rs.map((r) => r.oursMs))),
    fmt(median(rs.map((r) => r.stagehandMs))),
    fmtRatio(median(rs.map((r) => r.ratio))),
    fmtRatio(geomean(rs.map((r) => r.ratio))),
    fmtRatio(
      ratio(
        rs.reduce((s, r) => s + r.stagehandMs, 0),
        rs.reduce((s, r) => s + r.oursMs, 0),
      ),
    ),
    fmt(median(rs.map((r) => r.oursFirstMs))),
    fmt(median(rs.map((r) => r.stagehandFirstMs))),
    fmtRatio(median(rs.map((r) => ratio(r.stagehandFirstMs, r.oursFirstMs)))),
    fmtRatio(
      ratio(
        rs.reduce((s, r) => s + r.oursTokens, 0),
        rs.reduce((s, r) => s + r.stagehandTokens, 0),
      ),
    ),
  ];
  const slowest = [...rows].sort((a, b) => a.ratio - b.ratio).slice(0, 8);
  return [
    `Snapshot on real pages — ${rows.length} corpus pages, p50 of ${RUNS} reads per page per tool (after the first, reported apart), in turn; ${seconds} s`,
    'ours in a context as browserfn makes it (start scripts included), a fresh one per page; Stagehand 3 in a fresh tab per page',
    renderTable(
      [
        'pages',
        'n',
        'elements p50',
        'ours ms p50',
        'Stagehand ms p50',
        'ratio p50 (per page)',
        'geomean',
        'summed',
        'first read: ours ms p50',
        'SH ms p50',
        'ratio p50',
        'tokens ours/SH',
      ],
      [
        line('all', rows),
        ...SIZES.map(([name, f]) =>
          line(
            name,
            rows.filter((r) => f(r.nodes)),
          ),
        ),
      ],
    ),
    `lowest ratios: ${slowest.map((r) => `${r.page} ${fmtRatio(r.ratio)} (${fmt(r.oursMs)} vs ${fmt(r.stagehandMs)} ms, ${r.nodes} el.)`).join('; ')}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const started = performance.now();
  const files = corpusPages(PER_FOLDER);
  const executablePath = await embeddedExecutablePath();
  const browser = await launchBrowser();
  const version = installedStagehandVersion();
  let stagehand: StagehandPeer | undefined;
  const rows: PageFigures[] = [];
  const outcome = new BenchOutcome('bench:snapshot-corpus', 'pages');
  try {
    stagehand = await startStagehand({
      executablePath,
      args: [...chromiumArgs().filter((a) => !a.startsWith('--headless')), ...OFFLINE_FLAGS],
      viewport: VIEWPORT,
      version,
    });
    for (const [i, file] of files.entries()) {
      const url = pathToFileURL(join(CORPUS, file)).href;
      // As browserfn opens a page for a call (newJobContext + newPage), with nothing let off the machine.
      const context = await newJobContext(browser, { viewport: VIEWPORT });
      let tab: Awaited<ReturnType<StagehandPeer['open']>> | undefined;
      try {
        await context.route('**/*', (route) =>
          route.request().url().startsWith('file:') ? route.continue() : route.abort(),
        );
        const page = await newPage(context);
        await page.goto(url, { waitUntil: 'load', timeout: 30_000 });
        await waitQuiet((e) => page.evaluate(e));
        tab = await stagehand.open(url);
        await tab.settle();
        const ours: number[] = [];
        const theirs: number[] = [];
        let ourTree = '';
        let theirTree = '';
        let nodes = 0;
        let firsts: [number, number] = [0, 0];
        for (let k = 0; k < WARMUP + RUNS; k++) {
          const a = await timed(() => snapshot(page));
          const b = await timed(() => tab!.snapshot());
          ourTree = a.value.tree;
          nodes = a.value.stats.nodes;
          theirTree = b.value.text;
          if (k === 0) firsts = [a.ms, b.ms];
          if (k >= WARMUP) {
            ours.push(a.ms);
            theirs.push(b.ms);
          }
        }
        const oursMs = summarize(ours).p50;
        const stagehandMs = summarize(theirs).p50;
        rows.push({
          page: file,
          nodes,
          oursMs,
          stagehandMs,
          ratio: ratio(stagehandMs, oursMs),
          oursFirstMs: firsts[0],
          stagehandFirstMs: firsts[1],
          oursTokens: tokens(ourTree),
          stagehandTokens: tokens(theirTree),
        });
        outcome.record(true, file);
      } catch (err) {
        outcome.record(false, `${file}: ${(err as Error).message.split('\n')[0]}`);
      } finally {
        await tab?.close().catch(() => undefined);
        await context.close().catch(() => undefined);
      }
      if ((i + 1) % 20 === 0) log(`${i + 1}/${files.length} pages`);
    }
  } finally {
    await stagehand?.close().catch(() => undefined);
    await browser.close().catch(() => undefined);
  }
  await outcome.gate();
  const seconds = round((performance.now() - started) / 1000, 0);
  process.stdout.write(`\n${report(rows, seconds)}\n`);
  process.stdout.write(
    `JSON (one line):\n${JSON.stringify({ bench: 'snapshot-corpus', stagehandVersion: version, runs: RUNS, pages: rows })}\n`,
  );
}

await main();
