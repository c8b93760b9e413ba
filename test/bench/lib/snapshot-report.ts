/**
 * bench:snapshot's figures and their printout: per page (ours, Stagehand's snapshot, the bare AX
 * tree, Playwright's aria snapshot), overall ratios, tab age, a new context, cold starts.
 */
import type { Misses, OurCompleteness } from './compare.ts';
import { fmt, fmtRatio, geomean, ratio, renderTable, round, type Summary, summarize } from './stats.ts';
import { TOKENIZER } from './tokens.ts';

/** How the figures were taken, for the printout's headings. */
export interface BenchSettings {
  runs: number;
  largeRuns: number;
  warmup: number;
  ageRuns: number;
}

export interface TextFigures {
  ms: Summary;
  chars: number;
  tokens: number;
}

export interface PageResult {
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

export type AgeFigures = Summary & { chars: number };

export interface TabAge {
  page: string;
  navigations: number;
  ours: { longLived: AgeFigures; fresh: AgeFigures; ratioP50: number };
  stagehand: { longLived: AgeFigures; fresh: AgeFigures; ratioP50: number };
}

export interface ColdRun {
  /** Parent's wall clock from spawn to the child's result line. */
  wallMs: number;
  /** Child's own `performance.now()` (from its timeOrigin) at the end of the first snapshot. */
  childMs: number;
  marks: Record<string, number>;
}

export interface Overall {
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

export function overall(results: PageResult[]): Overall {
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

export function printResults(
  settings: BenchSettings,
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
    `Snapshot benchmark — ${settings.runs} runs per page (${settings.largeRuns} on large pages) after ${settings.warmup} warm-up runs; ms = wall time of one call from Node`,
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
    `Tab age — "${tabAge.page}" snapshotted ${settings.ageRuns}x after ${tabAge.navigations} navigations (+snapshots) in one tab`,
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
    runs: settings.runs,
    largeRuns: settings.largeRuns,
    ageRuns: settings.ageRuns,
    warmup: settings.warmup,
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
