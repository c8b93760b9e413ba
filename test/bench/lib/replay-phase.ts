/**
 * bench:workflows' replay loop: the latest stored version of the workflow run on each page (a fresh
 * browser context per page, up to `concurrency` at a time), every result checked against the
 * catalogue's truth, every cart request against the page's product, each step classed as held /
 * broken / healed, and confirmed heals written back as the next version (applyHeals → store) that
 * pages started after it use. Until a version has run one page clean, pages run one at a time (a
 * canary), so a break is healed once rather than once per page already in flight.
 */
import type { Browser, Page } from 'playwright-core';
import { newJobContext, newPage } from '../../../lib/browser/context.ts';
import type { LlmClient } from '../../../lib/llm/types.ts';
import type { LocalWorkflowStore } from '../../../lib/store/local-workflow-store.ts';
import type { JsonObject } from '../../../lib/store/ports.ts';
import { saveNextVersion } from '../../../lib/store/workflow-ports.ts';
import { runWorkflow } from '../../../lib/workflows/executor.ts';
import { sameData } from '../../../lib/workflows/extractor.ts';
import { applyHeals } from '../../../lib/workflows/heal.ts';
import { type Workflow, WorkflowSchema } from '../../../lib/workflows/schema.ts';
import type { HealRecord, WorkflowState } from '../../../lib/workflows/types.ts';
import type { CartRequest, CatalogueSite } from '../../support/catalogue-site.ts';
import type { ScriptedModel } from '../../support/llm-server.ts';
import { cartLine, qtyFor, truth } from './catalogue-model.ts';
import { round } from './report.ts';

/**
 * Runs `work` over `items` with up to `limit` at a time; while `serial()` says so, one at a time
 * (nothing new starts while another page is in flight).
 */
export async function pool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  serial: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  let inFlight = 0;
  await new Promise<void>((resolve, reject) => {
    const launch = () => {
      if (next >= items.length && inFlight === 0) return resolve();
      while (next < items.length && inFlight < (serial() ? 1 : limit)) {
        const item = items[next++]!;
        inFlight++;
        work(item)
          .catch(reject)
          .finally(() => {
            inFlight--;
            launch();
          });
      }
    };
    launch();
  });
}

export async function withPage<T>(browser: Browser, fn: (page: Page) => Promise<T>): Promise<T> {
  const context = await newJobContext(browser);
  try {
    return await fn(await newPage(context));
  } finally {
    await context.close();
  }
}

export const served = (llm: { served: { promptTokens: number; completionTokens: number } }) => ({
  ...llm.served,
});

export interface PhaseReport {
  pages: number;
  ok: number;
  ms: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  rightData: number;
  wrongActions: string[];
  brokenSteps: number;
  healedSteps: number;
  /** alias → model calls its heals made. */
  callsByAlias: Map<string, number>;
  brokenAliases: Set<string>;
  versionsWritten: number;
  writtenUnconfirmed: string[];
  bannersCleared: number;
  failures: string[];
  data: Map<number, JsonObject>;
  /** alias → total ms of that step over the phase's pages. */
  stepMs: Map<string, number>;
}

/**
 * Every cart request of a phase against what its pages should have added: one request per page
 * that got as far, for that page's product, quantity and gift wrap. Anything else is a wrong action.
 */
function wrongActions(carts: readonly CartRequest[], ids: readonly number[]): string[] {
  const expected = new Set(ids);
  const seen = new Map<number, number>();
  const wrong: string[] = [];
  for (const c of carts) {
    seen.set(c.id, (seen.get(c.id) ?? 0) + 1);
    if (!expected.has(c.id) || c.qty !== qtyFor(c.id) || !c.gift || (seen.get(c.id) ?? 0) > 1)
      wrong.push(`cart ${JSON.stringify(c)}`);
  }
  return wrong;
}

const PINNED_OR_EXTRACTOR = (s: WorkflowState, alias: string) => {
  const r = s.results[alias];
  return r && (r.type === 'browser_action' || r.type === 'browser_query') ? r : undefined;
};

