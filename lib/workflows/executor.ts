/**
 * The workflow executor. Its state is plain JSON (`WorkflowState`): a cursor of frames over the
 * document's node lists, results and outputs by alias, usage and heals. The pure part (`executor-core.ts`)
 * decides what comes next and what a node's result does to the state (`enterControl`, `applyResult`,
 * `finishFrame`); this shell (`runWorkflowSlice`) runs one node at a time until the workflow ends or the
 * deadline nears, so a workflow runs in slices on any machine, like the agent.
 */
import type { Page } from 'playwright-core';
import type { Json } from '../store/ports.ts';
import { type LaneRuntime, runConcurrentRound } from './concurrent-iterate.ts';
import {
  applyResult,
  CONTROL,
  controlResult,
  enterControl,
  finishFrame,
  listAt,
  type NewWorkflowStateInit,
  NOT_TEMPLATES,
  newWorkflowState,
  nodeAt,
  scopeOf,
} from './executor-core.ts';
import { runnerFor } from './nodes/index.ts';
import { deterministicError } from './nodes/result.ts';
import type { Workflow, WorkflowNode } from './schema.ts';
import { fillTemplates, TemplateError } from './templates.ts';
import type { NodeResult, WorkflowDeps, WorkflowState } from './types.ts';

export {
  applyResult,
  enterControl,
  finishFrame,
  listAt,
  type NewWorkflowStateInit,
  newWorkflowState,
  scopeOf,
  workflowHash,
} from './executor-core.ts';

// ── Shell ──────────────────────────────────────────────────────────────────────────────────────

export interface WorkflowSliceOptions {
  /** Epoch ms: no node starts that the slowest so far could not finish by then. */
  deadline?: number;
  /** Stop after this many nodes in this slice (tests, step-wise drivers). */
  maxNodes?: number;
}

/** Tabs by name, kept by the shell: the state only names them. */
const tabsOf = new WeakMap<WorkflowDeps, Map<string, Page>>();

async function tabAction(
  node: WorkflowNode,
  state: WorkflowState,
  deps: WorkflowDeps,
): Promise<NodeResult | undefined> {
  if (node.type !== 'browser_action' || 'target' in node.config) return undefined;
  const c = node.config;
  if (c.action !== 'openNewTab' && c.action !== 'switchTab') return undefined;
  const started = performance.now();
  const tabs = tabsOf.get(deps) ?? new Map([[state.currentTab, deps.page]]);
  tabsOf.set(deps, tabs);
  const result = (output: Json): NodeResult => ({
    ...controlResult(node, output, Math.round(performance.now() - started)),
  });
  if (c.action === 'openNewTab') {
    const page = deps.newTab ? await deps.newTab() : await deps.page.context().newPage();
    const name = c.name ?? `tab${state.tabs.length + 1}`;
    if (c.url) {
      await deps.checkNavigation?.(c.url);
      await page.goto(c.url);
    }
    tabs.set(name, page);
    state.tabs.push({ name, url: page.url() });
    state.currentTab = name;
    deps.page = page;
    return result({ tab: name, url: page.url() });
  }
  const page = tabs.get(c.tabName);
  if (!page)
    return {
      ...result(null),
      status: 'failed',
      error: deterministicError(
        `no tab named "${c.tabName}"`,
        `open it first with openNewTab (name "${c.tabName}")`,
      ),
    };
  state.currentTab = c.tabName;
  deps.page = page;
  return result({ tab: c.tabName, url: page.url() });
}

export async function runWorkflowSlice(
  workflow: Workflow,
  input: WorkflowState,
  deps: WorkflowDeps,
  opts: WorkflowSliceOptions = {},
): Promise<WorkflowState> {
  const state: WorkflowState = structuredClone(input);
  if (state.status !== 'running') return state;
  state.slices += 1;
  let slowest = 0;
  let ran = 0;
  while (state.status === 'running') {
    if (deps.signal?.aborted) break;
    if (opts.deadline !== undefined && Date.now() + slowest >= opts.deadline) break;
    if (opts.maxNodes !== undefined && ran >= opts.maxNodes) break;
    const top = state.cursor.at(-1);
    if (!top) {
      state.status = 'done';
      break;
    }
    if ((top.concurrency ?? 1) > 1) {
      const started = performance.now();
      const count = await runConcurrentRound(workflow, state, top, deps, opts, LANES);
      ran += count;
      slowest = Math.max(slowest, performance.now() - started);
      continue;
    }
    const list = listAt(workflow, top.list);
    if (top.index >= list.length) {
      finishFrame(workflow, state);
      continue;
    }
    const node = list[top.index]!;
    const path = `${top.list}.${top.index}`;
    const started = performance.now();
    if (CONTROL.has(node.type)) {
      try {
        await enterControl(workflow, state, node, path);
      } catch (err) {
        applyResult(workflow, state, node, failedExpression(node, err, started));
      }
      continue;
    }
    let result: NodeResult;
    try {
      const filled = {
        ...node,
        config: fillTemplates(node.config, scopeOf(state), NOT_TEMPLATES),
      } as WorkflowNode;
      result =
        (await tabAction(filled, state, deps)) ??
        (await runnerFor(filled)!({ node: filled, path, scope: scopeOf(state), workflow, deps }));
    } catch (err) {
      result = failedExpression(node, err, started);
    }
    ran += 1;
    state.steps += 1;
    slowest = Math.max(slowest, performance.now() - started);
    const { retryAfterMs } = applyResult(workflow, state, node, result);
    state.url = deps.page.isClosed() ? state.url : deps.page.url();
    deps.log?.({
      level: result.status === 'failed' ? 'warn' : 'info',
      msg: 'node',
      alias: node.alias,
      status: result.status,
      resolvedBy: result.resolvedBy,
    });
    if (retryAfterMs) await new Promise((r) => setTimeout(r, retryAfterMs));
  }
  return state;
}

const LANES: LaneRuntime = {
  runSlice: (workflow, state, deps, opts) => runWorkflowSlice(workflow, state, deps, opts),
  applyResult,
  nodeAt,
  listAt,
};

function failedExpression(node: WorkflowNode, err: unknown, started: number): NodeResult {
  const e = err as Error;
  const message = e instanceof TemplateError ? e.message : (e.message.split('\n')[0] ?? String(err));
  return {
    alias: node.alias,
    type: node.type,
    status: 'failed',
    error: deterministicError(
      message,
      'check the templates and expressions of this node against what ran before it',
    ),
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 },
    resolvedBy: 'deterministic',
    ms: Math.round(performance.now() - started),
  };
}

/** Runs a workflow to its end on one page (one slice with no deadline unless one is given). */
export async function runWorkflow(
  workflow: Workflow,
  init: Omit<NewWorkflowStateInit, 'workflow'>,
  deps: WorkflowDeps,
  opts: WorkflowSliceOptions = {},
): Promise<WorkflowState> {
  return runWorkflowSlice(workflow, newWorkflowState({ ...init, workflow }), deps, opts);
}
