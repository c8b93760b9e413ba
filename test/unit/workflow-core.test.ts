import { describe, expect, it } from 'vitest';
import { ExpressionError, evaluate, truthy } from '../../lib/workflows/expressions.ts';
import { fillTemplates, TemplateError } from '../../lib/workflows/templates.ts';
import {
  describeIssue,
  parseWorkflow,
  validateWorkflow,
  WorkflowError,
} from '../../lib/workflows/validate.ts';

const nav = (alias: string, url: string) => ({
  alias,
  type: 'browser_action',
  config: { action: 'navigate', url },
});

describe('templates', () => {
  const scope = { inputs: { q: 'shoes', n: 3 }, search: { items: [{ title: 'A' }] }, item: { url: '/x' } };
  it('keeps the JSON type of a whole-value template and writes out embedded ones', () => {
    const out = fillTemplates(
      { a: '{{inputs.n}}', b: 'n={{inputs.n}} q={{ inputs.q }}', c: '{{search.items.0}}' },
      scope,
    );
    expect(out).toEqual({ a: 3, b: 'n=3 q=shoes', c: { title: 'A' } });
  });
  it('leaves %secrets% and skipped keys alone', () => {
    const out = fillTemplates({ value: '%password%', nodes: ['{{nope}}'] }, scope, ['nodes']);
    expect(out).toEqual({ value: '%password%', nodes: ['{{nope}}'] });
  });
  it('names a template with no value', () => {
    expect(() => fillTemplates({ u: '{{inputs.missing}}' }, scope)).toThrow(TemplateError);
    expect(() => fillTemplates({ u: '{{inputs.missing}}' }, scope)).toThrow(/inputs\.missing/);
  });
});

describe('expressions', () => {
  it('evaluates JSONata over the scope', async () => {
    expect(await evaluate('$sum(items.price)', { items: [{ price: 2 }, { price: 3 }] })).toBe(5);
    expect(await evaluate('inputs.q & "!"', { inputs: { q: 'hi' } })).toBe('hi!');
  });
  it('stops runaway recursion with an error naming the expression', async () => {
    const expr = '($f := function($n){ $f($n+1) }; $f(1))';
    const err = await evaluate(expr, {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ExpressionError);
    expect((err as ExpressionError).expression).toBe(expr);
  });
  it('rejects a parse error and oversized input', async () => {
    await expect(evaluate('a +* b', {})).rejects.toThrow(ExpressionError);
    await expect(evaluate('x', { x: 'y'.repeat(6_000_000) })).rejects.toThrow(/byte limit/);
  });
  it('uses JSONata truthiness', () => {
    expect([truthy([]), truthy(''), truthy(0), truthy(null), truthy([1]), truthy('a')]).toEqual([
      false,
      false,
      false,
      false,
      true,
      true,
    ]);
  });
});

describe('validate', () => {
  it('accepts a good document and fills defaults', () => {
    const wf = parseWorkflow({
      name: 'w',
      inputs: { q: { type: 'string' } },
      nodes: [
        nav('open', 'http://127.0.0.1/?q={{inputs.q}}'),
        {
          alias: 'each',
          type: 'iterate',
          config: {
            over: '[1,2]',
            nodes: [{ alias: 'double', type: 'transform', config: { expression: 'item * 2' } }],
          },
        },
        { alias: 'after', type: 'transform', config: { expression: 'each' } },
      ],
    });
    expect(wf.nodes[1]!.type === 'iterate' && wf.nodes[1].config.as).toBe('item');
  });

  it('names every problem by alias and field at once', () => {
    const v = validateWorkflow({
      name: 'w',
      inputs: { email: {} },
      nodes: [
        nav('open', 'http://127.0.0.1/{{inputs.nope}}'),
        nav('open', 'http://127.0.0.1/{{later.x}}'),
        { alias: 'later', type: 'transform', config: { expression: 'a +* b' } },
        { alias: 'ask', type: 'cognition', config: { instruction: 'log in as %password%' } },
        {
          alias: 'wrap',
          type: 'group',
          config: {
            nodes: [
              {
                alias: 'fill_pw',
                type: 'browser_action',
                config: {
                  action: 'fill',
                  value: '%password%',
                  target: { candidates: [{ kind: 'css', value: '#pw' }], instruction: 'password box' },
                },
              },
            ],
          },
        },
      ],
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    const lines = v.issues.map(describeIssue);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^nodes\.0\.config\.url \(open\): .*inputs\.nope/),
        expect.stringMatching(/^nodes\.1\.alias \(open\): .*open/),
        expect.stringMatching(/^nodes\.1\.config\.url \(open\): \{\{later\.x\}\}/),
        expect.stringMatching(/^nodes\.2\.config\.expression \(later\): /),
        expect.stringMatching(/^nodes\.3\.config\.instruction \(ask\): .*%/),
      ]),
    );
    // The secret typed into a field is allowed.
    expect(lines.some((l) => l.includes('fill_pw'))).toBe(false);
    expect(v.issues).toHaveLength(5);
  });

  it('names schema problems in nested nodes by the nested alias', () => {
    const doc = {
      name: 'w',
      nodes: [
        {
          alias: 'wrap',
          type: 'group',
          config: {
            nodes: [
              {
                alias: 'click_submit',
                type: 'browser_action',
                config: { action: 'click', target: { candidates: [], instruction: 'submit' } },
              },
            ],
          },
        },
      ],
    };
    const err = (() => {
      try {
        parseWorkflow(doc);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(WorkflowError);
    const [line] = (err as WorkflowError).issues.map(describeIssue);
    expect(line).toMatch(/^nodes\.0\.config\.nodes\.0\.config\.target\.candidates \(click_submit\): /);
  });

  it('lets a handle fallback read its error and iterate bodies read their item', () => {
    const v = validateWorkflow({
      name: 'w',
      nodes: [
        {
          alias: 'guard',
          type: 'handle',
          config: {
            nodes: [nav('open', 'http://127.0.0.1/')],
            fallback: [
              { alias: 'why', type: 'transform', config: { expression: 'guard.error.message' } },
              nav('retry_open', 'http://127.0.0.1/{{guard.error.message}}'),
            ],
          },
        },
        {
          alias: 'loop',
          type: 'iterate',
          config: { over: '[1]', as: 'row', nodes: [nav('go', 'http://127.0.0.1/{{row.id}}')] },
        },
        nav('outside', 'http://127.0.0.1/{{row.id}}'),
      ],
    });
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.issues.map(describeIssue)).toEqual([
      expect.stringMatching(/^nodes\.2\.config\.url \(outside\): \{\{row\.id\}\}/),
    ]);
  });
});