export async function replayPhase(opts: {
  browser: Browser;
  model: LlmClient;
  llm: ScriptedModel;
  store: LocalWorkflowStore;
  site: CatalogueSite;
  ids: readonly number[];
  label: string;
  concurrency: number;
  tenant: string;
  workflowId: string;
}): Promise<PhaseReport> {
  const { tenant: TENANT, workflowId: WORKFLOW_ID, concurrency: CONCURRENCY } = opts;
  const { browser, model, llm, store, site, ids } = opts;
  const latest = async () =>
    WorkflowSchema.parse((await store.getVersion(TENANT, WORKFLOW_ID))!.document) as Workflow;
  let current = await latest();
  let cleanOnCurrent = false;
  const report: PhaseReport = {
    pages: ids.length,
    ok: 0,
    ms: 0,
    requests: 0,
    promptTokens: 0,
    completionTokens: 0,
    rightData: 0,
    wrongActions: [],
    brokenSteps: 0,
    healedSteps: 0,
    callsByAlias: new Map(),
    brokenAliases: new Set(),
    versionsWritten: 0,
    writtenUnconfirmed: [],
    bannersCleared: 0,
    failures: [],
    data: new Map(),
    stepMs: new Map(),
  };
  const cartsBefore = site.carts.length;
  const requestsBefore = llm.requests.length;
  const tokensBefore = served(llm);
  const started = performance.now();
  await pool(
    ids,
    CONCURRENCY,
    async (id) => {
      const wf = current;
      const qty = qtyFor(id);
      const url = `${site.url}/product/${id}`;
      const state = await withPage(browser, (page) =>
        runWorkflow(
          wf,
          { tenant: TENANT, runId: opts.label, sampleId: `p${id}`, inputs: { quantity: String(qty) }, url },
          { page, llm: model },
        ),
      );
      let clean = state.status === 'done';
      for (const r of Object.values(state.results))
        report.stepMs.set(r.alias, (report.stepMs.get(r.alias) ?? 0) + r.ms);
      for (const alias of Object.keys(state.results)) {
        const r = PINNED_OR_EXTRACTOR(state, alias);
        if (!r) continue;
        if ((r.output as { cleared?: string } | undefined)?.cleared) report.bannersCleared++;
        const broke = r.resolvedBy.startsWith('heal') || r.status === 'failed';
        if (!broke) continue;
        clean = false;
        report.brokenSteps++;
        report.brokenAliases.add(alias);
        report.callsByAlias.set(alias, (report.callsByAlias.get(alias) ?? 0) + r.usage.calls);
        const confirmed = r.type === 'browser_action' ? r.heal?.confirmed === true : true;
        if (r.status === 'ok' && r.resolvedBy.startsWith('heal') && confirmed) report.healedSteps++;
      }
      if (state.status === 'done') {
        report.ok++;
        report.data.set(id, state.data);
        const want = { data: truth(id), result: { cartLine: cartLine(id, qty) } };
        if (sameData(state.data, want)) report.rightData++;
        else report.failures.push(`page ${id}: data ${JSON.stringify(state.data)} ≠ ${JSON.stringify(want)}`);
      } else report.failures.push(`page ${id}: ${state.failedAt}: ${state.reason}`);
      if (state.heals.some((h) => h.confirmed)) await writeBack(state.heals, wf);
      else if (clean && wf === current) cleanOnCurrent = true;
      const done = report.ok + report.failures.length - (report.ok - report.rightData);
      if (done % 50 === 0)
        // Progress on stderr (a long run on a loaded machine): pages so far, right, requests.
        console.error(
          `  (${opts.label}: ${done}/${ids.length} pages, ${report.rightData} right, ${llm.requests.length - requestsBefore} model requests, ${round(((performance.now() - started) / done) * 1, 0)} ms/page)`,
        );
    },
    () => !cleanOnCurrent,
  );
  report.ms = performance.now() - started;
  console.error(`  (${opts.label}: ${ids.length} pages in ${round(report.ms / 1000, 1)} s)`);
  report.requests = llm.requests.length - requestsBefore;
  const tokens = served(llm);
  report.promptTokens = tokens.promptTokens - tokensBefore.promptTokens;
  report.completionTokens = tokens.completionTokens - tokensBefore.completionTokens;
  report.wrongActions = wrongActions(site.carts.slice(cartsBefore), ids);
  return report;

  /** The confirmed heals onto the latest version; written as the next one when they change it. */
  async function writeBack(heals: HealRecord[], ranOn: Workflow) {
    const base = current;
    const next = applyHeals(base, heals);
    if (!next) return;
    // Check on our own what applyHeals promises: each changed step has a confirmed heal behind it.
    for (const [i, node] of next.nodes.entries()) {
      if (JSON.stringify(node) === JSON.stringify(base.nodes[i])) continue;
      if (!heals.some((h) => h.alias === node.alias && h.confirmed))
        report.writtenUnconfirmed.push(`${node.alias} (healed on version ${ranOn.version})`);
    }
    const version = await saveNextVersion(opts.store, {
      tenant: TENANT,
      id: WORKFLOW_ID,
      document: next as unknown as JsonObject,
      parent: base.version,
      note: `healed ${heals.map((h) => `${h.alias} via ${h.via}`).join(', ')}`,
    });
    current = { ...next, version };
    cleanOnCurrent = false;
    report.versionsWritten++;
  }
}
