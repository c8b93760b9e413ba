import { describe, expect, it } from 'vitest';
import { checkDone, isPresent, requiredFieldsOf, valueAt } from '../../lib/agent/done-check.ts';
import { classify } from '../../lib/agent/errors.ts';
import { dueForSummary, fitHistory, MIN_RECENT } from '../../lib/agent/history.ts';
import { hintsFor, MEMORY_PER_KIND, remember } from '../../lib/agent/memory.ts';
import { canonicalJson, countItems, deepMerge, mergeData } from '../../lib/agent/merge.ts';
import { stepPrompt, systemPrompt } from '../../lib/agent/prompt.ts';
import { type HistoryEntry, newAgentState } from '../../lib/agent/state.ts';
import { decisionSchema, TOOL_NAMES, toolsOffered } from '../../lib/agent/tools.ts';
import {
  actionKind,
  budgetWarnings,
  controlsShifted,
  isPaginationName,
  levelFor,
  paginationBonus,
  toolsFor,
  trackFailures,
  trackRepeats,
  trackStagnation,
} from '../../lib/agent/watchdog.ts';
import { toWireSchema } from '../../lib/llm/json-schema.ts';
import { LlmError } from '../../lib/llm/types.ts';

const fresh = () =>
  newAgentState({ tenant: 't', runId: 'r', sampleId: 's', url: 'https://a.test/', task: { goal: 'g' } })
    .watchdog;

describe('deepMerge', () => {
  it('recurses into objects and keeps keys only one side has', () => {
    expect(deepMerge({ a: { x: 1, y: 2 }, b: 1 }, { a: { y: 3, z: 4 }, c: 5 })).toEqual({
      a: { x: 1, y: 3, z: 4 },
      b: 1,
      c: 5,
    });
  });
  it('appends array items it does not hold yet, comparing objects regardless of key order', () => {
    expect(
      deepMerge({ items: [{ n: 1, t: 'a' }, 2] }, { items: [{ t: 'a', n: 1 }, 3, 2, { n: 4 }] }),
    ).toEqual({ items: [{ n: 1, t: 'a' }, 2, 3, { n: 4 }] });
  });
  it('drops duplicates inside one update too', () => {
    expect(deepMerge([], ['a', 'a', 'b'])).toEqual(['a', 'b']);
  });
  it('lets the newer scalar win, and 0 / false / null replace older values', () => {
    expect(deepMerge({ a: 5, b: true, c: 'x' }, { a: 0, b: false, c: null })).toEqual({
      a: 0,
      b: false,
      c: null,
    });
  });
  it('replaces when the shapes differ (array vs object vs scalar)', () => {
    expect(deepMerge({ a: [1] }, { a: { x: 1 } })).toEqual({ a: { x: 1 } });
    expect(deepMerge({ a: { x: 1 } }, { a: 'now text' })).toEqual({ a: 'now text' });
  });
  it('does not change its inputs', () => {
    const base = { a: { list: [1] } };
    const update = { a: { list: [2] } };
    mergeData(base, update);
    expect(base).toEqual({ a: { list: [1] } });
    expect(update).toEqual({ a: { list: [2] } });
  });
  it('is idempotent: merging the same save twice changes nothing (a redone step adds no duplicates)', () => {
    const save = { prs: [{ title: 'Fix', reviewers: ['bob'] }], pages: { p1: true } };
    const once = mergeData({}, save);
    expect(mergeData(once, save)).toEqual(once);
  });
  it('canonical JSON ignores key order', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 1, c: 2 }] })).toBe(canonicalJson({ a: [{ c: 2, d: 1 }], b: 1 }));
  });
  it('counts items as the longest array anywhere', () => {
    expect(countItems({ a: [1, 2], b: { c: [1, 2, 3] } })).toBe(3);
    expect(countItems({ a: 1 })).toBe(0);
  });
});

describe('done check', () => {
  const task = { goal: 'g', requiredFields: ['name', 'stats.count', 'active', 'tags', 'items.price'] };
  it('counts 0 and false as present, but not null, empty strings or empty lists', () => {
    const ok = checkDone(
      task,
      { name: 'x', stats: { count: 0 }, active: false, tags: ['a'], items: [{ price: 0 }] },
      [],
    );
    expect(ok).toEqual({ ok: true, missingFields: [], missingArtifacts: [] });
    const bad = checkDone(task, { name: ' ', stats: { count: null }, tags: [], items: [{}] }, []);
    expect(bad.missingFields).toEqual(['name', 'stats.count', 'active', 'tags', 'items.price']);
    expect(bad.ok).toBe(false);
  });
  it('takes required fields from the schema when none are named', () => {
    expect(requiredFieldsOf({ goal: 'g', schema: { type: 'object', required: ['a', 'b'] } })).toEqual([
      'a',
      'b',
    ]);
  });
  it('checks required screenshots by label, case-insensitively', () => {
    const t = { goal: 'g', requiredArtifacts: ['Overview', 'detail'] };
    expect(checkDone(t, {}, ['overview']).missingArtifacts).toEqual(['detail']);
  });
  it('reports fewer items than expected', () => {
    expect(checkDone({ goal: 'g', expectedItems: 5 }, { list: [1, 2] }, []).short).toEqual({
      found: 2,
      expected: 5,
    });
    expect(checkDone({ goal: 'g', expectedItems: 2 }, { list: [1, 2] }, []).short).toBeUndefined();
  });
  it('in scenario mode, accepts done only when every scenario step was marked achieved', () => {
    const t = { goal: 'g', steps: ['a', 'b', 'c'] };
    expect(checkDone(t, {}, [], 1).missingSteps).toEqual(['b', 'c']);
    expect(checkDone(t, {}, [], 3).ok).toBe(true);
  });
  it('reads dot paths through arrays', () => {
    expect(valueAt({ a: [{ b: null }, { b: 2 }] }, 'a.b')).toBe(2);
    expect(isPresent(0)).toBe(true);
  });
});

