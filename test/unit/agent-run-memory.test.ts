import { describe, expect, it } from 'vitest';
import { distillFromLog, rankHints, words } from '../../lib/agent/run-memory.ts';
import { wantsModel } from '../../lib/agent/run-memory-sync.ts';
import type { AgentState, StepRecord } from '../../lib/agent/state.ts';
import {
  boundedEntry,
  MEMORY_LINES_PER_SAMPLE,
  type RunMemoryEntry,
} from '../../lib/store/run-memory-ports.ts';

const URL = 'http://shop.test/p/1';
type Act = StepRecord['actions'][number];
const act = (tool: string, what: string, ok = true, input: Act['input'] = {}, outcome = 'ok'): Act => ({
  tool,
  input,
  ok,
  outcome,
  ms: 1,
  what,
});
const step = (n: number, actions: Act[], url = URL): StepRecord => ({
  step: n,
  url,
  signature: '',
  actions,
  tokens: { prompt: 0, completion: 0, cached: 0 },
  observeMs: 0,
  modelMs: 0,
  actMs: 0,
  ms: 0,
  notices: [],
});

describe('distilling a sample log (zero tokens)', () => {
  it('names the actions just before the data showed, with the fields found, not the exploring before', () => {
    const lines = distillFromLog([
      step(1, [act('click', 'click tab "Overview"')]),
      step(2, [act('click', 'click tab "Reviews"')]),
      step(3, [act('click', 'click tab "Details"')]),
      step(4, [act('done', 'done', true, { tool: 'done', data: { price: 12 } })]),
    ]);
    expect(lines).toEqual([
      {
        domain: 'shop.test',
        kind: 'worked',
        text: 'to reach the data (price): click tab "Details"; it showed after that (done at step 4)',
      },
    ]);
  });

  it('keeps a same-step lead (type then click), never the typed text; says when data was on the start page', () => {
    const typed = distillFromLog([
      step(1, [
        act('type', 'type "my secret query" into textbox "Search"'),
        act('click', 'click button "Go"'),
        act('save_progress', 'save_progress (found)', true, { data: { hits: [1] } }),
      ]),
    ]);
    expect(typed[0]?.text).toBe(
      'to reach the data (hits): type into textbox "Search", then click button "Go"; it showed after that (save_progress at step 1)',
    );
    expect(JSON.stringify(typed)).not.toContain('my secret query');
    const direct = distillFromLog([step(1, [act('extract', 'extract "price"')])]);
    expect(direct[0]?.text).toMatch(/^the data is on the start page: extract it at once/);
  });

  it('reports failed page actions (at most three, once each) and says nothing for a silent log', () => {
    const lines = distillFromLog([
      step(1, [act('click', 'click link "Specs"', false, {}, 'element is covered')]),
      step(2, [act('click', 'click link "Specs"', false, {}, 'element is covered')]),
      step(3, [act('scroll', 'scroll down')]),
    ]);
    expect(lines).toEqual([
      { domain: 'shop.test', kind: 'failed', text: 'click link "Specs" failed: element is covered' },
    ]);
    expect(distillFromLog([step(1, [act('scroll', 'scroll down')])])).toEqual([]);
  });

  it('asks the model only when the log is silent, the sample acted and the model did not fail', () => {
    const state = (reason: string, retryable = false) =>
      ({ reason, ...(retryable ? { retryable } : {}) }) as unknown as AgentState;
    const acted = [step(1, [act('scroll', 'scroll down')])];
    expect(wantsModel([], { state: state('step budget of 5 used up'), steps: acted })).toBe(true);
    expect(wantsModel([], { state: state('model error: 401'), steps: acted })).toBe(false);
    expect(wantsModel([], { state: state('circuit breaker', true), steps: acted })).toBe(false);
    expect(wantsModel([], { state: state('x'), steps: [step(1, [])] })).toBe(false);
    const some = [{ domain: 'a', kind: 'failed' as const, text: 't' }];
    expect(wantsModel(some, { state: state('x'), steps: acted })).toBe(false);
  });
});

const entry = (sampleId: string, lines: RunMemoryEntry['lines']): RunMemoryEntry => ({
  sampleId,
  lines,
  source: 'log',
  writtenAt: '2026-01-01T00:00:00Z',
});

describe('ranking the run memory by the goal', () => {
  it('puts lines sharing words with the goal first, then the ones more samples saw; only this domain', () => {
    const entries = [
      entry('a', [
        { domain: 'shop.test', kind: 'failed', text: 'click link "Help" failed: covered' },
        { domain: 'shop.test', kind: 'worked', text: 'to reach the data (price): click tab "Details"' },
      ]),
      entry('b', [{ domain: 'shop.test', kind: 'failed', text: 'click link "Help" failed: covered' }]),
      entry('c', [{ domain: 'other.test', kind: 'worked', text: 'price is in the sidebar' }]),
    ];
    expect(rankHints(entries, 'shop.test', 'Report the price of the item')).toEqual([
      'worked (1 sample): to reach the data (price): click tab "Details"',
      'failed (2 samples): click link "Help" failed: covered',
    ]);
    expect(rankHints(entries, 'shop.test', 'Find the help text')[0]).toMatch(/^failed \(2 samples\)/);
    expect(rankHints(entries, 'none.test', 'price')).toEqual([]);
    expect(rankHints(entries, 'shop.test', 'price', 1)).toHaveLength(1);
  });

  it('compares words, not letters; an entry is cut to its line and length limits', () => {
    expect([...words('The PRICE, per-item')]).toEqual(['price', 'per', 'item']);
    const long = entry(
      'x',
      Array.from({ length: 10 }, (_, i) => ({
        domain: 'd',
        kind: 'worked' as const,
        text: `${i} ${'y'.repeat(400)}`,
      })),
    );
    const cut = boundedEntry(long);
    expect(cut.lines).toHaveLength(MEMORY_LINES_PER_SAMPLE);
    expect(cut.lines.every((l) => l.text.length <= 200)).toBe(true);
  });
});
