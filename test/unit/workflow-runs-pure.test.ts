import { describe, expect, it } from 'vitest';
import { addTokensByMode } from '../../lib/runs/merge.ts';
import { outputSignature, paidByNodes, shapeOf } from '../../lib/runs/workflow-sample-usage.ts';
import { usesModel } from '../../lib/runs/workflow-versions.ts';
import type { NodeResult, WorkflowState } from '../../lib/workflows/types.ts';

const usage = (p: number, c: number) => ({
  promptTokens: p,
  completionTokens: c,
  cachedTokens: 0,
  model: 'm',
  ms: 1,
  calls: p ? 1 : 0,
});
const result = (alias: string, resolvedBy: NodeResult['resolvedBy'], p = 0, c = 0): NodeResult => ({
  alias,
  type: 'browser_action',
  status: 'ok',
  usage: usage(p, c),
  resolvedBy,
  ms: 1,
});

describe('what a workflow sample paid for', () => {
  it('names each node that spent tokens: heals as heal, AI nodes as ai_node; free nodes are absent', () => {
    const run = {
      results: {
        open: result('open', 'deterministic'),
        qty: result('qty', 'heal-llm', 900, 40),
        buy: result('buy', 'heal-matcher'),
        'read[0]': { ...result('read', 'llm', 300, 20), type: 'browser_ai_query' },
      },
    } as unknown as WorkflowState;
    expect(paidByNodes(run)).toEqual([
      { reason: 'heal', alias: 'qty', promptTokens: 900, completionTokens: 40 },
      { reason: 'ai_node', alias: 'read[0]', promptTokens: 300, completionTokens: 20 },
    ]);
  });

  it('signs the shape of an output, not its values', () => {
    const a = { name: 'Kettle', price: '$5', tags: ['x', 'y'], stock: { n: 3 } };
    const b = { price: '$9', name: 'Lamp', tags: [], stock: { n: 0 } };
    const c = { name: 'Lamp', price: 9, tags: ['z'], stock: { n: 0 } };
    expect(shapeOf(a)).toEqual({
      name: 'string',
      price: 'string',
      stock: { n: 'number' },
      tags: { array: ['string'] },
    });
    expect(outputSignature(a)).toBe(outputSignature({ ...a, name: 'Other' }));
    // A number where a string was is another shape; so is an empty list against a filled one.
    expect(outputSignature(c)).not.toBe(outputSignature({ ...c, price: '9' }));
    expect(outputSignature(a)).not.toBe(outputSignature(b));
  });

  it('splits run tokens by mode: agent, extract, cua, and a workflow sample by its paid list', () => {
    const into = {};
    addTokensByMode(into, { promptTokens: 100, completionTokens: 10 });
    addTokensByMode(into, { mode: 'extract', promptTokens: 50, completionTokens: 5 });
    addTokensByMode(into, { mode: 'workflow', promptTokens: 0, completionTokens: 0, paid: [] });
    addTokensByMode(into, {
      mode: 'workflow',
      promptTokens: 1300,
      completionTokens: 70,
      paid: [
        { reason: 'heal', alias: 'qty', promptTokens: 900, completionTokens: 40 },
        { reason: 'ai_node', alias: 'read', promptTokens: 300, completionTokens: 20 },
        { reason: 'fallback', promptTokens: 100, completionTokens: 10 },
      ],
    });
    expect(into).toEqual({
      agent: { promptTokens: 200, completionTokens: 20 },
      extract: { promptTokens: 50, completionTokens: 5 },
      heal: { promptTokens: 900, completionTokens: 40 },
      workflow: { promptTokens: 300, completionTokens: 20 },
    });
  });

  it('finds a model-calling node at any depth, and none in a deterministic document', () => {
    const open = { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: 'x' } };
    expect(usesModel([open])).toBe(false);
    const nested = {
      alias: 'each',
      type: 'iterate',
      config: { over: 'xs', as: 'x', nodes: [{ alias: 'think', type: 'cognition', config: {} }] },
    };
    expect(usesModel([open, nested])).toBe(true);
    // A description that merely mentions a type is not a node.
    expect(usesModel([{ ...open, description: 'cognition' }])).toBe(false);
  });
});