describe('watchdog', () => {
  it('levels at 3, 5 and 8 stagnant steps', () => {
    expect([0, 2, 3, 4, 5, 7, 8, 20].map(levelFor)).toEqual([0, 0, 1, 1, 2, 2, 3, 3]);
  });
  it('counts a step stagnant only when page and data are both unchanged, and asks for a checkpoint on entering level 2', () => {
    let wd = fresh();
    const seen: number[] = [];
    const checkpoints: number[] = [];
    for (let step = 1; step <= 9; step++) {
      const u = trackStagnation(wd, 'same-page', step === 4 ? 'new-data' : step > 4 ? 'new-data' : 'old');
      wd = u.watchdog;
      seen.push(u.level);
      if (u.checkpoint) checkpoints.push(step);
    }
    // Step 4 brought new data: the count starts again.
    expect(seen).toEqual([0, 0, 0, 0, 0, 0, 1, 1, 2]);
    expect(checkpoints).toEqual([9]);
  });
  it('warns once at 75% and once at 90%', () => {
    let wd = fresh();
    const all: string[] = [];
    for (let step = 1; step <= 10; step++) {
      const u = budgetWarnings(wd, step, 10);
      wd = u.watchdog;
      all.push(...u.notices.map((n) => `${step}:${n.slice(0, 30)}`));
    }
    expect(all).toEqual(['8:Budget: step 8 of 10, 75% used', '9:Budget: step 9 of 10, 90% used']);
  });
  it('offers only done and fail on the last step and at level 3', () => {
    expect(toolsFor(9, 10, 2)).toHaveLength(12);
    expect(toolsFor(10, 10, 0)).toEqual(['done', 'fail']);
    expect(toolsFor(3, 10, 3)).toEqual(['done', 'fail']);
    expect(toolsFor(3, 10, 0, 2)).toContain('step_done');
    expect(toolsFor(10, 10, 0, 2)).toEqual(['done', 'fail']);
  });
  it('flags 4 actions of one type on one URL while nothing changes, whatever their targets', () => {
    let wd = fresh();
    wd = trackRepeats(wd, ['click:#1@a', 'scroll:down@a', 'click:#2@a']).watchdog;
    expect(trackRepeats(wd, ['click:#3@b', 'wait:@a']).spam).toBeUndefined();
    wd = trackRepeats(wd, ['click:#5@a']).watchdog;
    expect(trackRepeats(wd, ['click:#9@a']).spam).toBe('click@a');
    // The page or the data changed since the last step: the count starts again.
    expect(trackRepeats(wd, ['click:#9@a'], true).spam).toBeUndefined();
    expect(actionKind('goto:http://x.test/a@b@x.test/a')).toBe('goto@x.test/a');
  });
  it('stops a batch when more than 20% of the controls appear or go', () => {
    expect(controlsShifted(10, 12)).toBe(false);
    expect(controlsShifted(10, 13)).toBe(true);
    expect(controlsShifted(10, 7)).toBe(true);
    expect(controlsShifted(0, 1)).toBe(true);
    expect(controlsShifted(0, 0)).toBe(false);
  });
  it('asks for help after 3 failures in a row; a success resets the count', () => {
    let wd = fresh();
    wd = trackFailures(wd, [false, false]).watchdog;
    expect(trackFailures(wd, [true]).help).toBe(false);
    expect(trackFailures(wd, [false]).help).toBe(true);
  });
  it('grants pagination bonus steps only when new items arrive after a pagination click', () => {
    const wd = { ...fresh(), paginationPending: true };
    expect(paginationBonus(wd, false, 10).bonusSteps).toBe(0);
    const after = paginationBonus(wd, true, 10);
    expect(after.bonusSteps).toBe(3);
    expect(after.paginationPending).toBe(false);
    expect(paginationBonus({ ...after, paginationPending: true, bonusSteps: 9 }, true, 10).bonusSteps).toBe(
      10,
    );
    expect(['Next', 'Load more', '»', 'Page 2', 'Older'].every(isPaginationName)).toBe(true);
    expect(['Next steps for your career', 'Sign in'].some(isPaginationName)).toBe(false);
  });
});

