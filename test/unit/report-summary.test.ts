/**
 * The pure parts of the report worth sharing and of `workflow show`: reasons grouped across samples,
 * tokens by what paid for them, output fields as columns, clipped cells, the workflow graph's kinds,
 * candidates and result lines, and the signed report token.
 */
import { describe, expect, it } from 'vitest';
import { reportLinkAuth, signReportToken, verifyReportToken } from '../../lib/api/report-link.ts';
import { totalsOf } from '../../lib/runs/merge.ts';
import {
  costsByMode,
  fieldCell,
  groupFailures,
  normaliseReason,
  outputFields,
  renderSummary,
  summarizeRun,
} from '../../lib/runs/report-summary.ts';
import type { JsonObject, ResultRecord, RunRecord, SampleRecord } from '../../lib/store/ports.ts';
import { describeCandidate, nodeKind, renderWorkflowPage, resultLine } from '../../lib/workflows/show.ts';
import type { NodeResult } from '../../lib/workflows/types.ts';
import { parseWorkflow } from '../../lib/workflows/validate.ts';

const sample = (id: string, status: SampleRecord['status'] = 'done'): SampleRecord => ({
  tenant: 't',
  runId: 'r',
  sampleId: id,
  url: `https://shop.test/${id}`,
  input: {},
  status,
  attempts: 1,
  updatedAt: '2026-01-01T00:00:00Z',
});
const result = (
  id: string,
  status: ResultRecord['status'],
  reason: string,
  usage: JsonObject,
  data: ResultRecord['data'] = {},
): ResultRecord => ({
  tenant: 't',
  runId: 'r',
  sampleId: id,
  status,
  reason,
  data,
  usage,
  evidence: [],
  writtenAt: '2026-01-01T00:00:01Z',
});
const run: RunRecord = {
  tenant: 't',
  runId: 'r',
  status: 'done',
  spec: {
    goal: 'Read the price',
    mode: 'agent',
    model: 'openai/gpt-4.1-mini',
    concurrency: 3,
    outputSchema: { type: 'object', properties: { title: {}, price: {} } },
  },
  sampleCount: 4,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:02Z',
};

