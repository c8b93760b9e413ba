/**
 * bench:grounding — the zero-token matcher on saved real login, sign-up and change-password pages
 * (`../shared/corpus/forms`, labelled with `data-fathom` attributes; see its README). For each
 * labelled visible target it runs fixed user phrasings that do not depend on reading the page and
 * counts right / wrong (acted on another element) / deferred, per label and phrasing. A wrong
 * action is the number that must stay at zero; deferring is allowed.
 *
 *   npm run bench:grounding                  (all pages)
 *   BENCH_LIMIT=50 npm run bench:grounding   (first 50 pages per folder)
 *   BENCH_CACHE=1 npm run bench:grounding    (reuse snapshots from the last run with the same collector)
 *   BENCH_CACHE_KEY=<hash> …                  (…or with the collector version of that cache folder)
 *   BENCH_OUT=/tmp/g.json …                  (every decision, for reading the misses)
 *   BENCH_VARIANTS=1 …                       (also other wordings, checked for wrong actions only)
 *   npm run bench:grounding -- --deferred    (every target no fitting phrasing got right, by reason)
 *
 * Pages load offline (every non-file: request fails) at the capture viewport, 1100x900; labels are
 * read and removed in the page before the snapshot, so nothing the matcher sees can key on them.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot, SnapshotElement } from '../../lib/perception/types.ts';
import {
  CORPUS,
  corpusPages,
  offlineContext,
  requireCorpus,
  takeLabels,
  whichLabelled,
} from './lib/corpus.ts';
import {
  fittingKeys,
  formApplies,
  formWords,
  LABELS,
  type Label,
  PHRASINGS,
  VARIANTS,
} from './lib/grounding-fit.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
// The Playwright adapter of the page-driver port, where the tree has one (ops take a driver there).
await import(new URL('../../lib/browser/playwright-driver.ts', import.meta.url).href).catch(() => undefined);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 0) || Infinity;
const PARALLEL = Math.max(1, Number(process.env.BENCH_PARALLEL ?? 3) || 3);
const USE_CACHE = process.env.BENCH_CACHE === '1';
const OUT = process.env.BENCH_OUT;
const FILTER = process.env.BENCH_FILTER;
const WITH_VARIANTS = process.env.BENCH_VARIANTS === '1';
const log = (msg: string) => process.stderr.write(`${msg}\n`);
requireCorpus('bench:grounding');

/** A labelled element as the page had it: its label, whether a user could see it, its snapshot id. */
interface LabelledTarget {
  label: Label;
  visible: boolean;
  /** Snapshot id, when the snapshot lists the element. */
  id?: number;
  /** Every snapshot id that stands for it (itself, or the control inside a labelled wrapper). */
  ids?: number[];
}

interface PageData {
  file: string;
  snap: Snapshot;
  targets: LabelledTarget[];
  loadMs: number;
}

// ---------------------------------------------------------------------------------------------
// Loading

/** Snapshots depend on the collector's code: a cache entry is valid only for the same sources. */
function collectorHash(): string {
  const h = createHash('sha256');
  const injected = 'lib/perception/injected';
  for (const f of [
    ...readdirSync(join(root, injected))
      .sort()
      .map((n) => `${injected}/${n}`),
    'lib/perception/tree.ts',
    'lib/perception/snapshot.ts',
  ])
    h.update(readFileSync(join(root, f)));
  return h.digest('hex').slice(0, 12);
}
// BENCH_CACHE_KEY=<hash> reads the snapshots another collector version took (matcher work while
// the collector is being changed, without a browser).
const cacheDir = join(tmpdir(), 'bfn-grounding-cache', process.env.BENCH_CACHE_KEY || collectorHash());

