/**
 * bench:scenarios — the scenario runner's own cost, and blocker clearing across a site's pages.
 *
 * 1. Step overhead: a 3-step notes scenario (add, add, verify the count) on the scenario fixture app,
 *    a scripted model answering each step right at once, through the real OpenAI SDK. Per iteration:
 *    its wall time less the model call's (outline + blocker check + commands + verifications, and in
 *    set-of-marks mode the marked screenshot); prompt tokens per iteration. Target p50 ≤ 150 ms.
 * 2. Blockers on real pages: the saved corpus pages (`../shared/corpus/forms`) grouped into sites of
 *    BENCH_SITE_PAGES (default 5) pages, each site with a consent banner of its own injected (wording
 *    no zero-token rule knows, appended to the body, so it sits at another place in each page's
 *    document). The first page of a site has the model clear it (blockerDetected); the later pages
 *    are counted cleared with zero tokens when memory replayed the clearing before the model call, the
 *    banner is gone and the model's prompt never showed it. Target ≥ 95%.
 *
 * Prints its ok count first; exits non-zero when a scenario did not pass, a page did not load or a
 * first page's clearing failed (a miss on a later page is the figure, not a failure).
 *   BENCH_RUNS (scenarios per mode, default 10), BENCH_LIMIT (corpus pages per folder), BENCH_PARALLEL (3),
 *   BENCH_CHROMIUM_ARGS (extra Chromium flags, space-separated, e.g. `--disable-gpu`)
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import type { ScenarioMemory } from '../../lib/scenarios/memory.ts';
import { type IterationRecord, runScenario, type ScenarioPhase } from '../../lib/scenarios/run-scenario.ts';
import { parseScenario, type Scenario } from '../../lib/scenarios/spec.ts';
import { type RecordedRequest, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt, modelConfig } from '../support/ops-env.ts';
import { startScenarioSite } from '../support/scenario-site.ts';
import { CORPUS, corpusPages, VIEWPORT } from './lib/corpus.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 10) || 10;
const LIMIT = Number(process.env.BENCH_LIMIT ?? 0) || Infinity;
const PARALLEL = Math.max(1, Number(process.env.BENCH_PARALLEL ?? 3) || 3);
const SITE_PAGES = Math.max(2, Number(process.env.BENCH_SITE_PAGES ?? 5) || 5);
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const EXTRA_ARGS = (process.env.BENCH_CHROMIUM_ARGS ?? '').split(/\s+/).filter(Boolean);
const [browser, site, llm] = await Promise.all([
  launchBrowser({ args: EXTRA_ARGS }),
  startScenarioSite(),
  startScriptedModel(),
]);
const model = createLlmClient({ ...modelConfig(llm, 'openai'), maxRetries: 0 });
const outcome = new BenchOutcome('bench:scenarios', 'units (scenarios passed, corpus pages read)');
const report: string[] = [];

const decide = (d: Record<string, unknown>) => ({
  json: { reasoning: 'scripted', noteToFutureSelf: '', experiences: [], commands: [], ...d },
});
const stepOf = (r: RecordedRequest) => /Current step \d+ of \d+: ([^\n]+)/.exec(r.text)?.[1] ?? '';

/** The banner each corpus site carries: wording and labels no zero-token rule matches. */
const BANNERS = [
  {
    text: 'This website keeps a few small files on your device so that it works.',
    button: 'Proceed to the site',
  },
  { text: 'Before you go on: we and our partners store data on this device.', button: 'Sounds good' },
  { text: 'We use local storage to remember your choices on this site.', button: 'Fine by me' },
];
const bannerOf = (site: number) => BANNERS[site % BANNERS.length]!;

