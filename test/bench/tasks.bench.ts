/**
 * bench:tasks — single-action web tasks (test/fixtures/site/tasks), each instruction taken verbatim
 * from its page and run through `act` with no model: right / wrong / deferred, every wrong one
 * listed with what the page saw. Target: >= 70% right and 0 wrong.
 *
 *   npm run bench:tasks
 */
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { TASKS } from '../fixtures/tasks.ts';
import { startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { runTask, type TaskRun } from '../support/tasks.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
const runs: TaskRun[] = [];
try {
  for (const task of TASKS) runs.push(await runTask(browser, site, task));
} finally {
  await browser.close();
  await closeGuardProxies();
  await site.close();
}

const count = (o: TaskRun['outcome']) => runs.filter((r) => r.outcome === o).length;
const right = count('right');
const wrong = count('wrong');
const deferred = count('deferred');
const pct = (n: number) => `${round((n / runs.length) * 100)}%`;
const ms = runs.map((r) => r.ms);

// A deferral (left to the model, none here) is a right answer for the zero-token tier; a wrong
// action is a failure, and no figure is printed over one.
const outcome = new BenchOutcome('bench:tasks', 'tasks right or deferred');
for (const r of runs)
  outcome.record(r.outcome !== 'wrong', `${r.task.page}: "${r.instruction}" → ${r.detail}`);
await outcome.gate();
console.log('bench:tasks — single-action tasks given verbatim, act with no model\n');
console.log(
  table([
    ['task', 'outcome', 'ms', 'instruction'],
    ...runs.map((r) => [r.task.page, r.outcome, r.ms, r.instruction]),
  ]),
);
console.log('');
console.log(
  table([
    ['figure', 'value', 'target'],
    ['right', `${right}/${runs.length} (${pct(right)})`, '>= 70%'],
    ['wrong', `${wrong}/${runs.length} (${pct(wrong)})`, '0'],
    ['deferred', `${deferred}/${runs.length} (${pct(deferred)})`, ''],
    ['act p50 / p95 (ms, page settle included)', `${percentile(ms, 50)} / ${percentile(ms, 95)}`, ''],
  ]),
);
console.log(
  JSON.stringify({
    bench: 'tasks',
    tasks: runs.length,
    right,
    wrong,
    deferred,
    rightShare: round((right / runs.length) * 100),
    actP50ms: percentile(ms, 50),
  }),
);