async function loadPage(context: BrowserContext, file: string): Promise<PageData | undefined> {
  const cachePath = join(cacheDir, `${file.replace(/[/\\]/g, '__')}.json`);
  if (USE_CACHE && existsSync(cachePath)) return JSON.parse(readFileSync(cachePath, 'utf8')) as PageData;
  const page: Page = await context.newPage();
  try {
    const t0 = performance.now();
    await page.goto(pathToFileURL(join(CORPUS, file)).href, { waitUntil: 'load', timeout: 20_000 });
    const key = `__benchLabels${Math.random().toString(36).slice(2)}`;
    const labels = await page.evaluate(takeLabels, key);
    const snap = await snapshot(page);
    const items: [number, string][] = snap.elements.map((e) => [e.id, e.locator.xpath]);
    const pairs = await page.evaluate(whichLabelled, { key, items });
    const targets: LabelledTarget[] = labels.map((l) => ({ label: l.label as Label, visible: l.visible }));
    for (const [at, id] of pairs) {
      const t = targets[at]!;
      t.id ??= id;
      t.ids = [...(t.ids ?? []), id];
    }
    const data: PageData = { file, snap, targets, loadMs: performance.now() - t0 };
    mkdirSync(cacheDir, { recursive: true });
    writeFileSync(cachePath, JSON.stringify(data));
    return data;
  } catch (err) {
    log(`  ${file}: ${(err as Error).message.split('\n')[0]}`);
    return undefined;
  } finally {
    await page.close().catch(() => {});
  }
}

