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
import { readFileSync } from 'node:fs';
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
  type Misses,
  missingFromOurs,
  missingFromPeer,
  type OurCompleteness,
  ourCompleteness,
  parseStagehandTree,
  stagehandInteractive,
  type Target,
  targetsFound,
} from './lib/compare.ts';
import { type FirstRead, firstReadOnce, renderFirstReads } from './lib/first-read-report.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { waitQuiet } from './lib/quiet.ts';
import { type StagehandPeer, type StagehandTab, startStagehand } from './lib/stagehand.ts';
import {
  fmt,
  fmtRatio,
  geomean,
  ratio,
  renderTable,
  round,
  type Summary,
  summarize,
  timed,
} from './lib/stats.ts';
import { TOKENIZER, tokens } from './lib/tokens.ts';

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

interface TextFigures {
  ms: Summary;
  chars: number;
  tokens: number;
}

interface PageResult {
  page: string;
  runs: number;
  domNodes: number;
  ours: TextFigures & { estTokens: number; charsVaried: boolean };
  stagehand: TextFigures & { ids: number };
  cdp: { ms: Summary; jsonChars: number; axNodes: number };
  aria: TextFigures;
  ratios: { shOverOursP50: number; shOverOursP95: number; oursOverShTokens: number };
  completeness: {
    ours: OurCompleteness;
    stagehandInteractive: number;
    targets?: {
      total: number;
      ours: number;
      stagehand: number;
      aria: number;
      missedByOurs: string[];
      missedByStagehand: string[];
      missedByAria: string[];
    };
    stagehandOnly: Misses;
    oursOnly: string[];
  };
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

type AgeFigures = Summary & { chars: number };

interface TabAge {
  page: string;
  navigations: number;
  ours: { longLived: AgeFigures; fresh: AgeFigures; ratioP50: number };
  stagehand: { longLived: AgeFigures; fresh: AgeFigures; ratioP50: number };
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

interface ColdRun {
  /** Parent's wall clock from spawn to the child's result line. */
  wallMs: number;
  /** Child's own `performance.now()` (from its timeOrigin) at the end of the first snapshot. */
  childMs: number;
  marks: Record<string, number>;
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

interface Overall {
  oursP50Sum: number;
  stagehandP50Sum: number;
  oursP95Sum: number;
  stagehandP95Sum: number;
  shOverOursP50: number;
  shOverOursP95: number;
  shOverOursP50Geomean: number;
  oursTokens: number;
  stagehandTokens: number;
  oursOverShTokens: number;
  oursOverShTokensGeomean: number;
}

function overall(results: PageResult[]): Overall {
  const sum = (f: (r: PageResult) => number) => round(results.reduce((s, r) => s + f(r), 0));
  const o = {
    oursP50Sum: sum((r) => r.ours.ms.p50),
    stagehandP50Sum: sum((r) => r.stagehand.ms.p50),
    oursP95Sum: sum((r) => r.ours.ms.p95),
    stagehandP95Sum: sum((r) => r.stagehand.ms.p95),
    oursTokens: sum((r) => r.ours.tokens),
    stagehandTokens: sum((r) => r.stagehand.tokens),
  };
  return {
    ...o,
    shOverOursP50: ratio(o.stagehandP50Sum, o.oursP50Sum),
    shOverOursP95: ratio(o.stagehandP95Sum, o.oursP95Sum),
    shOverOursP50Geomean: geomean(results.map((r) => r.ratios.shOverOursP50)),
    oursOverShTokens: ratio(o.oursTokens, o.stagehandTokens),
    oursOverShTokensGeomean: geomean(results.map((r) => r.ratios.oursOverShTokens)),
  };
}

function printResults(
  results: PageResult[],
  all: Overall,
  tabAge: TabAge,
  newContext: Summary,
  cold: ColdRun[],
  meta: Record<string, unknown>,
): void {
  const out: string[] = [];
  const p = (s = '') => out.push(s);
  p();
  p(
    `Snapshot benchmark — ${RUNS} runs per page (${LARGE_RUNS} on large pages) after ${WARMUP} warm-up runs; ms = wall time of one call from Node`,
  );
  p(`tokens: ${TOKENIZER}; "est" = our snapshot's own chars/4 estimate`);
  p(
    `Stagehand ${meta.stagehandVersion} page.snapshot() in its own Chromium (same binary, launched by Stagehand), fresh tab per page`,
  );
  p(
    'every tab: load, then DOM quiet for 250 ms (cap 3 s) before any call; one tool at a time, interleaved per run',
  );
  p();
  p('Time (ms)');
  p(
    renderTable(
      [
        'page',
        'DOM',
        'ours p50',
        'ours p95',
        'SH p50',
        'SH p95',
        'SH/ours p50',
        'SH/ours p95',
        'AX p50',
        'AX p95',
        'aria p50',
        'aria p95',
      ],
      [
        ...results.map((r) => [
          r.page,
          fmt(r.domNodes),
          fmt(r.ours.ms.p50),
          fmt(r.ours.ms.p95),
          fmt(r.stagehand.ms.p50),
          fmt(r.stagehand.ms.p95),
          fmtRatio(r.ratios.shOverOursP50),
          fmtRatio(r.ratios.shOverOursP95),
          fmt(r.cdp.ms.p50),
          fmt(r.cdp.ms.p95),
          fmt(r.aria.ms.p50),
          fmt(r.aria.ms.p95),
        ]),
        [
          'ALL (sum)',
          '',
          fmt(all.oursP50Sum),
          fmt(all.oursP95Sum),
          fmt(all.stagehandP50Sum),
          fmt(all.stagehandP95Sum),
          fmtRatio(all.shOverOursP50),
          fmtRatio(all.shOverOursP95),
          fmt(round(results.reduce((s, r) => s + r.cdp.ms.p50, 0))),
          fmt(round(results.reduce((s, r) => s + r.cdp.ms.p95, 0))),
          fmt(round(results.reduce((s, r) => s + r.aria.ms.p50, 0))),
          fmt(round(results.reduce((s, r) => s + r.aria.ms.p95, 0))),
        ],
      ],
    ),
  );
  p(`geomean of per-page SH/ours p50: ${fmtRatio(all.shOverOursP50Geomean)}`);
  p('AX = raw CDP Accessibility.getFullAXTree (time only); aria = Playwright locator("body").ariaSnapshot()');
  p();
  p('Size (chars / o200k tokens)');
  p(
    renderTable(
      [
        'page',
        'ours chars',
        'ours tok',
        'ours est',
        'SH chars',
        'SH tok',
        'ours/SH tok',
        'aria chars',
        'aria tok',
        'AX JSON chars',
        'AX nodes',
      ],
      [
        ...results.map((r) => [
          r.page,
          fmt(r.ours.chars) + (r.ours.charsVaried ? '*' : ''),
          fmt(r.ours.tokens),
          fmt(r.ours.estTokens),
          fmt(r.stagehand.chars),
          fmt(r.stagehand.tokens),
          fmtRatio(r.ratios.oursOverShTokens),
          fmt(r.aria.chars),
          fmt(r.aria.tokens),
          fmt(r.cdp.jsonChars),
          fmt(r.cdp.axNodes),
        ]),
        [
          'ALL (sum)',
          fmt(results.reduce((s, r) => s + r.ours.chars, 0)),
          fmt(all.oursTokens),
          fmt(results.reduce((s, r) => s + r.ours.estTokens, 0)),
          fmt(results.reduce((s, r) => s + r.stagehand.chars, 0)),
          fmt(all.stagehandTokens),
          fmtRatio(all.oursOverShTokens),
          fmt(results.reduce((s, r) => s + r.aria.chars, 0)),
          fmt(results.reduce((s, r) => s + r.aria.tokens, 0)),
          fmt(results.reduce((s, r) => s + r.cdp.jsonChars, 0)),
          fmt(results.reduce((s, r) => s + r.cdp.axNodes, 0)),
        ],
      ],
    ),
  );
  p(`geomean of per-page ours/SH tokens: ${fmtRatio(all.oursOverShTokensGeomean)}`);
  if (results.some((r) => r.ours.charsVaried)) p('* our tree length differed between runs on this page');
  p();
  p('Completeness');
  p(
    renderTable(
      [
        'page',
        'ours interactive',
        'with locator',
        'SH interactive',
        'targets',
        'in ours',
        'in SH',
        'in aria',
        'SH-only (absent)',
        'SH-only (text only)',
        'ours-only',
      ],
      results.map((r) => {
        const c = r.completeness;
        return [
          r.page,
          fmt(c.ours.interactive),
          `${c.ours.withLocator}/${c.ours.interactive}`,
          fmt(c.stagehandInteractive),
          c.targets ? fmt(c.targets.total) : '-',
          c.targets ? fmt(c.targets.ours) : '-',
          c.targets ? fmt(c.targets.stagehand) : '-',
          c.targets ? fmt(c.targets.aria) : '-',
          fmt(c.stagehandOnly.absent.length),
          fmt(c.stagehandOnly.notInteractive.length),
          fmt(c.oursOnly.length),
        ];
      }),
    ),
  );
  const allLocators = results.every(
    (r) => r.completeness.ours.allWithLocator === r.completeness.ours.all && r.completeness.ours.all > 0,
  );
  p(
    allLocators
      ? 'Every id in our snapshots has a durable locator (XPath + role + name).'
      : 'NOT every id in our snapshots has a locator: see allWithLocator in the JSON.',
  );
  p(
    "SH interactive = lines of Stagehand's tree with an actionable AX role (options of native <select> not counted; ours folds them into options=[…]).",
  );
  p('SH-only = Stagehand interactive elements matched by name: "absent" = name nowhere in our tree;');
  p('"text only" = name in our tree but not on one of our interactive elements. ours-only = the reverse.');
  for (const r of results) {
    const c = r.completeness;
    const lines: string[] = [];
    if (c.targets && c.targets.missedByOurs.length > 0)
      lines.push(`  manifest targets missing from ours: ${c.targets.missedByOurs.join(', ')}`);
    if (c.targets && c.targets.missedByStagehand.length > 0)
      lines.push(`  manifest targets missing from SH: ${c.targets.missedByStagehand.join(', ')}`);
    if (c.stagehandOnly.absent.length > 0)
      lines.push(`  SH-only, absent from ours: ${listSome(c.stagehandOnly.absent)}`);
    if (c.stagehandOnly.notInteractive.length > 0)
      lines.push(`  SH-only, text-only in ours: ${listSome(c.stagehandOnly.notInteractive)}`);
    if (c.oursOnly.length > 0) lines.push(`  ours-only: ${listSome(c.oursOnly)}`);
    if (lines.length > 0) {
      p(`${r.page}:`);
      for (const l of lines) p(l);
    }
  }
  p();
  p(
    `Tab age — "${tabAge.page}" snapshotted ${AGE_RUNS}x after ${tabAge.navigations} navigations (+snapshots) in one tab`,
  );
  p(
    renderTable(
      [
        'tool',
        'long-lived p50',
        'long-lived p95',
        'fresh p50',
        'fresh p95',
        'long/fresh p50',
        'chars long/fresh',
        'target',
      ],
      [
        [
          'ours',
          fmt(tabAge.ours.longLived.p50),
          fmt(tabAge.ours.longLived.p95),
          fmt(tabAge.ours.fresh.p50),
          fmt(tabAge.ours.fresh.p95),
          fmtRatio(tabAge.ours.ratioP50),
          `${tabAge.ours.longLived.chars}/${tabAge.ours.fresh.chars}`,
          tabAge.ours.ratioP50 <= 1.1 ? 'ok (≤1.10x)' : 'MISSED (≤1.10x)',
        ],
        [
          'Stagehand',
          fmt(tabAge.stagehand.longLived.p50),
          fmt(tabAge.stagehand.longLived.p95),
          fmt(tabAge.stagehand.fresh.p50),
          fmt(tabAge.stagehand.fresh.p95),
          fmtRatio(tabAge.stagehand.ratioP50),
          `${tabAge.stagehand.longLived.chars}/${tabAge.stagehand.fresh.chars}`,
          '',
        ],
      ],
    ),
  );
  p();
  const coldWall = summarize(cold.map((c) => c.wallMs));
  const coldChild = summarize(cold.map((c) => c.childMs));
  p('Start-up');
  p(
    renderTable(
      ['measure', 'p50', 'p95', 'runs', 'target'],
      [
        [
          'cold start, spawn → first snapshot (parent wall)',
          fmt(coldWall.p50, 0),
          fmt(coldWall.p95, 0),
          cold.map((c) => c.wallMs).join(' / '),
          coldWall.p50 <= 2500 ? 'ok (≤2500)' : 'MISSED (≤2500)',
        ],
        [
          'cold start, child timeOrigin → first snapshot',
          fmt(coldChild.p50, 0),
          fmt(coldChild.p95, 0),
          cold.map((c) => c.childMs).join(' / '),
          coldChild.p50 <= 2500 ? 'ok (≤2500)' : 'MISSED (≤2500)',
        ],
        [
          'new context + page in a warm browser',
          fmt(newContext.p50),
          fmt(newContext.p95),
          String(newContext.n),
          newContext.p95 <= 300 ? 'ok (≤300)' : 'MISSED (≤300)',
        ],
      ],
      ['left', 'right', 'right', 'right', 'left'],
    ),
  );
  const m = cold[Math.floor(cold.length / 2)]?.marks;
  if (m) p(`cold-start phases (child ms since timeOrigin, one run): ${JSON.stringify(m)}`);
  p();
  process.stdout.write(`${out.join('\n')}\n`);
  const json = {
    bench: 'snapshot',
    ...meta,
    tokenizer: TOKENIZER,
    runs: RUNS,
    largeRuns: LARGE_RUNS,
    ageRuns: AGE_RUNS,
    warmup: WARMUP,
    pages: results,
    overall: all,
    tabAge,
    newContextMs: newContext,
    coldStart: { wallMs: coldWall, childMs: coldChild, runs: cold },
  };
  process.stdout.write(`JSON (all figures, one line):\n${JSON.stringify(json)}\n`);
}

const listSome = (xs: string[], n = 12) =>
  xs.slice(0, n).join(', ') + (xs.length > n ? `, … +${xs.length - n} more` : '');

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
  const stagehandVersion = (
    JSON.parse(
      readFileSync(join(root, 'node_modules', '@browserbasehq', 'stagehand', 'package.json'), 'utf8'),
    ) as { version: string }
  ).version;
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
    printResults(results, overall(results), tabAge, newContext, cold, {
      stagehandVersion,
      node: process.version,
      chromium: executablePath,
      viewport: VIEWPORT,
      totalSeconds: round((performance.now() - started) / 1000),
    });
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
