/**
 * Runs a flat compiled workflow (navigate, pinned element actions, extractors, model extractions)
 * node by node with the real node runners, for the compile / heal tests. The full executor (control
 * nodes, slices, checkpoints) is lib/workflows/executor.ts; this keeps these tests about pinning.
 */
import type { Page } from 'playwright-core';
import type { LlmClient } from '../../lib/llm/types.ts';
import { extract } from '../../lib/ops/extract.ts';
import type { Json, JsonObject } from '../../lib/store/ports.ts';
import { runExtractor } from '../../lib/workflows/extractor.ts';
import { runPinnedAction } from '../../lib/workflows/pinned.ts';
import type { Workflow, WorkflowNode } from '../../lib/workflows/schema.ts';
import type { HealRecord, NodeResult, WorkflowDeps } from '../../lib/workflows/types.ts';

export interface Replay {
  ok: boolean;
  results: NodeResult[];
  data: JsonObject;
  heals: HealRecord[];
  failedAt?: string;
}

/** `{{inputs.x}}` filled in every string of the node. */
function fill<T>(value: T, inputs: JsonObject): T {
  if (typeof value === 'string')
    return value.replace(/\{\{\s*inputs\.(\w+)\s*\}\}/g, (_, k: string) => String(inputs[k] ?? '')) as T;
  if (Array.isArray(value)) return value.map((v) => fill(v, inputs)) as T;
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, inputs)])) as T;
  return value;
}

export async function replay(
  workflow: Workflow,
  given: JsonObject,
  deps: {
    page: Page;
    llm?: LlmClient;
    variables?: Record<string, string>;
    saveEvidence?: WorkflowDeps['saveEvidence'];
  },
): Promise<Replay> {
  const inputs: JsonObject = {};
  for (const [k, spec] of Object.entries(workflow.inputs))
    inputs[k] = (given[k] ?? spec.default ?? null) as Json;
  const wdeps: WorkflowDeps = {
    page: deps.page,
    ...(deps.llm ? { llm: deps.llm } : {}),
    ...(deps.variables ? { variables: deps.variables } : {}),
    ...(deps.saveEvidence ? { saveEvidence: deps.saveEvidence } : {}),
  };
  const out: Replay = { ok: true, results: [], data: {}, heals: [] };
  for (const [i, raw] of workflow.nodes.entries()) {
    const node = fill(raw, inputs) as WorkflowNode;
    const run = { node, path: `nodes.${i}`, scope: { inputs }, workflow, deps: wdeps };
    let r: NodeResult;
    if (node.type === 'browser_action' && node.config.action === 'navigate') {
      await deps.page.goto(node.config.url, { waitUntil: 'load' });
      r = {
        alias: node.alias,
        type: node.type,
        status: 'ok',
        usage: emptyUsage(),
        resolvedBy: 'deterministic',
        ms: 0,
      };
    } else if (node.type === 'browser_action' && 'target' in node.config) r = await runPinnedAction(run);
    else if (node.type === 'browser_query' && node.config.method === 'extract') r = await runExtractor(run);
    else if (node.type === 'browser_ai_query' && node.config.method === 'extract' && deps.llm) {
      const res = await extract(
        { page: deps.page, llm: deps.llm },
        node.config.instruction,
        node.config.schema,
      );
      r = {
        alias: node.alias,
        type: node.type,
        status: 'ok',
        output: res.data as Json,
        usage: res.usage,
        resolvedBy: 'llm',
        ms: res.ms,
      };
    } else
      throw new Error(
        `replay helper: ${node.type} ${JSON.stringify(node.config).slice(0, 60)} is not handled here`,
      );
    out.results.push(r);
    if (r.heal) out.heals.push(r.heal);
    if (r.status !== 'ok') {
      out.ok = false;
      out.failedAt = node.alias;
      break;
    }
    if ('store_variable' in node.config && node.config.store_variable && r.output !== undefined)
      out.data[node.alias] = r.output;
  }
  return out;
}

function emptyUsage() {
  return { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 };
}
