/**
 * Snapshot benchmark: our hybrid snapshot against Stagehand v3's own `page.snapshot()`, the raw CDP
 * full AX tree and Playwright's `ariaSnapshot()`, on the fixture pages, in one run. Also: a tab
 * after many navigations vs a fresh tab, cold start, and a new context in a warm browser.
 *
 *   npm run bench:snapshot            (BENCH_RUNS=15 by default)
 *   BENCH_FIRST_ONLY=1 npm run bench:snapshot   (only the first-read profile, lib/first-read.ts)
 *
 * The first-read profile: where the first read of a fresh page goes (fresh process, fresh context),
 * by phase, with a CPU profile of the first walk, against a bare first getFullAXTree; and the first
 * act on a form page, settle included.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { chromiumArgs, embeddedExecutablePath, launchBrowser } from '../../lib/browser/launch.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { FIXTURE_PAGES } from '../fixtures/manifest.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import {
  missingFromOurs,
  missingFromPeer,
  ourCompleteness,
  parseStagehandTree,
  stagehandInteractive,
  type Target,
  targetsFound,
} from './lib/compare.ts';
import { type FirstRead, firstReadOnce, renderFirstReads } from './lib/first-read-report.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { waitQuiet } from './lib/quiet.ts';
import {
  type AgeFigures,
  type ColdRun,
  overall,
  type PageResult,
  printResults,
  type TabAge,
} from './lib/snapshot-report.ts';
import {
  installedStagehandVersion,
  type StagehandPeer,
  type StagehandTab,
  startStagehand,
} from './lib/stagehand.ts';
import { ratio, round, type Summary, summarize, timed } from './lib/stats.ts';
import { tokens } from './lib/tokens.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 15) || 15);
const LARGE_RUNS = Math.max(3, Math.ceil(RUNS / 3));
const WARMUP = 2;
const VIEWPORT = { width: 1280, height: 800 };
const LONG_LIVED_NAVS = 30;
const CONTEXT_RUNS = 20;
/** Tab-age figures are ~1 ms each: more samples, alternated between the two tabs. */
const AGE_RUNS = RUNS * 4;
const COLD_RUNS = 3;
const FIRST_RUNS = 3;
const FIRST_ONLY = process.env.BENCH_FIRST_ONLY === '1';

const log = (msg: string) => process.stderr.write(`${msg}\n`);

interface BenchPage {
  name: string;
  path: string;
  targets: Target[];
  large: boolean;
}

