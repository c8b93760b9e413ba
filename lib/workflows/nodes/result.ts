/** How leaf runners shape their results, so deterministic and AI failures read the reference's two ways. */
import { emptyUsage, type Usage } from '../../llm/types.ts';
import type { Json } from '../../store/ports.ts';
import type { WorkflowNode } from '../schema.ts';
import type { NodeError, NodeResolvedBy, NodeResult } from '../types.ts';

export function ok(
  node: WorkflowNode,
  started: number,
  output: Json,
  resolvedBy: NodeResolvedBy = 'deterministic',
  usage: Usage = emptyUsage(),
): NodeResult {
  return {
    alias: node.alias,
    type: node.type,
    status: 'ok',
    output,
    usage,
    resolvedBy,
    ms: Math.round(performance.now() - started),
  };
}

export function failed(
  node: WorkflowNode,
  started: number,
  error: NodeError,
  resolvedBy: NodeResolvedBy = 'deterministic',
  usage: Usage = emptyUsage(),
): NodeResult {
  return {
    alias: node.alias,
    type: node.type,
    status: 'failed',
    error,
    usage,
    resolvedBy,
    ms: Math.round(performance.now() - started),
  };
}

/** "Element not found: #submit" — what a selector or a page did not do, and what to check. */
export const deterministicError = (message: string, resolution: string, selector?: string): NodeError => ({
  kind: 'deterministic',
  message,
  resolution,
  ...(selector ? { selector } : {}),
});

/** What a model could not do, with the instruction it was given. */
export const aiError = (message: string, instruction: string): NodeError => ({
  kind: 'ai',
  message,
  instruction,
  resolution:
    'the model could not interpret or find it: refine the instruction, or pin the step by compiling a run that did it',
});

export const noModelError = (instruction: string): NodeError => ({
  kind: 'ai',
  message: 'this AI node needs a model and none is configured',
  instruction,
  resolution: 'set BROWSERFN_MODEL (and its key), or replace the node with a deterministic one',
});