describe('report summary', () => {
  it('groups failures whose reasons differ only by URL, number or quoted text', () => {
    expect(normaliseReason('could not open https://a.test/p/12: net::ERR_NAME_NOT_RESOLVED')).toBe(
      'could not open <url>: net::ERR_NAME_NOT_RESOLVED',
    );
    const groups = groupFailures([
      { sample: sample('a'), result: result('a', 'failed', 'step budget of 10 used up before done', {}) },
      {
        sample: sample('b'),
        result: result('b', 'needs_review', 'step budget of 20 used up before done', {}),
      },
      { sample: sample('c'), result: result('c', 'failed', 'Element not found: "Add to cart"', {}) },
      { sample: sample('d'), result: result('d', 'done', 'done', {}) },
    ]);
    expect(groups).toEqual([
      {
        reason: 'step budget of N used up before done',
        count: 2,
        statuses: ['failed', 'needs_review'],
        sampleIds: ['a', 'b'],
      },
      { reason: 'Element not found: "…"', count: 1, statuses: ['failed'], sampleIds: ['c'] },
    ]);
  });

  it('splits tokens and cost by what paid: agent, extract, workflow replay, heal, fallback', () => {
    const costs = costsByMode(
      [
        {
          sample: sample('a'),
          result: result('a', 'done', '', {
            mode: 'agent',
            promptTokens: 900,
            completionTokens: 100,
            costUsd: 0.01,
          }),
        },
        {
          sample: sample('e'),
          result: result('e', 'done', '', { mode: 'extract', promptTokens: 400, completionTokens: 0 }),
        },
        {
          sample: sample('w1'),
          result: result('w1', 'done', '', {
            mode: 'workflow',
            promptTokens: 0,
            completionTokens: 0,
            costUsd: 0,
            paid: [],
          }),
        },
        {
          sample: sample('w2'),
          result: result('w2', 'done', '', {
            mode: 'workflow',
            promptTokens: 300,
            completionTokens: 100,
            costUsd: 0.004,
            paid: [
              { reason: 'heal', alias: 'add', promptTokens: 100, completionTokens: 0 },
              { reason: 'fallback', promptTokens: 200, completionTokens: 100 },
            ],
          }),
        },
      ],
      'agent',
    );
    const by = Object.fromEntries(costs.map((c) => [c.mode, c]));
    expect(costs.map((c) => c.mode)).toEqual(['agent', 'extract', 'workflow', 'heal', 'fallback']);
    expect(by.agent).toMatchObject({ samples: 1, promptTokens: 900, completionTokens: 100, costUsd: 0.01 });
    // Tokens at no known price: the cost is unknown, never $0.
    expect(by.extract?.costUsd).toBeUndefined();
    expect(by.workflow).toMatchObject({ samples: 2, promptTokens: 0, completionTokens: 0, costUsd: 0 });
    expect(by.heal).toMatchObject({ samples: 1, promptTokens: 100, costUsd: 0.001 });
    expect(by.fallback).toMatchObject({
      samples: 1,
      promptTokens: 200,
      completionTokens: 100,
      costUsd: 0.003,
    });
  });

  it("counts a scenario sample's tokens as scenario, never as agent: in the report and in the run's totals", () => {
    const scenarioRun: RunRecord = { ...run, spec: { goal: 'Add a note', mode: 'scenario' } };
    const samples = [
      {
        sample: sample('s1'),
        result: result('s1', 'done', 'scenario passed', {
          mode: 'scenario',
          promptTokens: 600,
          completionTokens: 50,
          costUsd: 0.002,
        }),
      },
      // A crash record from before results carried the mode: the run's spec says which it was.
      {
        sample: sample('s2', 'failed'),
        result: result('s2', 'failed', 'crashed', {
          promptTokens: 300,
          completionTokens: 25,
          costUsd: 0.001,
        }),
      },
    ];
    const costs = summarizeRun(scenarioRun, samples).costs;
    expect(costs).toEqual([
      { mode: 'scenario', samples: 2, promptTokens: 900, completionTokens: 75, costUsd: 0.003 },
    ]);
    const html = renderSummary(summarizeRun(scenarioRun, samples));
    expect(html).toContain('<tr class="mode-cost" data-mode="scenario"><td>scenario</td><td>2</td>');
    expect(html).not.toContain('data-mode="agent"');

    // The run's totals: a result that names its mode is counted under it (the crash record of a
    // scenario sample names it too: handlers.ts); a workflow crash record with no paid list is the workflow's.
    const totals = totalsOf(
      scenarioRun,
      [sample('s1'), sample('s3'), sample('w1')],
      [
        samples[0]!.result,
        result('s3', 'failed', 'crashed', { mode: 'scenario', promptTokens: 300, completionTokens: 25 }),
        result('w1', 'failed', 'crashed', { mode: 'workflow', promptTokens: 40, completionTokens: 4 }),
      ],
    );
    expect(totals.tokensByMode).toEqual({
      scenario: { promptTokens: 900, completionTokens: 75 },
      workflow: { promptTokens: 40, completionTokens: 4 },
    });
  });

  it('gives one column per output field (schema first, then keys seen) and clips long cells', () => {
    const fields = outputFields(run.spec, [
      result('a', 'done', '', {}, { price: 3, sku: 'k1' }),
      result('b', 'done', '', {}, { title: 'Kettle', colour: 'red' }),
    ]);
    expect(fields).toEqual(['title', 'price', 'sku', 'colour']);
    const long = 'x'.repeat(300);
    const cell = fieldCell('notes', long);
    expect(cell).toContain('<details class="clip">');
    expect(cell).toContain(long);
    expect(fieldCell('price', null)).toContain('class="field empty"');
    expect(fieldCell('t', '<b>')).toContain('&lt;b&gt;');
  });

  it('reads the goal, spec, counts, heals and workflow versions from the records', () => {
    const heal = {
      alias: 'add_to_cart',
      path: 'nodes.2',
      url: 'https://shop.test/p',
      old: [{ kind: 'css', value: '.buy-btn' }],
      new: [{ kind: 'role', role: 'button', name: 'Add to cart' }],
      via: 'matcher',
      reason: 'no candidate matched',
      confirmed: true,
    };
    const s = summarizeRun(run, [
      {
        sample: sample('a'),
        result: result('a', 'done', 'ok', {
          mode: 'workflow',
          workflow: { id: 'shop', version: 2, name: 'Shop' },
          heals: [heal],
        }),
      },
      { sample: sample('b', 'running') },
    ]);
    expect(s.goal).toBe('Read the price');
    expect(s.spec).toEqual({ mode: 'agent', model: 'openai/gpt-4.1-mini', concurrency: 3 });
    expect(s.counts).toEqual([
      { status: 'done', count: 1 },
      { status: 'running', count: 1 },
    ]);
    expect(s.heals).toEqual([{ ...heal, sampleId: 'a' }]);
    expect(s.workflows.get('a')).toEqual({ id: 'shop', version: 2, name: 'Shop' });
  });
});

