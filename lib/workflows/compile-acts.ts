/**
 * Compiling a sequence of acts (each with its instruction and what it did) into a workflow: every
 * element action becomes a pinned step whose candidates come from the action's durable locator.
 */
import type { ActResult } from '../ops/types.ts';
import { candidatesFrom } from '../perception/candidates.ts';
import { toLocator } from '../perception/locate.ts';
import {
  Aliases,
  CompileError,
  finishCompiled as finish,
  InputLifter,
  navigateNode,
  pinnedNode,
  type RecordedAction,
} from './compile-steps.ts';
import type { Workflow, WorkflowNode } from './schema.ts';

/** One act call and what it returned. */
export interface ActRecord {
  instruction: string;
  result: ActResult;
}

const ACT_METHODS: Record<string, RecordedAction['method']> = {
  click: 'click',
  dblclick: 'click',
  fill: 'fill',
  type: 'fill',
  select: 'select',
  check: 'check',
  uncheck: 'uncheck',
  press: 'press',
};

/** A sequence of acts (each with its instruction) → workflow. Candidates come from each action's durable locator. */
export function compileActs(
  acts: readonly ActRecord[],
  opts: { startUrl: string; input?: Record<string, string>; name?: string },
): Workflow {
  if (acts.length === 0) throw new CompileError('no acts to compile');
  const lifter = new InputLifter(opts.input ?? {});
  const aliases = new Aliases();
  const nodes: WorkflowNode[] = [
    navigateNode(aliases.make('open_start_page'), lifter.url(opts.startUrl), 'open the start page'),
  ];
  let urlBefore = opts.startUrl;
  for (const [n, { instruction, result }] of acts.entries()) {
    if (!result.success)
      throw new CompileError(
        `act ${n + 1} ("${instruction}") did not succeed: ${result.error?.message ?? result.message}; only successful acts compile`,
      );
    const element = result.actions.filter((a) => a.method === 'goto' || ACT_METHODS[a.method]);
    for (const [i, action] of element.entries()) {
      const last = i === element.length - 1;
      if (action.method === 'goto') {
        nodes.push(
          navigateNode(
            aliases.make('go_to_page'),
            lifter.lift(action.args?.[0] ?? ''),
            action.description ?? 'go to a page',
          ),
        );
        continue;
      }
      const method = ACT_METHODS[action.method]!;
      if (!action.target || !('locator' in action.target))
        throw new CompileError(
          `act ${n + 1} ("${instruction}"): its ${action.method} has no element locator to pin`,
        );
      const locator = toLocator(action.target.locator);
      const value =
        method === 'fill' || method === 'select' || method === 'press' ? (action.args?.[0] ?? '') : undefined;
      const rec: RecordedAction = {
        method,
        role: locator.role,
        name: locator.name,
        candidates: candidatesFrom(locator),
        ...(value !== undefined ? { value } : {}),
        // The act's own words pin the heal best when the act did one thing.
        ...(element.length === 1 ? { instruction } : {}),
        urlBefore,
        after: {
          ...(last ? { url: result.url } : {}),
          ...(method === 'check' || method === 'uncheck' ? { checked: method === 'check' } : {}),
        },
      };
      nodes.push(
        pinnedNode(
          aliases.make(`${method}_${locator.name || locator.role || 'element'}`),
          rec,
          value !== undefined && method !== 'press' ? lifter.lift(value) : value,
        ),
      );
    }
    urlBefore = result.url;
  }
  return finish({
    name: opts.name ?? `compiled from ${acts.length} acts`,
    version: 1,
    inputs: lifter.inputs,
    nodes,
    source: { kind: 'acts', url: opts.startUrl },
  });
}