/** The scripted model: the notes steps done right at once; on a corpus page, the banner cleared when shown. */
llm.setHandler((r) => {
  if (r.schemaName !== 'scenario_decision') return { status: 400 };
  const step = stepOf(r);
  const banner = BANNERS.map((b) => b.button).find((b) => r.text.includes(`button: ${b}`));
  if (step.startsWith('Look at the page'))
    return decide({
      status: 'complete',
      ...(banner
        ? {
            blockerDetected: {
              description: 'site notice',
              clearingCommands: [
                { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', banner) },
              ],
            },
          }
        : {}),
    });
  const note = /saying (\w+)/.exec(step)?.[1];
  if (note)
    return decide({
      status: 'complete',
      commands: [
        { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'New note'), value: note },
        { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') },
      ],
    });
  return decide({
    status: 'complete',
    commands: [
      { kind: 'verify', check: 'textEquals', selector: '#count', expected: '2 notes' },
      { kind: 'verify', check: 'countEquals', selector: '#notes > li', expected: '2' },
    ],
  });
});

/** The client, with each model call's wall time noted (the overhead is the rest of the iteration). */
function timed(inner: LlmClient, calls: number[]): LlmClient {
  return {
    model: inner.model,
    async generate(req) {
      const t = performance.now();
      try {
        return await inner.generate(req);
      } finally {
        calls.push(performance.now() - t);
      }
    },
  };
}

/** Iteration times less model time, and prompt tokens per iteration, for one vision mode. */
async function overhead(
  vision: 'text' | 'som',
): Promise<{ ms: number[]; runner: number[]; tokens: number[]; phases: Map<ScenarioPhase, number[]> }> {
  const scenario: Scenario = parseScenario({
    steps: ['Add a note saying Milk', 'Add a note saying Eggs', { do: 'Verify the list', expect: '2 notes' }],
    vision,
  });
  const ms: number[] = [];
  const tokens: number[] = [];
  const runner: number[] = [];
  const phases = new Map<ScenarioPhase, number[]>();
  for (let run = 0; run < RUNS + 1; run++) {
    // Per iteration: each phase's time (a phase seen twice in an iteration is summed).
    const split: Map<ScenarioPhase, number>[] = [new Map()];
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${site.url}/notes`);
    const calls: number[] = [];
    const spans: number[] = [];
    let last = performance.now();
    const result = await runScenario(scenario, {
      page,
      llm: timed(model, calls),
      onPhase: (phase, took) => {
        const at = split[split.length - 1]!;
        at.set(phase, (at.get(phase) ?? 0) + took);
      },
      onIteration: () => {
        const now = performance.now();
        spans.push(now - last);
        last = now;
        split.push(new Map());
      },
    });
    await context.close();
    const good = result.status === 'passed' && calls.length === spans.length;
    outcome.record(good, `${vision} scenario ${run}: ${result.status} ${result.reason ?? ''}`);
    // The first run warms the browser and the SDK up: not counted.
    if (!good || run === 0) continue;
    ms.push(...spans.map((s, i) => s - calls[i]!));
    for (const [i, it] of split.slice(0, spans.length).entries()) {
      // The runner's own cost, as the target counts it: the iteration less the model call and the
      // actions themselves (lib/actions: the page's reaction to a fill or a click is the app's time).
      const own = spans[i]! - calls[i]! - (it.get('actions') ?? 0);
      runner.push(own);
      for (const [phase, took] of it)
        if (took > 0 || phase === 'bookkeeping') phases.set(phase, [...(phases.get(phase) ?? []), took]);
    }
    tokens.push(...result.iterations.map((i: IterationRecord) => i.promptTokens));
  }
  return { ms, runner, tokens, phases };
}

const PHASES: ScenarioPhase[] = [
  'blockers',
  'snapshot',
  'picture',
  'model',
  'actions',
  'verifications',
  'bookkeeping',
];
const split: (string | number)[][] = [['mode', ...PHASES.map((p) => `${p} p50/p95`)]];
for (const vision of ['text', 'som'] as const) {
  const { ms, runner, tokens, phases } = await overhead(vision);
  const p50 = percentile(runner, 50);
  report.push(
    `${vision}: step overhead (outline, blockers, picture, verifications, bookkeeping) p50 ${round(p50)} ms, p95 ${round(percentile(runner, 95))} ms over ${runner.length} iterations (target p50 ≤ 150 ms: ${p50 <= 150 ? 'met' : 'NOT met'}); with the actions too p50 ${round(percentile(ms, 50))} ms, p95 ${round(percentile(ms, 95))} ms; prompt tokens per iteration p50 ${percentile(tokens, 50)}, max ${Math.max(...tokens)}`,
  );
  split.push([
    vision,
    ...PHASES.map((p) => {
      const xs = phases.get(p);
      return xs?.length ? `${round(percentile(xs, 50))}/${round(percentile(xs, 95))} (${xs.length})` : '–';
    }),
  ]);
}
report.push(
  'per iteration, by phase, ms (over the iterations that had the phase, their count in brackets; model: the scripted model call, not overhead):',
);
report.push(table(split));
report.push(
  `${EXTRA_ARGS.length ? `extra Chromium flags: ${EXTRA_ARGS.join(' ')}; ` : ''}load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} on ${cpus().length} cores`,
);

// ---------------------------------------------------------------------------------------------
// Blockers across the pages of a site

/** In the page: the site's banner at the end of the body; its button removes it. */
function inject(b: { text: string; button: string }): boolean {
  if (!document.body) return false;
  const bar = document.createElement('div');
  bar.id = 'bench-notice';
  bar.setAttribute(
    'style',
    'position:fixed;left:0;right:0;bottom:0;z-index:2147483647;background:#fff;border-top:2px solid #333;padding:16px;font:16px sans-serif;color:#000',
  );
  const p = document.createElement('p');
  p.textContent = b.text;
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = b.button;
  button.setAttribute(
    'style',
    'font:16px sans-serif;padding:8px 16px;display:inline-block;visibility:visible;opacity:1',
  );
  button.addEventListener('click', () => bar.remove());
  bar.append(p, button);
  document.body.append(bar);
  return true;
}

const LOOK: Scenario = parseScenario({ steps: ['Look at the page'] });

interface PageOutcome {
  first: boolean;
  zeroToken: boolean;
}

async function onPage(
  page: Page,
  siteNo: number,
  file: string,
  memory: ScenarioMemory,
  first: boolean,
): Promise<{ outcome?: PageOutcome; memory: ScenarioMemory; problem?: string }> {
  const url = `http://site-${siteNo}.bench.test/${file}`;
  try {
    await page.goto(url, { waitUntil: 'load', timeout: 20_000 });
  } catch (err) {
    return { memory, problem: `${file}: did not load (${(err as Error).message.split('\n')[0]})` };
  }
  const banner = bannerOf(siteNo);
  if (!(await page.evaluate(inject, banner).catch(() => false)))
    return { memory, problem: `${file}: no body` };
  const mark = llm.requests.length;
  const result = await runScenario(LOOK, { page, llm: model, memory, maxIterations: 2 });
  const shown = llm.requests.slice(mark).some((r) => r.text.includes(`button: ${banner.button}`));
  const gone = (await page.locator('#bench-notice').count()) === 0;
  const byMemory = result.iterations[0]?.cleared.some((c) => c.endsWith('(remembered clearing)')) ?? false;
  if (first) {
    // The banner must be gone either way; a page whose own script took it away (a reload after its
    // own pop-up was dismissed) taught the site nothing, and the next page is its first again.
    if (!gone || result.status !== 'passed')
      return {
        memory: result.memory,
        problem: `${file}: the banner was not cleared on the site's first page (${result.status})`,
      };
    return { memory: result.memory, outcome: { first, zeroToken: false } };
  }
  return { memory: result.memory, outcome: { first, zeroToken: byMemory && gone && !shown } };
}

const files = corpusPages(LIMIT);
if (files.length === 0) {
  report.push(`blockers: skipped, no corpus at ${CORPUS} (set BENCH_CORPUS to its forms/ folder)`);
} else {
  const sites: string[][] = [];
  for (let i = 0; i < files.length; i += SITE_PAGES) sites.push(files.slice(i, i + SITE_PAGES));
  const later: PageOutcome[] = [];
  let firsts = 0;
  const misses: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async (browser: Browser) => {
    for (;;) {
      const siteNo = next++;
      const pages = sites[siteNo];
      if (!pages) return;
      // Each site its own context: pages of a site served under one host, nothing leaves the machine.
      const context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: false });
      await context.route('**/*', (route) => {
        const m = /^http:\/\/site-\d+\.bench\.test\/(.+\.html)$/.exec(route.request().url());
        // Only the site's own saved pages: a frame of one (an iframe's page) was not kept.
        if (!m || !pages.includes(decodeURIComponent(m[1]!))) return route.abort();
        return route.fulfill({
          status: 200,
          contentType: 'text/html; charset=utf-8',
          body: readFileSync(join(CORPUS, decodeURIComponent(m[1]!))),
        });
      });
      let memory: ScenarioMemory = {};
      for (const file of pages) {
        const page = await context.newPage();
        // A page is a site's first until the model's clearing of the banner is remembered.
        const first = Object.values(memory).every((d) => d.clearings.length === 0);
        const got = await onPage(page, siteNo, file, memory, first).catch((err: Error) => ({
          memory,
          problem: `${file}: ${err.message.split('\n')[0]}`,
          outcome: undefined,
        }));
        await page.close().catch(() => undefined);
        memory = got.memory;
        outcome.record(!got.problem, got.problem ?? '');
        if (got.outcome?.first) firsts++;
        if (got.outcome && !got.outcome.first) {
          later.push(got.outcome);
          if (!got.outcome.zeroToken) misses.push(file);
        }
      }
      await context.close();
      if (siteNo % 10 === 0) log(`site ${siteNo + 1}/${sites.length}`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, () => worker(browser)));
  const cleared = later.filter((o) => o.zeroToken).length;
  report.push(
    table([
      ['sites', 'pages', 'first pages', 'later pages', 'cleared with 0 tokens', '%', 'target'],
      [
        sites.length,
        files.length,
        firsts,
        later.length,
        cleared,
        round((100 * cleared) / Math.max(1, later.length)),
        '≥ 95%',
      ],
    ]),
  );
  if (misses.length)
    report.push(`missed: ${misses.slice(0, 10).join(', ')}${misses.length > 10 ? ' …' : ''}`);
  report.push(`blockers: ${round((performance.now() - started) / 1000)} s, ${PARALLEL} at once`);
}

await outcome.gate(async () => {
  await browser.close();
  await site.close();
  await llm.close();
});
for (const line of report) console.log(line);
await browser.close();
await site.close();
await llm.close();
