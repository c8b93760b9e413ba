/**
 * The director's pure parts: the prompt says the rule and what the caller gave, the repair names every
 * problem by field and alias, and an answer is checked whole (unwrapped, marked as planned).
 */
import { describe, expect, it } from 'vitest';
import { toWireSchema } from '../../lib/llm/json-schema.ts';
import {
  aiAliases,
  directorSystem,
  directorUser,
  parsePlan,
  planReplySchema,
  repairRequest,
} from '../../lib/workflows/director.ts';

const plan = {
  name: 'Product prices',
  inputs: {},
  nodes: [
    { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
    {
      alias: 'read',
      type: 'browser_ai_query',
      config: { method: 'extract', instruction: 'every product name and price' },
    },
    {
      alias: 'cheap',
      type: 'route',
      config: {
        branches: [
          {
            when: '$count(read.products) > 0',
            nodes: [{ alias: 'judge', type: 'cognition', config: { instruction: 'which is the best deal' } }],
          },
        ],
      },
    },
    { alias: 'out', type: 'transform', config: { expression: 'read.products', store_variable: true } },
  ],
};

describe('director prompt', () => {
  it('states the deterministic-first rule and lists every node type', () => {
    const system = directorSystem();
    expect(system).toMatch(/deterministic navigation, intelligent processing/);
    for (const type of [
      'browser_action',
      'browser_ai_action',
      'browser_query',
      'browser_ai_query',
      'transform',
      'cognition',
      'agent',
      'iterate',
      'route',
      'handle',
      'context',
      'group',
    ])
      expect(system).toContain(type);
  });

  it('carries the task, the start page and the inputs with their types', () => {
    const text = directorUser('  read the prices  ', {
      url: 'https://shop.test/p/1',
      inputs: { quantity: 2, coupon: 'SAVE10' },
    });
    expect(text).toContain('Task: read the prices\n');
    expect(text).toContain('Start page: https://shop.test/p/1');
    expect(text).toContain('- quantity (number): 2');
    expect(text).toContain('- coupon (string): "SAVE10"');
    expect(directorUser('x')).not.toContain('Start page');
  });

  it('names every problem in the repair request by field and alias', () => {
    const text = repairRequest([
      { alias: 'open', field: 'nodes.0.config.url', message: 'expected string' },
      { field: 'name', message: 'required' },
    ]);
    expect(text).toContain('2 problems');
    expect(text).toContain('- nodes.0.config.url (open): expected string');
    expect(text).toContain('- name: required');
  });

  it('sends the workflow JSON Schema as the answer shape, and lets the validator judge the answer', () => {
    const wire = toWireSchema(planReplySchema());
    expect(Object.keys((wire.schema as { properties: object }).properties)).toEqual(
      expect.arrayContaining(['name', 'inputs', 'nodes']),
    );
    expect(wire.wrapped).toBe(false);
    // An invalid document still reaches the validator (and so the repair that names its problems).
    expect(planReplySchema().safeParse({ nodes: 'not a list' }).success).toBe(true);
  });
});

describe('director answer', () => {
  it('accepts a valid plan, marks it planned and fills defaults', () => {
    const r = parsePlan(plan, { url: 'https://shop.test/p/1' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.workflow.source).toEqual({ kind: 'plan', url: 'https://shop.test/p/1' });
    expect(r.workflow.version).toBe(1);
    expect(r.workflow.nodes[0]!.description).toBe('');
  });

  it('unwraps a { workflow } envelope and overrides a source the model made up', () => {
    const r = parsePlan({ workflow: { ...plan, source: { kind: 'manual' } } });
    expect(r.ok && r.workflow.source).toEqual({ kind: 'plan' });
  });

  it('names every problem by alias and field at once', () => {
    const bad = {
      ...plan,
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate' } },
        { alias: 'open', type: 'transform', config: { expression: '$x' } },
      ],
    };
    const r = parsePlan(bad);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ alias: 'open', field: 'nodes.0.config.url' })]),
    );
    const cross = parsePlan({
      ...plan,
      nodes: [
        { alias: 'use', type: 'transform', config: { expression: 'x', store_variable: true } },
        { alias: 'use', type: 'transform', config: { expression: 'y' } },
      ],
    });
    expect(cross.ok).toBe(false);
    if (!cross.ok)
      expect(cross.issues).toEqual([expect.objectContaining({ alias: 'use', field: 'nodes.1.alias' })]);
    expect(parsePlan('a string')).toEqual({
      ok: false,
      issues: [{ field: '(workflow)', message: 'expected a JSON object (the workflow document)' }],
    });
  });

  it('lists the model nodes at any depth', () => {
    const r = parsePlan(plan);
    expect(r.ok && aiAliases(r.workflow.nodes)).toEqual(['read', 'judge']);
  });
});