async function loadAll(files: string[]): Promise<PageData[]> {
  const needBrowser =
    !USE_CACHE || files.some((f) => !existsSync(join(cacheDir, `${f.replace(/[/\\]/g, '__')}.json`)));
  const browser = needBrowser ? await launchBrowser() : undefined;
  const context = browser ? await offlineContext(browser) : undefined;
  const out: PageData[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= files.length) return;
      const data = await loadPage(context!, files[i]!);
      if (data) out.push(data);
      if (++done % 50 === 0) log(`  ${done}/${files.length} pages`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  await browser?.close();
  return out.sort((a, b) => a.file.localeCompare(b.file));
}

// ---------------------------------------------------------------------------------------------
// Scoring

type Outcome = 'right' | 'wrong' | 'deferred';
interface Decision {
  file: string;
  label: Label;
  key: string;
  fits: boolean;
  outcome: Outcome;
  /** What it did or why it deferred. */
  detail: string;
  /** The labelled target(s), as the matcher saw them. */
  target: string;
  ms: number;
}

const shown = (e: SnapshotElement | undefined) =>
  e
    ? `[${e.id}] ${e.role}${e.inputType ? `(${e.inputType})` : ''} '${e.name || e.label || e.placeholder || ''}'`
    : '?';

const files = corpusPages(LIMIT, FILTER);
log(`bench:grounding: ${files.length} pages from ${CORPUS}${USE_CACHE ? ' (snapshot cache on)' : ''}`);
const t0 = performance.now();
const pages = await loadAll(files);
const loadS = (performance.now() - t0) / 1000;
log(`loaded ${pages.length} pages in ${round(loadS, 1)} s`);
// Its work is reading each corpus page; a page that could not be read is a failure, not a page
// quietly left out of the shares. (Wrong actions are what it measures: a figure, listed below.)
const gate = new BenchOutcome('bench:grounding', 'pages');
const loaded = new Set(pages.map((p) => p.file));
for (const f of files) gate.record(loaded.has(f), `${f}: could not be loaded and read (see above)`);
await gate.gate();

const decisions: Decision[] = [];
let plainRight = 0;
let plainFit = 0;
const times: number[] = [];
/** Per label: targets, right with some fitting phrasing, with all, wrong with any, no fitting phrasing. */
const perLabel = new Map<
  Label,
  { targets: number; anyFit: number; allFit: number; wrongAny: number; noFit: number; missing: number }
>();
for (const l of LABELS)
  perLabel.set(l, { targets: 0, anyFit: 0, allFit: 0, wrongAny: 0, noFit: 0, missing: 0 });

for (const page of pages) {
  const byId = new Map(page.snap.elements.map((e) => [e.id, e]));
  const labelOf = new Map<number, Label>();
  for (const t of page.targets) for (const id of t.ids ?? []) labelOf.set(id, t.label);
  for (const label of LABELS) {
    const visible = page.targets.filter((t) => t.label === label && t.visible);
    if (visible.length === 0) continue;
    const inSnap = visible.filter((t) => t.id !== undefined);
    const first = byId.get(inSnap[0]?.id ?? -1);
    const formText = first ? formWords(page.snap.elements, first) : '';
    const fits = new Set(first ? fittingKeys(label, first, formText) : []);
    const results = new Map<string, Outcome>();
    for (const p of [...PHRASINGS[label], ...(WITH_VARIANTS ? VARIANTS[label] : [])]) {
      // "The sign-in password" is no way to say a field whose form reads "Create password".
      if (!formApplies(p, formText)) continue;
      const s = performance.now();
      const d = matchInstruction(p.instruction, page.snap);
      const ms = performance.now() - s;
      times.push(ms);
      let outcome: Outcome;
      let detail: string;
      if (d.kind === 'action') {
        const got = d.elementId !== undefined ? labelOf.get(d.elementId) : undefined;
        outcome = got === label ? 'right' : 'wrong';
        detail = `${d.action.description}${got && got !== label ? ` (labelled ${got})` : ''}${
          'reason' in d && typeof d.reason === 'string' ? ` — ${d.reason}` : ''
        }`;
      } else {
        outcome = 'deferred';
        detail = `${d.reason}; ${d.candidates
          .slice(0, 3)
          .map((c) => `[${c.id}] ${c.role} '${c.name}' ${c.score}`)
          .join(', ')}`;
      }
      if (PHRASINGS[label].includes(p)) results.set(p.key, outcome);
      decisions.push({
        file: page.file,
        label,
        key: p.key,
        fits: fits.has(p.key),
        outcome,
        detail,
        target: inSnap.map((t) => shown(byId.get(t.id!))).join(' | ') || '(not in snapshot)',
        ms,
      });
    }
    const stat = perLabel.get(label)!;
    const n = visible.length;
    stat.targets += n;
    if (inSnap.length === 0) stat.missing += n;
    if ([...results.values()].includes('wrong')) stat.wrongAny += n;
    if (fits.size === 0) stat.noFit += n;
    else {
      const fitting = [...fits].map((k) => results.get(k));
      if (fitting.includes('right')) stat.anyFit += n;
      // The same without the phrasings that name the form ("the sign-in email"): what a caller
      // who does not say which form gets.
      const plainFits = [...fits].filter((k) => !PHRASINGS[label].find((p) => p.key === k)?.form);
      if (plainFits.some((k) => results.get(k) === 'right')) plainRight += n;
      if (plainFits.length > 0) plainFit += n;
      if (fitting.every((o) => o === 'right')) stat.allFit += n;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Report

const pct = (a: number, b: number) => (b === 0 ? '-' : `${round((100 * a) / b, 1)}%`);
const rows: (string | number)[][] = [
  ['label', 'phrasing', 'runs', 'fits', 'right', 'wrong', 'deferred', 'right|fits', 'wrong|fits'],
];
for (const label of LABELS)
  for (const p of [...PHRASINGS[label], ...(WITH_VARIANTS ? VARIANTS[label] : [])]) {
    const ds = decisions.filter((d) => d.label === label && d.key === p.key);
    if (ds.length === 0) continue;
    const fit = ds.filter((d) => d.fits);
    rows.push([
      label,
      p.key,
      ds.length,
      fit.length,
      ds.filter((d) => d.outcome === 'right').length,
      ds.filter((d) => d.outcome === 'wrong').length,
      ds.filter((d) => d.outcome === 'deferred').length,
      fit.filter((d) => d.outcome === 'right').length,
      fit.filter((d) => d.outcome === 'wrong').length,
    ]);
  }
console.log(`\nPer label and phrasing (pages with a visible target of that label):\n${table(rows)}`);

const sum = { targets: 0, anyFit: 0, allFit: 0, wrongAny: 0, noFit: 0, missing: 0 };
const lrows: (string | number)[][] = [
  [
    'label',
    'targets',
    'right (a fitting phrasing)',
    'right (every fitting)',
    'wrong (any phrasing)',
    'no fitting phrasing',
    'not in snapshot',
  ],
];
for (const [label, s] of perLabel) {
  for (const k of Object.keys(sum) as (keyof typeof sum)[]) sum[k] += s[k];
  lrows.push([
    label,
    s.targets,
    `${s.anyFit} (${pct(s.anyFit, s.targets - s.noFit)})`,
    `${s.allFit} (${pct(s.allFit, s.targets - s.noFit)})`,
    s.wrongAny,
    s.noFit,
    s.missing,
  ]);
}
lrows.push([
  'all',
  sum.targets,
  `${sum.anyFit} (${pct(sum.anyFit, sum.targets - sum.noFit)})`,
  `${sum.allFit} (${pct(sum.allFit, sum.targets - sum.noFit)})`,
  sum.wrongAny,
  sum.noFit,
  sum.missing,
]);
console.log(`\nPer labelled visible target (share of targets with a fitting phrasing):\n${table(lrows)}`);

console.log(
  `Right with a fitting phrasing that names no form: ${plainRight} of ${plainFit} (${pct(plainRight, plainFit)}); naming the form (the sign-in email, the login password) wins back the rest of the 'all' row`,
);

const wrong = decisions.filter((d) => d.outcome === 'wrong');
console.log(`\nWrong actions: ${wrong.length}`);
for (const d of wrong)
  console.log(
    `  ${d.file} [${d.label} / "${d.key}"${d.fits ? '' : ', not fitting'}]: ${d.detail}; target ${d.target}`,
  );

// Why fitting phrasings defer, by the kind of reason (ids, quoted words and counts blanked), so the
// largest classes of deferrals show first: each is either an ambiguity or a rule to look at.
const reasonClass = (detail: string) =>
  detail
    .split('; ')[0]!
    .replace(/\[\d+\]/g, '[n]')
    .replace(/'[^']*'/g, "'…'")
    .replace(/\(it says [^)]*\)/g, '')
    .replace(/\d+(?:\.\d+)?/g, 'N')
    .slice(0, 110);
const byReason = new Map<string, Set<string>>();
for (const d of decisions.filter((x) => x.fits && x.outcome === 'deferred')) {
  const k = `${d.label}: ${reasonClass(d.detail)}`;
  byReason.set(k, (byReason.get(k) ?? new Set()).add(d.file));
}
console.log('\nFitting phrasings deferred, by reason (pages):');
for (const [k, files] of [...byReason].sort((a, b) => b[1].size - a[1].size).slice(0, 20))
  console.log(`  ${String(files.size).padStart(3)}  ${k}`);

// `-- --deferred`: every target no fitting phrasing got right, by reason class, with the page and
// what the matcher saw, to read one by one.
if (process.argv.includes('--deferred')) {
  const byTarget = new Map<string, Decision[]>();
  for (const d of decisions.filter((x) => x.fits)) {
    const k = `${d.file} ${d.label}`;
    byTarget.set(k, [...(byTarget.get(k) ?? []), d]);
  }
  const missed = [...byTarget.values()].filter((ds) => !ds.some((d) => d.outcome === 'right'));
  const byClass = new Map<string, Decision[]>();
  for (const ds of missed) {
    const d = ds[0]!;
    const k = `${d.label}: ${reasonClass(d.detail)}`;
    byClass.set(k, [...(byClass.get(k) ?? []), d]);
  }
  console.log(`\nTargets no fitting phrasing got right (${missed.length}), by reason:`);
  for (const [k, ds] of [...byClass].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`  ${k} (${ds.length})`);
    for (const d of ds)
      console.log(`    ${d.file} "${d.key}": ${d.detail.slice(0, 160)}; target ${d.target}`);
  }
}

console.log(
  `\nDecision time after the snapshot: p50 ${round(percentile(times, 50), 3)} ms, p95 ${round(percentile(times, 95), 3)} ms, max ${round(Math.max(...times), 2)} ms over ${times.length} decisions`,
);
console.log(
  `Pages: ${pages.length} of ${files.length} loaded in ${round(loadS, 1)} s (${PARALLEL} in parallel)`,
);
if (OUT) {
  writeFileSync(OUT, JSON.stringify(decisions, null, 1));
  log(`decisions written to ${OUT}`);
}
