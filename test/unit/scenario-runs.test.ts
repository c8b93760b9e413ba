import { describe, expect, it } from 'vitest';
import { taskFromSpec } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec, SpecError } from '../../lib/runs/task-spec.ts';
import type { ClearingRecipe } from '../../lib/scenarios/blockers.ts';
import { learnedSince, scenarioEntry, scenarioMemoryOf } from '../../lib/scenarios/domain-memory.ts';
import type { ScenarioMemory } from '../../lib/scenarios/memory.ts';
import type { RunMemoryEntry } from '../../lib/store/run-memory-ports.ts';

const recipe = (xpath: string, name = 'Proceed'): ClearingRecipe => ({
  description: 'wall',
  commands: [{ action: 'click', locator: { xpath, role: 'button', name } }],
});
const entry = (sampleId: string, scenario: unknown): RunMemoryEntry => ({
  sampleId,
  lines: [],
  source: 'log',
  writtenAt: `2026-12-04T00:00:0${sampleId.slice(-1)}Z`,
  ...(scenario ? { scenario: scenario as RunMemoryEntry['scenario'] } : {}),
});

describe('a task spec with a scenario', () => {
  it('is a scenario run: mode and goal may be left out; the steps reach the sample task', () => {
    const spec = parseTaskSpec({ scenario: { steps: ['Open the cart', { do: 'Verify it is empty' }] } });
    expect(spec.mode).toBe('scenario');
    expect(spec.goal).toBe('scenario of 2 steps: Open the cart');
    expect(taskFromSpec(spec).scenario?.steps).toEqual([
      { do: 'Open the cart' },
      { do: 'Verify it is empty' },
    ]);
    // The stored spec (steps as objects) parses again the same.
    expect(parseTaskSpec(JSON.parse(JSON.stringify(spec))).scenario).toEqual(spec.scenario);
  });

  it('names the field when the pair does not match or a step is bad', () => {
    const bad = (value: unknown) => {
      try {
        parseTaskSpec(value);
      } catch (err) {
        return err instanceof SpecError ? err.message : String(err);
      }
      return 'accepted';
    };
    expect(bad({ goal: 'x', mode: 'scenario' })).toBe(
      'task spec scenario: mode "scenario" needs a scenario: { "steps": ["…", …] }',
    );
    expect(bad({ goal: 'x', mode: 'agent', scenario: { steps: ['a'] } })).toBe(
      'task spec scenario: only with mode "scenario"',
    );
    expect(bad({ scenario: { steps: [] } })).toMatch(/^task spec scenario\.steps: needs at least one step/);
  });
});

describe('scenario memory across samples', () => {
  it('merges what earlier samples wrote, per domain, and drops a malformed clearing', () => {
    const memory = scenarioMemoryOf([
      entry('s1', {
        'shop.test': { experiences: ['search needs Enter'], clearings: [recipe('/html/body/div[3]/button')] },
      }),
      entry('s2', {
        'shop.test': {
          experiences: ['search needs Enter', 'cart opens in a drawer'],
          clearings: [{ bogus: 1 }],
        },
        'other.test': { experiences: [], clearings: [recipe('/html/body/div/button', 'OK')] },
      }),
    ]);
    expect(memory['shop.test']?.experiences).toEqual(['search needs Enter', 'cart opens in a drawer']);
    expect(memory['shop.test']?.clearings).toEqual([recipe('/html/body/div[3]/button')]);
    expect(memory['other.test']?.clearings).toHaveLength(1);
    expect(scenarioMemoryOf([entry('s1', undefined)])).toEqual({});
  });

  it('a sample shares only what it learned, and nothing when it learned nothing', () => {
    const before: ScenarioMemory = { 'shop.test': { experiences: ['a'], clearings: [recipe('/x')] } };
    const after: ScenarioMemory = {
      'shop.test': { experiences: ['a', 'b'], clearings: [recipe('/x'), recipe('/y')] },
    };
    const learned = learnedSince(before, after);
    expect(learned).toEqual({ 'shop.test': { experiences: ['b'], clearings: [recipe('/y')] } });
    expect(scenarioEntry('s3', learned, 't')).toMatchObject({ sampleId: 's3', lines: [], scenario: learned });
    expect(scenarioEntry('s3', learnedSince(after, after), 't')).toBeUndefined();
  });
});