function loadPages(): BenchPage[] {
  const pages: BenchPage[] = FIXTURE_PAGES.map((p) => ({
    name: p.path.replace(/^\//, '').replace(/\.html$/, ''),
    path: p.path,
    targets: p.targets.map((t) => ({ role: t.role, name: t.name })),
    large: p.path === '/large.html',
  }));
  if (!pages.some((p) => p.large))
    pages.push({ name: 'large', path: '/large.html', targets: [], large: true });
  return pages;
}

const urlOf = (base: string, path: string) => new URL(path, base).toString();

async function settleOurs(page: Page): Promise<void> {
  await waitQuiet((expr) => page.evaluate(expr));
}

async function benchPage(
  browser: Browser,
  stagehand: StagehandPeer,
  base: string,
  bp: BenchPage,
): Promise<PageResult> {
  const url = urlOf(base, bp.path);
  const runs = bp.large ? LARGE_RUNS : RUNS;
  const context = await newJobContext(browser, { viewport: VIEWPORT });
  let shTab: StagehandTab | undefined;
  try {
    const page = await newPage(context);
    page.setDefaultTimeout(60_000);
    await page.goto(url, { waitUntil: 'load' });
    await settleOurs(page);
    shTab = await stagehand.open(url);
    await shTab.settle();

    const oursMs: number[] = [];
    const shMs: number[] = [];
    const ariaMs: number[] = [];
    const oursChars = new Set<number>();
    let ours: Snapshot | undefined;
    let shText = '';
    let shIds = 0;
    let ariaText = '';
    // Interleaved, one tool at a time: drift on the machine hits every tool alike.
    for (let i = 0; i < WARMUP + runs; i++) {
      const a = await timed(() => snapshot(page));
      ours = a.value;
      oursChars.add(ours.tree.length);
      const b = await timed(() => shTab!.snapshot());
      shText = b.value.text;
      shIds = b.value.ids;
      const c = await timed(() => page.locator('body').ariaSnapshot({ timeout: 60_000 }));
      ariaText = c.value;
      if (i >= WARMUP) {
        oursMs.push(a.ms);
        shMs.push(b.ms);
        ariaMs.push(c.ms);
      }
    }
    // The full AX tree last: once Chromium has built accessibility for a tab it keeps it up to date,
    // which could tax whatever runs after it in that tab.
    const cdp = await context.newCDPSession(page);
    const cdpMs: number[] = [];
    let axJson = '';
    let axNodes = 0;
    for (let i = 0; i < WARMUP + runs; i++) {
      const r = await timed(() => cdp.send('Accessibility.getFullAXTree'));
      if (i >= WARMUP) cdpMs.push(r.ms);
      if (i === WARMUP + runs - 1) {
        axJson = JSON.stringify(r.value);
        axNodes = r.value.nodes.length;
      }
    }
    await cdp.detach().catch(() => undefined);

    const snap = ours!;
    const oursTokens = tokens(snap.tree);
    const shTokens = tokens(shText);
    const msOurs = summarize(oursMs);
    const msSh = summarize(shMs);
    const shItems = parseStagehandTree(shText);
    const shInteractive = stagehandInteractive(shItems);
    const result: PageResult = {
      page: bp.name,
      runs,
      domNodes: snap.stats.nodes,
      ours: {
        ms: msOurs,
        chars: snap.tree.length,
        tokens: oursTokens,
        estTokens: snap.stats.tokens,
        charsVaried: oursChars.size > 1,
      },
      stagehand: { ms: msSh, chars: shText.length, tokens: shTokens, ids: shIds },
      cdp: { ms: summarize(cdpMs), jsonChars: axJson.length, axNodes },
      aria: { ms: summarize(ariaMs), chars: ariaText.length, tokens: tokens(ariaText) },
      ratios: {
        shOverOursP50: ratio(msSh.p50, msOurs.p50),
        shOverOursP95: ratio(msSh.p95, msOurs.p95),
        oursOverShTokens: ratio(oursTokens, shTokens),
      },
      completeness: {
        ours: ourCompleteness(snap),
        stagehandInteractive: shInteractive.length,
        stagehandOnly: missingFromOurs(shInteractive, snap),
        oursOnly: missingFromPeer(snap, shText),
      },
    };
    if (bp.targets.length > 0) {
      const missed = (text: string) => {
        const found = new Set(targetsFound(text, bp.targets));
        return bp.targets.filter((t) => !found.has(t)).map((t) => `${t.role} "${t.name}"`);
      };
      const missedByOurs = missed(snap.tree);
      const missedByStagehand = missed(shText);
      const missedByAria = missed(ariaText);
      const total = bp.targets.length;
      result.completeness.targets = {
        total,
        ours: total - missedByOurs.length,
        stagehand: total - missedByStagehand.length,
        aria: total - missedByAria.length,
        missedByOurs,
        missedByStagehand,
        missedByAria,
      };
    }
    return result;
  } finally {
    await shTab?.close().catch(() => undefined);
    await context.close().catch(() => undefined);
  }
}

/** Snapshot times on a small page in a tab that has seen many navigations vs a fresh tab. */
async function benchTabAge(
  browser: Browser,
  stagehand: StagehandPeer,
  base: string,
  pages: BenchPage[],
  small: BenchPage,
): Promise<TabAge> {
  const tour = pages.filter((p) => !p.large);
  const target = urlOf(base, small.path);
  /**
   * Times the long-lived and the fresh tab alternately, so machine drift hits both alike (the
   * figures are ~1 ms, where a 10% target is within timer and IPC jitter otherwise). `chars` is the
   * length of the last text each returned, to check both tabs see the same thing.
   */
  const measurePair = async (
    long: () => Promise<string>,
    fresh: () => Promise<string>,
  ): Promise<[AgeFigures, AgeFigures]> => {
    const ms: [number[], number[]] = [[], []];
    const chars = [0, 0];
    const fns = [long, fresh];
    for (let i = 0; i < WARMUP + AGE_RUNS; i++) {
      for (const k of i % 2 === 0 ? [0, 1] : [1, 0]) {
        const r = await timed(fns[k]!);
        chars[k] = r.value.length;
        if (i >= WARMUP) ms[k]!.push(r.ms);
      }
    }
    return [
      { ...summarize(ms[0]), chars: chars[0]! },
      { ...summarize(ms[1]), chars: chars[1]! },
    ];
  };

  // Ours: a long-lived tab (a snapshot after every navigation, as an agent would) and a fresh tab.
  const longCtx = await newJobContext(browser, { viewport: VIEWPORT });
  const freshCtx = await newJobContext(browser, { viewport: VIEWPORT });
  let oursLong: AgeFigures;
  let oursFresh: AgeFigures;
  try {
    const longPage = await newPage(longCtx);
    for (let i = 0; i < LONG_LIVED_NAVS; i++) {
      await longPage.goto(urlOf(base, tour[i % tour.length]!.path), { waitUntil: 'load' });
      await snapshot(longPage);
    }
    await longPage.goto(target, { waitUntil: 'load' });
    await settleOurs(longPage);
    const freshPage = await newPage(freshCtx);
    await freshPage.goto(target, { waitUntil: 'load' });
    await settleOurs(freshPage);
    [oursLong, oursFresh] = await measurePair(
      async () => (await snapshot(longPage)).tree,
      async () => (await snapshot(freshPage)).tree,
    );
  } finally {
    await longCtx.close();
    await freshCtx.close();
  }

  // Stagehand, same protocol.
  const shLong = await stagehand.open(urlOf(base, tour[0]!.path));
  let shFresh: StagehandTab | undefined;
  let stagehandLong: AgeFigures;
  let stagehandFresh: AgeFigures;
  try {
    for (let i = 0; i < LONG_LIVED_NAVS; i++) {
      await shLong.goto(urlOf(base, tour[i % tour.length]!.path));
      await shLong.snapshot();
    }
    await shLong.goto(target);
    await shLong.settle();
    shFresh = await stagehand.open(target);
    await shFresh.settle();
    const fresh = shFresh;
    [stagehandLong, stagehandFresh] = await measurePair(
      async () => (await shLong.snapshot()).text,
      async () => (await fresh.snapshot()).text,
    );
  } finally {
    await shLong.close();
    await shFresh?.close();
  }

  return {
    page: small.name,
    navigations: LONG_LIVED_NAVS,
    ours: { longLived: oursLong, fresh: oursFresh, ratioP50: ratio(oursLong.p50, oursFresh.p50) },
    stagehand: {
      longLived: stagehandLong,
      fresh: stagehandFresh,
      ratioP50: ratio(stagehandLong.p50, stagehandFresh.p50),
    },
  };
}

/** `newJobContext` + `newPage` in a browser that is already running. */
async function benchNewContext(browser: Browser): Promise<Summary> {
  const ms: number[] = [];
  for (let i = 0; i < WARMUP + CONTEXT_RUNS; i++) {
    const t0 = performance.now();
    const context = await newJobContext(browser, { viewport: VIEWPORT });
    await newPage(context);
    const t = performance.now() - t0;
    await context.close();
    if (i >= WARMUP) ms.push(t);
  }
  return summarize(ms);
}

function coldStartOnce(url: string): Promise<ColdRun> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'lib', 'cold-start.ts'), url], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    let result: ColdRun | undefined;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      const nl = out.indexOf('\n');
      if (!result && nl >= 0) {
        const wallMs = performance.now() - t0;
        const parsed = JSON.parse(out.slice(0, nl)) as { done: number; marks: Record<string, number> };
        result = { wallMs: round(wallMs, 0), childMs: parsed.done, marks: parsed.marks };
      }
    });
    child.stderr.on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (result) resolve(result);
      else reject(new Error(`cold-start child exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

/** The first-read profile, one fresh process at a time; printed with its JSON line. */
async function firstReads(base: string): Promise<FirstRead[]> {
  const runs: FirstRead[] = [];
  // Alternated, so a change in the machine's load falls on both kinds alike.
  for (let i = 0; i < FIRST_RUNS; i++)
    for (const rendered of [false, true])
      runs.push(await firstReadOnce(urlOf(base, '/large.html'), urlOf(base, '/login.html'), rendered));
  for (const rendered of [false, true]) {
    const some = runs.filter((r) => !!r.rendered === rendered);
    log(
      `first read${rendered ? ' (rendered page)' : ''}: ${some.map((r) => r.firstMs).join(', ')} ms; AX ${some.map((r) => r.axMs).join(', ')} ms`,
    );
  }
  return runs;
}

function printFirstReads(runs: FirstRead[]): void {
  process.stdout.write(`\n${renderFirstReads(runs).join('\n')}\n`);
  process.stdout.write(
    `JSON (first reads, one line):\n${JSON.stringify({ bench: 'snapshot-first-read', runs })}\n`,
  );
}

async function main(): Promise<void> {
  const started = performance.now();
  const server = await startFixtureServer();
  if (FIRST_ONLY) {
    try {
      printFirstReads(await firstReads(server.url));
    } finally {
      await server.close();
    }
    return;
  }
  const pages = loadPages();
  const executablePath = await embeddedExecutablePath();
  const browser = await launchBrowser();
  const shArgs = [
    ...chromiumArgs().filter((a) => !a.startsWith('--headless')),
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--disable-background-networking',
  ];
  const stagehandVersion = installedStagehandVersion();
  let stagehand: StagehandPeer | undefined;
  try {
    stagehand = await startStagehand({
      executablePath,
      args: shArgs,
      viewport: VIEWPORT,
      version: stagehandVersion,
    });
    const results: PageResult[] = [];
    for (const bp of pages) {
      const t0 = performance.now();
      const r = await benchPage(browser, stagehand, server.url, bp);
      results.push(r);
      log(
        `${bp.name}: ours p50 ${r.ours.ms.p50} ms, SH p50 ${r.stagehand.ms.p50} ms (${Math.round(performance.now() - t0)} ms)`,
      );
    }
    const small =
      pages.find((p) => /login|sign-?in/i.test(p.name) || /login|sign-?in/i.test(p.path)) ?? pages[0]!;
    const tabAge = await benchTabAge(browser, stagehand, server.url, pages, small);
    log(`tab age: ours ${tabAge.ours.ratioP50}x, SH ${tabAge.stagehand.ratioP50}x`);
    const newContext = await benchNewContext(browser);
    log(`new context p50 ${newContext.p50} ms`);
    await stagehand.close();
    stagehand = undefined;
    await browser.close();
    // Cold start last, with the other browsers gone, so the child does not compete for the CPU.
    const cold: ColdRun[] = [];
    for (let i = 0; i < COLD_RUNS; i++) cold.push(await coldStartOnce(urlOf(server.url, small.path)));
    log(`cold start: ${cold.map((c) => c.wallMs).join(', ')} ms`);
    const first = await firstReads(server.url);
    // Every page measured on both sides and every cold start timed (a failure above throws).
    const outcome = new BenchOutcome('bench:snapshot', 'pages and cold starts');
    for (const r of results)
      outcome.record(
        Number.isFinite(r.ours.ms.p50) && Number.isFinite(r.stagehand.ms.p50),
        `${r.page}: no timing (ours ${r.ours.ms.p50}, Stagehand ${r.stagehand.ms.p50})`,
      );
    for (const [i, c] of cold.entries())
      outcome.record(Number.isFinite(c.wallMs), `cold start ${i + 1}: no timing`);
    await outcome.gate();
    printResults(
      { runs: RUNS, largeRuns: LARGE_RUNS, warmup: WARMUP, ageRuns: AGE_RUNS },
      results,
      overall(results),
      tabAge,
      newContext,
      cold,
      {
        stagehandVersion,
        node: process.version,
        chromium: executablePath,
        viewport: VIEWPORT,
        totalSeconds: round((performance.now() - started) / 1000),
      },
    );
    printFirstReads(first);
  } finally {
    await stagehand?.close().catch(() => undefined);
    await browser.close().catch(() => undefined);
    await server.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`snapshot bench crashed: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  },
);
