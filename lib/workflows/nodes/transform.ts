/** `transform`: pure data manipulation in JSONata over everything that ran before. Never a model. */

import type { JsonObject } from '../../store/ports.ts';
import { ExpressionError, evaluate } from '../expressions.ts';
import type { WorkflowNode } from '../schema.ts';
import type { NodeResult, NodeRun } from '../types.ts';
import { deterministicError, failed, ok } from './result.ts';

export const runTransform = (run: NodeRun): Promise<NodeResult> => transformOn(run.node, run.scope);

/** The transform over a scope alone: no page, no model (a workflow read from served HTML runs it too). */
export async function transformOn(node: WorkflowNode, scope: JsonObject): Promise<NodeResult> {
  const started = performance.now();
  if (node.type !== 'transform') throw new Error(`${node.alias}: not a transform`);
  try {
    return ok(node, started, await evaluate(node.config.expression, scope));
  } catch (err) {
    const message = err instanceof ExpressionError ? err.message : (err as Error).message;
    return failed(
      node,
      started,
      deterministicError(
        `expression failed: ${message}`,
        `check the expression "${node.config.expression}" against the data before it`,
      ),
    );
  }
}
