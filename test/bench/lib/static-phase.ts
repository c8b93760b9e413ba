/**
 * bench:workflows' read-only phase: the extract sample compiled alone (open the product, read it)
 * replayed on every page the way a run would replay it — from the served HTML when the compile check
 * marked it so (lib/workflows/static-read.ts), the browser for any page the static read misses, and
 * the first page and one in `recheckEvery` read again in the browser (the gate). Counts Chromium
 * pages opened, which path read each page, and the data against the truth.
 */
import type { Browser } from 'playwright-core';
import type { GuardPolicy } from '../../../lib/browser/guard-policy.ts';
import type { JsonObject } from '../../../lib/store/ports.ts';
import { runWorkflow } from '../../../lib/workflows/executor.ts';
import { sameData } from '../../../lib/workflows/extractor.ts';
import type { Workflow } from '../../../lib/workflows/schema.ts';
import { runStaticFirst, StaticGate } from '../../../lib/workflows/static-read.ts';
import { truth } from './catalogue-model.ts';
import { pool, withPage } from './replay-phase.ts';
import { round } from './report.ts';

export interface StaticPhaseReport {
  pages: number;
  ms: number;
  right: number;
  /** Pages answered from the served HTML / by the browser. */
  byStatic: number;
  byBrowser: number;
  /** Chromium pages opened (fallbacks and the gate's re-checks). */
  chromiumPages: number;
  rechecks: number;
  gateOff?: string;
  fellBack: string[];
  data: Map<number, JsonObject>;
}

export async function staticPhase(opts: {
  browser: Browser;
  workflow: Workflow;
  siteUrl: string;
  ids: readonly number[];
  concurrency: number;
  policy: GuardPolicy;
  recheckEvery: number;
  readAlias: string;
}): Promise<StaticPhaseReport> {
  const gate = new StaticGate(opts.recheckEvery);
  const report: StaticPhaseReport = {
    pages: opts.ids.length,
    ms: 0,
    right: 0,
    byStatic: 0,
    byBrowser: 0,
    chromiumPages: 0,
    rechecks: 0,
    fellBack: [],
    data: new Map(),
  };
  const started = performance.now();
  let done = 0;
  await pool(opts.ids, opts.concurrency, async (id) => {
    const init = {
      tenant: 'bench',
      runId: 'read-only',
      sampleId: `p${id}`,
      inputs: {},
      url: `${opts.siteUrl}/product/${id}`,
    };
    const out = await runStaticFirst(opts.workflow, init, {
      policy: opts.policy,
      gate,
      browser: () => {
        report.chromiumPages++;
        return withPage(opts.browser, (page) => runWorkflow(opts.workflow, init, { page }));
      },
    });
    if (out.path === 'static-html') report.byStatic++;
    else report.byBrowser++;
    if (out.rechecked) report.rechecks++;
    if (out.fellBack && report.fellBack.length < 5) report.fellBack.push(`page ${id}: ${out.fellBack}`);
    const data = out.state.data[opts.readAlias] as JsonObject | undefined;
    if (data) report.data.set(id, data);
    if (out.state.status === 'done' && sameData(data, truth(id))) report.right++;
    if (++done % 100 === 0)
      console.error(
        `  (read-only: ${done}/${opts.ids.length} pages, ${report.right} right, ${report.chromiumPages} Chromium pages, ${round((performance.now() - started) / done, 1)} ms/page)`,
      );
  });
  report.ms = performance.now() - started;
  if (gate.off) report.gateOff = gate.off;
  return report;
}