describe('history and memory', () => {
  const entry = (step: number, text = 'click [1] button "Go" → ok'): HistoryEntry => ({
    step,
    url: 'https://a.test/',
    actions: text,
    ok: true,
  });
  it('keeps the newest steps that fit the budget, at least a few, oldest first', () => {
    const entries = Array.from({ length: 40 }, (_, i) => entry(i + 1, 'x'.repeat(350)));
    const lines = fitHistory(entries, 300);
    expect(lines).toHaveLength(MIN_RECENT);
    expect(lines[0]).toMatch(/^36\. /);
    expect(
      fitHistory(
        entries.map((e) => ({ ...e, actions: 'short' })),
        10_000,
      ),
    ).toHaveLength(25);
  });
  it('is due for a summary every 10 steps when there is older history', () => {
    const h = Array.from({ length: 10 }, (_, i) => entry(i + 1));
    expect(dueForSummary(10, h)?.map((e) => e.step)).toEqual([1, 2, 3, 4, 5]);
    expect(dueForSummary(9, h)).toBeUndefined();
  });
  it('remembers per domain, newest kept, without duplicates', () => {
    let m = {};
    for (let i = 0; i < MEMORY_PER_KIND + 2; i++) m = remember(m, 'https://shop.test/a', `step ${i}`, true);
    m = remember(m, 'https://shop.test/b', 'step 9', true);
    m = remember(m, 'https://other.test/', 'clicked X', false);
    expect(hintsFor(m, 'https://shop.test/zzz')).toHaveLength(MEMORY_PER_KIND);
    expect(hintsFor(m, 'https://shop.test/zzz').at(-1)).toBe('worked: step 9');
    expect(hintsFor(m, 'https://other.test/')).toEqual(['failed: clicked X']);
  });
});

describe('prompts and tools', () => {
  it('builds a system part that depends on the task only', () => {
    const task = {
      goal: 'List invoices',
      schema: { type: 'object', required: ['invoices'] },
      requiredArtifacts: ['list'],
    };
    const a = systemPrompt(task);
    expect(systemPrompt(structuredClone(task))).toBe(a);
    expect(a).toContain('Task: List invoices');
    expect(a).toContain('Required fields in the result: invoices');
    expect(a).toContain('Screenshots required before done (labels): list');
  });
  it('puts everything that changes per step in the user message', () => {
    const text = stepPrompt({
      step: 3,
      maxSteps: 10,
      url: 'https://a.test/x',
      title: 'X',
      tree: '[1] button: Go',
      notices: ['Watchdog: hi'],
      summary: '',
      history: ['1. click'],
      notes: ['remember me'],
      memoryHints: [],
      data: { a: 1 },
      input: {},
      variableNames: ['pw'],
      lastResults: ['click → ok'],
      finalOnly: false,
    });
    expect(text).toMatch(/^Step 3 of 10 \(7 left after this one\)\./);
    for (const part of [
      'Watchdog: hi',
      '%pw%',
      '1. click',
      'remember me',
      'Data saved so far: {"a":1}',
      '[1] button: Go',
    ])
      expect(text).toContain(part);
  });
  it('offers the named tools in the reply schema, as the provider receives it', () => {
    expect(toolsOffered(toWireSchema(decisionSchema(TOOL_NAMES, 3)).schema)).toEqual([...TOOL_NAMES]);
    expect(toolsOffered(toWireSchema(decisionSchema(['done', 'fail'], 3)).schema)).toEqual(['done', 'fail']);
    expect(decisionSchema(TOOL_NAMES, 3)).toBe(decisionSchema(TOOL_NAMES, 3));
  });
  it('accepts up to maxActions calls and refuses tools not offered', () => {
    const s = decisionSchema(['done', 'fail'], 2);
    expect(s.safeParse({ actions: [{ tool: 'done', data: {} }] }).success).toBe(true);
    expect(s.safeParse({ actions: [{ tool: 'click', id: 3 }] }).success).toBe(false);
    expect(s.safeParse({ actions: [] }).success).toBe(false);
    const f = { tool: 'fail', reason: 'x' };
    expect(s.safeParse({ actions: [f, f, f] }).success).toBe(false);
  });
});

describe('error classes', () => {
  it('tells infrastructure errors from logic errors', () => {
    const infra = [
      new LlmError('server', 'provider error 500', 500),
      new LlmError('timeout', 'no answer'),
      new LlmError('network', 'could not reach'),
      new Error('page.goto: net::ERR_NAME_NOT_RESOLVED at http://shop.invalid/'),
      new Error('Target page, context or browser has been closed'),
      new Error('connect ECONNREFUSED 127.0.0.1:9'),
    ];
    const logic = [
      new LlmError('invalid_output', 'wrong shape'),
      new LlmError('auth', 'key refused', 401),
      new Error('[12] is not an element of the current page outline'),
      new Error('element is not visible'),
    ];
    expect(infra.map(classify)).toEqual(infra.map(() => 'infra'));
    expect(logic.map(classify)).toEqual(logic.map(() => 'logic'));
  });
});
