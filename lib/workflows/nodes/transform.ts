/** `transform`: pure data manipulation in JSONata over everything that ran before. Never a model. */
import { ExpressionError, evaluate } from '../expressions.ts';
import type { NodeResult, NodeRun } from '../types.ts';
import { deterministicError, failed, ok } from './result.ts';

export async function runTransform(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node } = run;
  if (node.type !== 'transform') throw new Error(`${node.alias}: not a transform`);
  try {
    return ok(node, started, await evaluate(node.config.expression, run.scope));
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
