/**
 * What the mode "workflow" run tests share (test/e2e/workflow-runs*.test.ts): Chromium, the generated
 * catalogue, the scripted model and local stores, started once per file; a deterministic product-facts
 * workflow; the buy workflow recorded on product 1 with the zero-token matcher; and a run of samples
 * through the run handlers and the local state machine.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { act } from '../../lib/ops/act.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { type RunDeps, runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec, type TaskSpecInput } from '../../lib/runs/task-spec.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { LocalWorkflowStore } from '../../lib/store/local-workflow-store.ts';
import type { EvidenceStore, JsonObject, ResultRecord, RunStore } from '../../lib/store/ports.ts';
import type { WorkflowStore } from '../../lib/store/workflow-ports.ts';
import { compileActs } from '../../lib/workflows/compile.ts';
import type { Workflow, WorkflowInputDoc } from '../../lib/workflows/schema.ts';
import { openPage, startBrowser } from './browser.ts';
import { type CatalogueSite, price, product, startCatalogueSite } from './catalogue-site.ts';
import { type ScriptedModel, startScriptedModel } from './llm-server.ts';
import { idInPrompt, modelConfig } from './ops-env.ts';

export const TENANT = 'wf';

export interface WorkflowRunsEnv {
  browser: Browser;
  site: CatalogueSite;
  llm: ScriptedModel;
  dir: string;
  runStore: RunStore;
  evidence: EvidenceStore;
  workflows: WorkflowStore;
  close(): Promise<void>;
}

/** Chromium, a 60-product catalogue, the scripted model and local stores in a fresh temp folder. */
export async function startWorkflowRunsEnv(prefix: string): Promise<WorkflowRunsEnv> {
  const [browser, site, llm, dir] = await Promise.all([
    startBrowser(),
    startCatalogueSite({ products: 60 }),
    startScriptedModel(),
    mkdtemp(join(tmpdir(), prefix)),
  ]);
  return {
    browser,
    site,
    llm,
    dir,
    runStore: new LocalRunStore(join(dir, 'runs')),
    evidence: new LocalEvidenceStore(join(dir, 'evidence')),
    workflows: new LocalWorkflowStore(join(dir, 'workflows')),
    close: async () => {
      await closeGuardProxies();
      await Promise.all([browser.close(), site.close(), llm.close()]);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Product facts read by a deterministic extractor: no model anywhere. */
export const facts: WorkflowInputDoc = {
  name: 'product facts',
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
    {
      alias: 'is_product',
      type: 'browser_query',
      config: {
        method: 'validate',
        rules: [{ type: 'element_exists', selector: 'form.buy-form' }],
        store_variable: false,
      },
    },
    {
      alias: 'facts',
      type: 'browser_query',
      config: {
        method: 'extract',
        instruction: 'the product name, price and SKU',
        extractor: {
          fields: {
            name: { selector: 'h1' },
            price: { selector: '.product-price' },
            sku: { selector: '.sku' },
          },
        },
      },
    },
  ],
};

export const expectedFacts = (id: number) => ({
  facts: { name: product(id).name, price: price(product(id).cents), sku: product(id).sku },
});

export type WorkflowUsage = {
  mode: string;
  workflow: { id: string; version: number; name: string };
  resolvedBy: Record<string, number>;
  heals: { alias: string; via: string; confirmed: boolean }[];
  paid: { reason: string; alias?: string; promptTokens: number; completionTokens: number }[];
  fallback?: { reason: string };
};
export const usageOf = (r: ResultRecord | undefined) => r?.usage as unknown as WorkflowUsage;

/** The model finds the relabelled quantity field by the id its outline gives it (one observe call). */
export function observeQuantity(r: { schemaName?: string; text: string }) {
  if (r.schemaName !== 'list_elements') return undefined;
  const elementId = idInPrompt(r.text, 'spinbutton', 'How many?');
  return {
    json: { elements: [{ elementId, description: 'quantity field', method: 'fill', arguments: [] }] },
  };
}

/** The env's helpers, bound to it. */
export function workflowRunTools(env: WorkflowRunsEnv) {
  const { browser, site, llm, runStore, evidence, workflows } = env;
  const detail = (id: number) => `${site.url}/product/${id}`;

  function deps(extra: Partial<RunDeps> = {}): RunDeps {
    return {
      runStore,
      evidence,
      workflows,
      slices: agentSliceRunner,
      browser: async () => browser,
      policy: mergePolicy(
        { allowPrivate: false, allowHosts: [] },
        { allowHosts: [`127.0.0.1:${site.port}`] },
      ),
      llmFor: async () => createLlmClient(modelConfig(llm, 'openai')),
      sliceBudgetMs: 60_000,
      ...extra,
    };
  }

  /** A run of products `samples` (sample ids `p<id>`) to its end; its results by product id. */
  async function runOf(
    spec: TaskSpecInput,
    samples: { id: number; qty?: string }[],
    extra: Partial<RunDeps> = {},
  ): Promise<{ runId: string; results: ResultRecord[]; byId: Map<number, ResultRecord> }> {
    const input = await createRun(runStore, evidence, {
      tenant: TENANT,
      spec: parseTaskSpec(spec),
      samples: samples.map((s) => ({
        sampleId: `p${s.id}`,
        url: detail(s.id),
        input: (s.qty ? { qty: s.qty } : {}) as Record<string, string>,
      })),
    });
    await startLocalRun(input, runHandlers(deps(extra)), { retryPauseMs: 1 }).result;
    const results = await runStore.listResults(TENANT, input.runId);
    const byId = new Map(results.map((r) => [Number(r.sampleId.slice(1)), r]));
    return { runId: input.runId, results, byId };
  }

  /** The three buy steps recorded on product 1 (v1) with the zero-token matcher, compiled and stored. */
  async function storeBuyWorkflow(id: string, edit?: (wf: Workflow) => void): Promise<Workflow> {
    site.setTemplate('v1');
    const { page, context } = await openPage(browser);
    try {
      await page.goto(detail(1));
      const acts = [];
      for (const instruction of [
        'type "2" into the Quantity field',
        'check the Gift wrap checkbox',
        'click the Add to cart button',
      ]) {
        const result = await act({ page }, instruction);
        expect(result.success, result.message).toBe(true);
        acts.push({ instruction, result });
      }
      const wf = compileActs(acts, { startUrl: detail(1), input: { url: detail(1), qty: '2' } });
      edit?.(wf);
      await workflows.putVersion({ tenant: TENANT, id, version: 1, document: wf as unknown as JsonObject });
      return wf;
    } finally {
      await context.close();
    }
  }

  return { detail, deps, runOf, storeBuyWorkflow };
}
