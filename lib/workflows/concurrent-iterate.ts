/**
 * `iterate` with `concurrency` > 1: up to that many iterations at once, each in its own tab and with
 * an executor state of its own (a lane). Lanes live in the iterate's cursor frame, so a slice that
 * ends while lanes are under way checkpoints them and the next slice resumes each lane at the node it
 * reached (on a fresh tab at the lane's last URL), exactly as the sequential executor resumes. The
 * collected outputs keep the elements' order whatever order the lanes finish in; the first failing
 * lane (by element order) fails the iterate the way a sequential body failure would, so a `handle`
 * around it retries or falls back as usual.
 */
import type { Page } from 'playwright-core';
import type { Json, JsonObject } from '../store/ports.ts';
import type { Workflow, WorkflowNode } from './schema.ts';
import type { CursorFrame, IterationLane, NodeResult, WorkflowDeps, WorkflowState } from './types.ts';

/** The slice's bounds, given to every lane: the deadline, and at most `maxNodes` nodes per lane. */
export interface LaneSliceOptions {
  deadline?: number;
  maxNodes?: number;
}

/** What the executor lends this module (kept as parameters so the two files do not import each other). */
export interface LaneRuntime {
  runSlice: (
    workflow: Workflow,
    state: WorkflowState,
    deps: WorkflowDeps,
    opts: LaneSliceOptions,
  ) => Promise<WorkflowState>;
  applyResult: (workflow: Workflow, state: WorkflowState, node: WorkflowNode, result: NodeResult) => unknown;
  nodeAt: (workflow: Workflow, path: string) => WorkflowNode;
  listAt: (workflow: Workflow, path: string) => WorkflowNode[];
}

const zeroUsage = () => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  costUsd: 0,
  calls: 0,
  ms: 0,
});

/** `[2][0]`: the indexes of the iterations around this frame, as result keys carry them. */
function outerKey(state: WorkflowState, frame: CursorFrame): string {
  return state.cursor
    .filter((f) => f !== frame && f.iteration)
    .map((f) => `[${f.iteration!.index}]`)
    .join('');
}

/** A lane's first state: the parent's data in scope, its own cursor over the iterate's body. Pure. */
export function newLane(state: WorkflowState, frame: CursorFrame, index: number): IterationLane {
  const outer: JsonObject = {};
  for (const f of state.cursor) if (f !== frame && f.iteration) outer[f.iteration.as] = f.iteration.item;
  const iteration = { ...frame.iteration!, index, item: frame.items![index]! };
  return {
    index,
    scopeNames: Object.keys(outer),
    state: {
      ...structuredClone(state),
      outputs: { ...structuredClone(state.outputs), ...outer },
      cursor: [{ list: frame.list, index: 0, kind: 'root', iteration }],
      results: {},
      data: {},
      heals: [],
      evidence: [],
      usage: zeroUsage(),
      steps: 0,
      slices: 0,
      status: 'running',
      tabs: [{ name: 'main', url: state.url }],
      currentTab: 'main',
    },
  };
}

/** Folds a finished (or failed) lane into the parent: results under their full keys, usage, heals. Pure. */
export function mergeLane(
  state: WorkflowState,
  frame: CursorFrame,
  lane: IterationLane,
  body: WorkflowNode[],
): JsonObject {
  const outer = outerKey(state, frame);
  for (const [key, result] of Object.entries(lane.state.results)) {
    const at = key.indexOf('[');
    state.results[at < 0 ? key : `${key.slice(0, at)}${outer}${key.slice(at)}`] = result;
  }
  for (const name of lane.scopeNames) delete lane.state.outputs[name];
  const collected: JsonObject = {};
  for (const n of body) {
    const out = lane.state.outputs[n.alias];
    if (out === undefined) continue;
    collected[n.alias] = out;
    state.outputs[n.alias] = out;
  }
  Object.assign(state.data, lane.state.data);
  const u = lane.state.usage;
  state.usage.promptTokens += u.promptTokens;
  state.usage.completionTokens += u.completionTokens;
  state.usage.cachedTokens += u.cachedTokens;
  state.usage.costUsd += u.costUsd;
  state.usage.calls += u.calls;
  state.usage.ms += u.ms;
  state.heals.push(...lane.state.heals);
  state.evidence.push(...lane.state.evidence);
  state.steps += lane.state.steps;
  return collected;
}

/** The node with this alias anywhere in the document (aliases are unique). */
function findByAlias(nodes: readonly WorkflowNode[], alias: string): WorkflowNode | undefined {
  for (const n of nodes) {
    if (n.alias === alias) return n;
    const c = n.config as Record<string, unknown>;
    const lists = [
      c.nodes,
      c.otherwise,
      c.fallback,
      ...((c.branches as { nodes: unknown }[] | undefined) ?? []).map((b) => b.nodes),
    ];
    for (const list of lists) {
      if (!Array.isArray(list)) continue;
      const found = findByAlias(list as WorkflowNode[], alias);
      if (found) return found;
    }
  }
  return undefined;
}

