/**
 * The workflow executor's pure core: a new sample's state, and what comes next — entering control
 * nodes (group, route, iterate, handle, context), applying a node's result, finishing a frame. No
 * page, no store, no clock beyond what the caller passes in; `executor.ts` is the shell around it.
 */
import { createHash } from 'node:crypto';
import type { Usage } from '../llm/types.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import { evaluate, truthy } from './expressions.ts';
import type { Workflow, WorkflowNode } from './schema.ts';
import type { NodeResult, WorkflowState } from './types.ts';
import { resolveInputs } from './validate.ts';

export interface NewWorkflowStateInit {
  tenant: string;
  runId: string;
  sampleId: string;
  workflow: Workflow;
  /** Store id of the workflow, when it came from the store. */
  workflowId?: string;
  inputs: JsonObject;
  url: string;
}

export const workflowHash = (w: Workflow) =>
  createHash('sha256').update(JSON.stringify(w)).digest('hex').slice(0, 16);

export function newWorkflowState(init: NewWorkflowStateInit): WorkflowState {
  return {
    version: 1,
    tenant: init.tenant,
    runId: init.runId,
    sampleId: init.sampleId,
    workflow: {
      ...(init.workflowId ? { id: init.workflowId } : {}),
      version: init.workflow.version,
      name: init.workflow.name,
      hash: workflowHash(init.workflow),
    },
    inputs: resolveInputs(init.workflow, { url: init.url, ...init.inputs }),
    cursor: [{ list: 'nodes', index: 0, kind: 'root' }],
    results: {},
    outputs: {},
    context: {},
    data: {},
    status: 'running',
    url: init.url,
    tabs: [{ name: 'main', url: init.url }],
    currentTab: 'main',
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, costUsd: 0, calls: 0, ms: 0 },
    heals: [],
    steps: 0,
    evidence: [],
    startedAt: new Date().toISOString(),
    slices: 0,
  };
}

// ── Pure core ──────────────────────────────────────────────────────────────────────────────────

/** The node list at a path (`nodes`, `nodes.2.config.branches.1.nodes`). */
export function listAt(workflow: Workflow, path: string): WorkflowNode[] {
  let cur: unknown = workflow;
  for (const part of path.split('.')) cur = (cur as Record<string, unknown>)?.[part];
  if (!Array.isArray(cur)) throw new Error(`no node list at ${path}`);
  return cur as WorkflowNode[];
}

export function nodeAt(workflow: Workflow, path: string): WorkflowNode {
  const cut = path.lastIndexOf('.');
  const node = listAt(workflow, path.slice(0, cut))[Number(path.slice(cut + 1))];
  if (!node) throw new Error(`no node at ${path}`);
  return node;
}

/** What templates and expressions see: inputs, context, every output so far, loop items in scope. */
export function scopeOf(state: WorkflowState): JsonObject {
  const scope: JsonObject = { ...state.outputs, inputs: state.inputs, context: state.context };
  for (const f of state.cursor) if (f.iteration) scope[f.iteration.as] = f.iteration.item;
  return scope;
}

export const keyOf = (state: WorkflowState, alias: string) => {
  const at = state.cursor.filter((f) => f.iteration).map((f) => f.iteration!.index);
  return at.length ? `${alias}[${at.join('][')}]` : alias;
};

export function addUsage(state: WorkflowState, u: Usage): void {
  state.usage.promptTokens += u.promptTokens;
  state.usage.completionTokens += u.completionTokens;
  state.usage.cachedTokens += u.cachedTokens;
  state.usage.costUsd += u.costUsd ?? 0;
  state.usage.calls += u.calls;
  state.usage.ms += u.ms;
}

export const storeVariable = (node: WorkflowNode) =>
  (node.config as { store_variable?: boolean }).store_variable ??
  ['browser_query', 'browser_ai_query', 'transform', 'cognition', 'agent'].includes(node.type);

/** Records a finished node (leaf or control) and moves the cursor past it; failures unwind to a handle. */
export function applyResult(
  workflow: Workflow,
  state: WorkflowState,
  node: WorkflowNode,
  result: NodeResult,
): { retryAfterMs?: number } {
  state.results[keyOf(state, node.alias)] = result;
  if (result.output !== undefined) state.outputs[node.alias] = result.output;
  if (result.status === 'ok' && storeVariable(node) && result.output !== undefined)
    state.data[node.alias] = result.output;
  if (result.heal) state.heals.push(result.heal);
  addUsage(state, result.usage);
  const top = state.cursor.at(-1)!;
  const goesOn =
    result.status !== 'failed' ||
    (node.type === 'browser_query' &&
      node.config.method === 'validate' &&
      node.config.onFailure === 'continue_with_error');
  if (goesOn) {
    top.index += 1;
    return {};
  }
  return unwind(workflow, state, node, result);
}

