/**
 * bench:memory — memory across the samples of a run. A generated 50-page site where the price shows
 * only after a click on a "Details" tab (the last of four); a scripted model that tries the tabs in
 * order unless its prompt carries a hint naming one. The first sample has to explore; what worked is
 * kept in the run's memory and later samples go straight to the tab. Prints the ok count, then steps
 * per sample (first 5, last 45: mean), hints shown, and the tokens the memory itself cost (distilling
 * from the log is free; a model call is made only when a log says nothing). Exits non-zero when any
 * sample failed or ended with the wrong price.
 * BENCH_PAGES (default 50), BENCH_CONCURRENCY (default 2: the first two samples both explore).
 */
import { join } from 'node:path';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { LocalRunMemoryStore } from '../../lib/store/local-run-memory.ts';
import { startBrowser } from '../support/browser.ts';
import { detailsModel, priceOf, startDetailsSite } from '../support/details-site.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { runDeps, tempStores } from '../support/runs-env.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { round, table } from './lib/report.ts';

const PAGES = Number(process.env.BENCH_PAGES ?? 50);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 2);
const [browser, site, llm, stores] = await Promise.all([
  startBrowser(),
  startDetailsSite(),
  startScriptedModel(),
  tempStores('bfn-bench-memory-'),
]);
llm.setHandler(detailsModel);
const outcome = new BenchOutcome('bench:memory', 'checks (one per sample, one for token accounting)');
const report: string[] = [];
const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
try {
  const spec = parseTaskSpec({
    goal: 'report the price of the item as price',
    outputSchema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
    requiredFields: ['price'],
    maxSteps: 8,
    concurrency: CONCURRENCY,
  });
  const ids = Array.from({ length: PAGES }, (_, i) => i + 1);
  const samples = ids.map((n) => ({
    sampleId: `p${String(n).padStart(3, '0')}`,
    url: `${site.url}/p/${n}`,
    input: {},
  }));
  const input = await createRun(stores.runStore, stores.evidence, { tenant: 'bench', spec, samples });
  const deps = runDeps(stores, browser, site as unknown as FixtureServer, llm, {
    runMemory: new LocalRunMemoryStore(join(stores.dir, 'runs')),
    policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, { allowHosts: [`127.0.0.1:${site.port}`] }),
    sliceBudgetMs: 120_000,
  });
  const started = performance.now();
  await startLocalRun(input, runHandlers(deps)).result;
  const seconds = (performance.now() - started) / 1000;
  const results = await stores.runStore.listResults('bench', input.runId);
  const byId = new Map(results.map((r) => [r.sampleId, r]));
  const steps: number[] = [];
  for (const [i, s] of samples.entries()) {
    const r = byId.get(s.sampleId);
    const price = (r?.data as { price?: unknown } | undefined)?.price;
    outcome.record(
      r?.status === 'done' && price === priceOf(ids[i]!),
      `${s.sampleId}: ${r ? `${r.status} with price ${JSON.stringify(price)} (${r.reason})` : 'no result'}`,
    );
    steps.push(Number(r?.usage.steps ?? 0));
  }
  const decisions = llm.requests.filter((r) => r.schemaName === 'next_actions');
  const hinted = samples.filter((s) =>
    decisions.some(
      (r) =>
        r.text.includes(`${s.url}\n`) &&
        /^Step 1 of/m.test(r.text) &&
        r.text.includes('Hints from earlier samples'),
    ),
  ).length;
  const distillCalls = llm.requests.filter((r) => r.schemaName === 'run_memory').length;
  const tracked = results.reduce(
    (n, r) => n + Number(r.usage.promptTokens ?? 0) + Number(r.usage.completionTokens ?? 0),
    0,
  );
  const served = llm.served.promptTokens + llm.served.completionTokens;
  outcome.record(tracked === served, `tokens tracked ${tracked} but the model server billed ${served}`);
  const first5 = steps.slice(0, 5);
  const last = steps.slice(5);
  report.push(
    table([
      ['samples', 'steps per sample', 'mean'],
      [`first ${first5.length}`, first5.join(' '), round(mean(first5))],
      [`last ${last.length}`, `${Math.min(...last)}–${Math.max(...last)}`, round(mean(last))],
    ]),
  );
  report.push(`tokens: tracked in the results ${tracked}, billed by the scripted server ${served}`);
  report.push(
    `samples shown hints in step 1: ${hinted} of ${PAGES}; model calls spent on distilling memory: ${distillCalls}; concurrency ${CONCURRENCY}; ${round(seconds)} s`,
  );
} finally {
  await closeGuardProxies();
  await browser.close();
  await site.close();
  await llm.close();
  await stores.cleanup();
}
await outcome.gate();
for (const part of report) console.log(part);
