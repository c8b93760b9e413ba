/**
 * What a workflow sample paid for, as its result's `usage` says it (the WR/WS contract): the mode,
 * the version it ran, how each node was resolved, its heals, and every token it spent with the reason
 * (a heal, an AI node, the agent that took over). Also the signature a version's outcomes compare:
 * the shape of the output, never its values. Pure.
 */
import { createHash } from 'node:crypto';
import type { Json, JsonObject } from '../store/ports.ts';
import type { HealRecord, NodeResolvedBy, WorkflowState } from '../workflows/types.ts';

export interface PaidEntry {
  reason: 'heal' | 'fallback' | 'ai_node';
  alias?: string;
  promptTokens: number;
  completionTokens: number;
}

export interface WorkflowUsage {
  mode: 'workflow';
  workflow: { id?: string; version: number; name: string };
  resolvedBy: Partial<Record<NodeResolvedBy, number>>;
  heals: HealRecord[];
  paid: PaidEntry[];
  fallback?: { reason: string };
}

/** The tokens each node spent, named by why: a heal's observe call, or an AI node doing its job. */
export function paidByNodes(run: WorkflowState): PaidEntry[] {
  const out: PaidEntry[] = [];
  for (const [key, r] of Object.entries(run.results)) {
    if (r.usage.promptTokens + r.usage.completionTokens === 0) continue;
    const reason = r.resolvedBy === 'heal-llm' || r.heal ? 'heal' : 'ai_node';
    out.push({
      reason,
      alias: key,
      promptTokens: r.usage.promptTokens,
      completionTokens: r.usage.completionTokens,
    });
  }
  return out;
}

export function resolvedCounts(run: WorkflowState): Partial<Record<NodeResolvedBy, number>> {
  const counts: Partial<Record<NodeResolvedBy, number>> = {};
  for (const r of Object.values(run.results)) counts[r.resolvedBy] = (counts[r.resolvedBy] ?? 0) + 1;
  return counts;
}

export function workflowUsage(
  run: WorkflowState,
  fallback?: { reason: string; promptTokens: number; completionTokens: number },
): WorkflowUsage {
  const paid = paidByNodes(run);
  if (fallback && fallback.promptTokens + fallback.completionTokens > 0)
    paid.push({
      reason: 'fallback',
      promptTokens: fallback.promptTokens,
      completionTokens: fallback.completionTokens,
    });
  const { id, version, name } = run.workflow;
  return {
    mode: 'workflow',
    workflow: { ...(id ? { id } : {}), version, name },
    resolvedBy: resolvedCounts(run),
    heals: run.heals,
    paid,
    ...(fallback ? { fallback: { reason: fallback.reason } } : {}),
  };
}

/** The output's shape: keys and value types, recursively (arrays by the union of their items' shapes). */
export function shapeOf(value: Json): Json {
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    const kinds = [...new Set(value.map((v) => JSON.stringify(shapeOf(v))))].sort();
    return { array: kinds.map((k) => JSON.parse(k) as Json) };
  }
  if (typeof value === 'object') {
    const out: JsonObject = {};
    for (const k of Object.keys(value).sort()) out[k] = shapeOf((value as JsonObject)[k]!);
    return out;
  }
  return typeof value;
}

/** Two successes are identical when their outputs have the same shape (values differ per page). */
export const outputSignature = (data: Json): string =>
  createHash('sha256')
    .update(JSON.stringify(shapeOf(data)))
    .digest('hex')
    .slice(0, 16);

/** Where a run whose spec carries its workflow inline keeps it (so heals can be written as versions). */
export const inlineWorkflowId = (runId: string) => `run-${runId}`.slice(0, 128);
