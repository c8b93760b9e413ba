/**
 * bench:matcher — how much of the case table the zero-token matcher answers, how often it is
 * wrong (must be never), how long a decision takes after the snapshot, and what an act costs when
 * the action cache already knows the answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { settle } from '../../lib/browser/settle.ts';
import { act } from '../../lib/ops/act.ts';
import { ActionCache } from '../../lib/ops/cache.ts';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { LocalCacheStore } from '../../lib/store/local-cache.ts';
import { DEFER_CASES, RESOLVE_CASES } from '../cases/matcher-cases.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { fixtureSession, opContext } from '../support/ops-env.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
const snaps = new Map<string, Snapshot>();
for (const path of new Set([...RESOLVE_CASES, ...DEFER_CASES].map((c) => c.page))) {
  const { page, context } = await openPage(browser, site.url + path);
  await page.waitForTimeout(50);
  snaps.set(path, await snapshot(page));
  await context.close();
}

// Work done wrong: an action on the wrong element, an action where the case must defer, a replay
// that was not a cache hit. A deferral of a plain case is a figure (resolved share), not a failure.
const outcome = new BenchOutcome('bench:matcher', 'decisions and replays');
let resolved = 0;
let wrong = 0;
const times: number[] = [];
for (const c of RESOLVE_CASES) {
  const snap = snaps.get(c.page)!;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    matchInstruction(c.instruction, snap);
    times.push(performance.now() - t0);
  }
  const d = matchInstruction(c.instruction, snap);
  if (d.kind !== 'action') continue;
  resolved++;
  const want = c.expect;
  let ok = d.action.method === want.method;
  if (ok && 'role' in want) {
    const twins = snap.elements.filter((e) => e.role === want.role && e.name === want.name);
    ok = d.elementId === twins[(want.nth ?? 1) - 1]?.id;
  }
  if (!ok) wrong++;
  outcome.record(ok, `"${c.instruction}" on ${c.page}: ${d.action.method} on [${d.elementId}]`);
}
let deferWrong = 0;
for (const c of DEFER_CASES) {
  const answered = matchInstruction(c.instruction, snaps.get(c.page)!).kind === 'action';
  if (answered) deferWrong++;
  outcome.record(!answered, `"${c.instruction}" on ${c.page} must defer, and was answered`);
}

// act on a cache hit: fill the cache once, then time replays on a freshly reloaded, settled page.
const dir = await mkdtemp(join(tmpdir(), 'bfn-bench-cache-'));
const cache = new ActionCache(new LocalCacheStore(dir));
const hitTimes: number[] = [];
const hitCases = [
  'click the Sign in button',
  'check remember me',
  'type "ada@example.com" into the email field',
];
for (const instruction of hitCases) {
  const warm = await fixtureSession(browser, site, '/login.html');
  await act(opContext(warm, { cache }), instruction);
  for (let i = 0; i < RUNS; i++) {
    await warm.page.reload();
    // Time the act itself on a loaded page, not the page's own post-load quiet window.
    await settle(warm.page);
    const res = await act(opContext(warm, { cache }), instruction);
    outcome.record(res.cache === 'hit', `expected a cache hit for ${instruction}, got ${res.cache}`);
    hitTimes.push(res.ms);
  }
  await warm.close();
}
await rm(dir, { recursive: true, force: true });
await browser.close();
await closeGuardProxies();
await site.close();

await outcome.gate();
const figures = {
  plainCases: RESOLVE_CASES.length,
  resolvedShare: round((resolved / RESOLVE_CASES.length) * 100),
  wrongShare: round((wrong / Math.max(1, resolved)) * 100),
  deferCases: DEFER_CASES.length,
  deferWrong,
  decisionP50ms: round(percentile(times, 50), 3),
  decisionP95ms: round(percentile(times, 95), 3),
  cacheHitActP50ms: round(percentile(hitTimes, 50)),
  cacheHitActP95ms: round(percentile(hitTimes, 95)),
};
console.log('bench:matcher — zero-token tier over the fixture case table\n');
console.log(
  table([
    ['figure', 'value', 'target'],
    ['plain cases resolved', `${resolved}/${RESOLVE_CASES.length} (${figures.resolvedShare}%)`, '>= 80%'],
    ['wrong answers among resolved', `${wrong} (${figures.wrongShare}%)`, '0'],
    ['must-defer cases answered anyway', `${deferWrong}/${DEFER_CASES.length}`, '0'],
    [
      'decision p50 / p95 (ms, after snapshot)',
      `${figures.decisionP50ms} / ${figures.decisionP95ms}`,
      '<= 5',
    ],
    [
      'act on a cache hit p50 / p95 (ms)',
      `${figures.cacheHitActP50ms} / ${figures.cacheHitActP95ms}`,
      '<= 50',
    ],
  ]),
);
console.log(JSON.stringify({ bench: 'matcher', ...figures }));