/** Tabs of lanes under way, by lane state identity is not stable across slices: keyed by deps + element. */
const laneTabs = new WeakMap<WorkflowDeps, Map<number, Page>>();

async function laneTab(deps: WorkflowDeps, lane: IterationLane): Promise<Page> {
  const tabs = laneTabs.get(deps) ?? new Map<number, Page>();
  laneTabs.set(deps, tabs);
  const open = tabs.get(lane.index);
  if (open && !open.isClosed()) return open;
  const page = deps.newTab ? await deps.newTab() : await deps.page.context().newPage();
  tabs.set(lane.index, page);
  // An iteration starts where a sequential one would: on the page the workflow is on (or, resumed
  // in a later slice, on the page the lane had reached).
  const url = lane.state.url;
  if (/^https?:/i.test(url)) {
    await deps.checkNavigation?.(url);
    await page.goto(url);
  }
  return page;
}

async function closeLaneTab(deps: WorkflowDeps, index: number): Promise<void> {
  const tabs = laneTabs.get(deps);
  const page = tabs?.get(index);
  tabs?.delete(index);
  if (page && !page.isClosed()) await page.close().catch(() => undefined);
}

/**
 * Runs the concurrent iterate on top of the cursor for one round: fills the free lanes, runs every
 * lane until it ends or the deadline nears, and folds the ended ones back. Returns the nodes run.
 */
export async function runConcurrentRound(
  workflow: Workflow,
  state: WorkflowState,
  frame: CursorFrame,
  deps: WorkflowDeps,
  opts: LaneSliceOptions,
  rt: LaneRuntime,
): Promise<number> {
  const items = frame.items ?? [];
  frame.lanes ??= [];
  const lanes = frame.lanes;
  frame.collected ??= items.map(() => null);
  while (lanes.length < (frame.concurrency ?? 1) && (frame.next ?? 0) < items.length) {
    lanes.push(newLane(state, frame, frame.next ?? 0));
    frame.next = (frame.next ?? 0) + 1;
  }
  const ran = await Promise.all(
    lanes.map(async (lane) => {
      const before = lane.state.steps;
      try {
        const page = await laneTab(deps, lane);
        lane.state = await rt.runSlice(workflow, lane.state, { ...deps, page }, opts);
      } catch (err) {
        lane.state = {
          ...lane.state,
          status: 'failed',
          reason: (err as Error).message.split('\n')[0] ?? 'failed',
        };
      }
      return lane.state.steps - before;
    }),
  );
  const body = rt.listAt(workflow, frame.list);
  const ended = lanes.filter((l) => l.state.status !== 'running').sort((a, b) => a.index - b.index);
  frame.lanes = lanes.filter((l) => l.state.status === 'running');
  let failed: IterationLane | undefined;
  for (const lane of ended) {
    const out = mergeLane(state, frame, lane, body);
    await closeLaneTab(deps, lane.index);
    if (lane.state.status === 'done') frame.collected[lane.index] = out;
    else failed ??= lane;
  }
  const count = ran.reduce((a, b) => a + b, 0);
  if (failed) {
    for (const lane of frame.lanes) await closeLaneTab(deps, lane.index);
    frame.lanes = [];
    failIterate(workflow, state, frame, failed, rt);
    return count;
  }
  if (frame.lanes.length === 0 && (frame.next ?? 0) >= items.length) {
    const owner = rt.nodeAt(workflow, frame.owner!);
    state.cursor.pop();
    rt.applyResult(workflow, state, owner, {
      alias: owner.alias,
      type: owner.type,
      status: 'ok',
      output: frame.collected as Json[],
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 },
      resolvedBy: 'deterministic',
      ms: 0,
    });
  }
  return count;
}

/** A lane failed: the failure unwinds from inside the iterate, as a sequential body failure does. */
function failIterate(
  workflow: Workflow,
  state: WorkflowState,
  frame: CursorFrame,
  lane: IterationLane,
  rt: LaneRuntime,
): void {
  frame.iteration = { ...frame.iteration!, index: lane.index, item: frame.items![lane.index]! };
  const alias = lane.state.failedAt;
  const node = alias ? findByAlias(workflow.nodes, alias) : undefined;
  const result = node
    ? Object.entries(lane.state.results)
        .filter(([, r]) => r.alias === alias && r.status === 'failed')
        .map(([, r]) => r)
        .at(-1)
    : undefined;
  const owner = rt.nodeAt(workflow, frame.owner!);
  // The lane's usage and heals are in the parent already (mergeLane): the unwinding result carries none.
  const bare = result && {
    ...result,
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 },
    heal: undefined,
  };
  rt.applyResult(
    workflow,
    state,
    node ?? owner,
    bare ?? {
      alias: owner.alias,
      type: owner.type,
      status: 'failed',
      error: {
        kind: 'deterministic',
        message: `iteration ${lane.index} stopped: ${lane.state.reason ?? 'failed'}`,
        resolution: 'check the iteration body on this element, or run the iterate with concurrency 1',
      },
      usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, model: '', ms: 0, calls: 0 },
      resolvedBy: 'deterministic',
      ms: 0,
    },
  );
}