/** A failure climbs to the nearest handle: retried with backoff, then its fallback, else the workflow fails. */
export function unwind(
  workflow: Workflow,
  state: WorkflowState,
  node: WorkflowNode,
  result: NodeResult,
): { retryAfterMs?: number } {
  for (let i = state.cursor.length - 1; i >= 0; i--) {
    const f = state.cursor[i]!;
    if (f.kind !== 'handle-body' || !f.owner) continue;
    const handle = nodeAt(workflow, f.owner);
    if (handle.type !== 'handle') continue;
    state.cursor.length = i + 1;
    const attempt = f.attempt ?? 1;
    const retry = handle.config.retry;
    if (retry && attempt < retry.attempts) {
      f.index = 0;
      f.attempt = attempt + 1;
      return { retryAfterMs: Math.round(retry.backoffMs * retry.factor ** (attempt - 1)) };
    }
    state.outputs[handle.alias] = { error: (result.error ?? null) as Json, failedAt: node.alias };
    if (handle.config.fallback) {
      state.cursor[i] = {
        list: `${f.owner}.config.fallback`,
        index: 0,
        kind: 'handle-fallback',
        owner: f.owner,
      };
      return {};
    }
    state.cursor.length = i;
    state.results[keyOf(state, handle.alias)] = { ...result, alias: handle.alias, type: 'handle' };
    return unwind(workflow, state, handle, result);
  }
  state.status = 'failed';
  state.failedAt = node.alias;
  const e = result.error;
  state.reason = e
    ? `${node.alias} (${node.type}): ${e.message}${e.instruction ? ` — instruction "${e.instruction}"` : ''}. ${e.resolution}`
    : `${node.alias} failed`;
  state.cursor = [];
  return {};
}

export const controlResult = (node: WorkflowNode, output: Json, ms = 0): NodeResult => ({
  alias: node.alias,
  type: node.type,
  status: 'ok',
  output,
  usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 },
  resolvedBy: 'deterministic',
  ms,
});

/** The outputs of a list's nodes by alias (what a group, route or iteration hands on). */
export function outputsOf(workflow: Workflow, state: WorkflowState, listPath: string): JsonObject {
  const out: JsonObject = {};
  for (const n of listAt(workflow, listPath))
    if (state.outputs[n.alias] !== undefined) out[n.alias] = state.outputs[n.alias]!;
  return out;
}

/** The end of a frame's list: the next iteration, or the owner's result and the cursor past it. */
export function finishFrame(workflow: Workflow, state: WorkflowState): void {
  const f = state.cursor.at(-1)!;
  if (f.kind === 'root' || !f.owner) {
    state.cursor.pop();
    state.status = 'done';
    state.reason = 'every node ran';
    return;
  }
  const owner = nodeAt(workflow, f.owner);
  if (f.kind === 'iterate' && f.items && f.iteration) {
    f.collected = [...(f.collected ?? []), outputsOf(workflow, state, f.list)];
    const next = f.iteration.index + 1;
    if (next < f.items.length) {
      f.iteration = { ...f.iteration, index: next, item: f.items[next]! };
      f.index = 0;
      return;
    }
  }
  state.cursor.pop();
  const output: Json = f.kind === 'iterate' ? (f.collected ?? []) : outputsOf(workflow, state, f.list);
  applyResult(workflow, state, owner, controlResult(owner, output));
}

/** Starts a control node: evaluates what it depends on and pushes the frame of its body. */
export async function enterControl(
  workflow: Workflow,
  state: WorkflowState,
  node: WorkflowNode,
  path: string,
): Promise<void> {
  const scope = scopeOf(state);
  switch (node.type) {
    case 'group':
      state.cursor.push({ list: `${path}.config.nodes`, index: 0, kind: 'group', owner: path });
      return;
    case 'handle':
      state.cursor.push({
        list: `${path}.config.nodes`,
        index: 0,
        kind: 'handle-body',
        owner: path,
        attempt: 1,
      });
      return;
    case 'route': {
      for (const [i, b] of node.config.branches.entries())
        if (truthy(await evaluate(b.when, scope))) {
          state.cursor.push({
            list: `${path}.config.branches.${i}.nodes`,
            index: 0,
            kind: 'route',
            owner: path,
          });
          return;
        }
      if (node.config.otherwise)
        state.cursor.push({ list: `${path}.config.otherwise`, index: 0, kind: 'route', owner: path });
      else applyResult(workflow, state, node, controlResult(node, { branch: null }));
      return;
    }
    case 'iterate': {
      const over = await evaluate(node.config.over, scope);
      const items = Array.isArray(over) ? over : over === null ? [] : [over];
      if (items.length === 0) {
        applyResult(workflow, state, node, controlResult(node, []));
        return;
      }
      const concurrency = Math.min(node.config.concurrency, items.length);
      state.cursor.push({
        list: `${path}.config.nodes`,
        index: 0,
        kind: 'iterate',
        owner: path,
        items,
        collected: [],
        iteration: { alias: node.alias, index: 0, as: node.config.as, item: items[0]! },
        ...(concurrency > 1 ? { concurrency, next: 0, lanes: [] } : {}),
      });
      return;
    }
    case 'context': {
      for (const [k, expr] of Object.entries(node.config.set))
        state.context[k] = await evaluate(expr, scopeOf(state));
      applyResult(workflow, state, node, controlResult(node, { ...state.context }));
      return;
    }
    default:
      throw new Error(`${node.alias}: ${node.type} is not a control node`);
  }
}

export const CONTROL = new Set(['group', 'handle', 'route', 'iterate', 'context']);
/** Config keys that hold nested nodes or expressions: not filled as templates before a node runs. */
export const NOT_TEMPLATES = ['nodes', 'otherwise', 'fallback', 'branches', 'expression', 'input'];