describe('workflow show (pure parts)', () => {
  const usage = (p: number, c: number) => ({
    promptTokens: p,
    completionTokens: c,
    cachedTokens: 0,
    model: 'm',
    ms: 1,
    calls: 1,
  });
  const r = (
    alias: string,
    status: NodeResult['status'],
    resolvedBy: NodeResult['resolvedBy'],
    p = 0,
  ): NodeResult => ({
    alias,
    type: 'browser_action',
    status,
    usage: usage(p, 0),
    resolvedBy,
    ms: 10,
  });

  it('tells deterministic, AI and control nodes apart and describes candidates', () => {
    expect(nodeKind('browser_action')).toBe('deterministic');
    expect(nodeKind('transform')).toBe('deterministic');
    expect(nodeKind('browser_ai_query')).toBe('ai');
    expect(nodeKind('agent')).toBe('ai');
    expect(nodeKind('iterate')).toBe('control');
    expect(describeCandidate({ kind: 'role', role: 'button', name: 'Buy' })).toBe('role button "Buy"');
    expect(describeCandidate({ kind: 'css', value: '#buy' })).toBe('css #buy');
  });

  it('sums a node run in a loop into one line', () => {
    expect(resultLine([r('a', 'ok', 'deterministic')])?.text).toBe('ok · deterministic · 10 ms');
    const line = resultLine([r('a', 'ok', 'deterministic'), r('a', 'failed', 'heal-llm', 50)]);
    expect(line).toMatchObject({ status: 'failed', tokens: 50 });
    expect(line?.text).toContain('2 runs: 1 ok, 1 failed');
  });

  it('draws nested nodes with their results and escapes what it shows', () => {
    const wf = parseWorkflow({
      name: 'Shop <test>',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: 'https://shop.test/' } },
        {
          alias: 'each',
          type: 'iterate',
          config: {
            over: '[1,2]',
            nodes: [
              {
                alias: 'read',
                type: 'browser_ai_query',
                config: { method: 'extract', instruction: 'read <price>' },
              },
            ],
          },
        },
      ],
    });
    const html = renderWorkflowPage(wf, {
      results: {
        open: r('open', 'ok', 'deterministic'),
        'read[0]': r('read', 'ok', 'llm', 120),
        'read[1]': r('read', 'ok', 'cache'),
      },
    });
    expect(html).toContain('Shop &lt;test&gt;');
    expect(html).toContain('read &lt;price&gt;');
    expect(html).not.toContain('<price>');
    expect(html).toMatch(
      /data-alias="each"[^>]*data-kind="control"[\s\S]*data-alias="read"[^>]*data-kind="ai"/,
    );
    expect(html).toContain('tokens: 120');
    expect(html).not.toMatch(/<script|style="/);
  });
});

describe('signed report links', () => {
  const key = new TextEncoder().encode('k'.repeat(32));
  const now = 1_800_000_000;

  it('grants the one run to its tenant until it expires; tampering and other runs get nothing', () => {
    const token = signReportToken({ tenant: 'acme', runId: 'r1', exp: now + 900 }, key);
    expect(verifyReportToken(token, 'r1', key, now)).toEqual({ tenant: 'acme' });
    expect(verifyReportToken(token, 'r2', key, now)).toEqual({ problem: 'other-run' });
    expect(verifyReportToken(token, 'r1', key, now + 900)).toEqual({ problem: 'expired' });
    const [payload, sig] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ t: 'other', r: 'r1', e: now + 900 })).toString('base64url');
    expect(verifyReportToken(`${forged}.${sig}`, 'r1', key, now)).toEqual({ problem: 'signature' });
    // Every other spelling of the last character is refused (some decode to the very same bytes).
    for (const last of 'ABCDEFGHIJKLMNOP')
      if (last !== sig!.at(-1))
        expect(verifyReportToken(`${payload}.${sig!.slice(0, -1)}${last}`, 'r1', key, now)).toEqual({
          problem: 'signature',
        });
    expect(
      verifyReportToken(`${payload}.${sig}`, 'r1', new TextEncoder().encode('z'.repeat(32)), now),
    ).toEqual({
      problem: 'signature',
    });
    // Only a GET of that run's report is let in by a token; every other route needs the key.
    expect(reportLinkAuth('GET', '/v1/runs/r1/report', token, key, now)).toEqual({ tenant: 'acme' });
    expect(reportLinkAuth('GET', '/v1/runs/r1/results', token, key, now)).toBeUndefined();
    expect(reportLinkAuth('POST', '/v1/runs/r1/report', token, key, now)).toBeUndefined();
    expect(reportLinkAuth('GET', '/v1/runs/r1/report', token, key, now + 901)).toMatchObject({
      refused: expect.stringMatching(/expired/),
    });
  });
});
