import { describe, expect, it } from 'vitest';
import type { RecordedCommand } from '../../lib/scenarios/commands.ts';
import { toAction } from '../../lib/scenarios/commands.ts';
import { rulesFor } from '../../lib/scenarios/compile.ts';
import { type CommandResult, settleStatus } from '../../lib/scenarios/decision.ts';
import { addClearing, addExperiences, clearingsFor, experiencesFor } from '../../lib/scenarios/memory.ts';
import { needsVerification, parseScenario, parseScenarioText } from '../../lib/scenarios/spec.ts';
import { judgeVerification } from '../../lib/scenarios/verify.ts';

const ok: CommandResult = {
  command: { kind: 'action', action: 'click', id: 1 },
  ok: true,
  message: 'clicked',
};
const failed: CommandResult = { ...ok, ok: false, message: 'could not click [1]' };
const settle = (over: Partial<Parameters<typeof settleStatus>[0]>) =>
  settleStatus({
    status: 'complete',
    results: [ok],
    mustVerify: false,
    verifiedInStep: 0,
    iteration: 1,
    maxIterations: 5,
    ...over,
  });

describe('scenario rules', () => {
  it('refuses complete after a failed command or without a verification on a step that must be proved; caps iterations', () => {
    expect(settle({})).toEqual({ status: 'complete' });
    expect(settle({ results: [ok, failed] })).toEqual({
      status: 'continue',
      refused: '"complete" refused: a command failed (could not click [1])',
    });
    expect(settle({ mustVerify: true }).status).toBe('continue');
    expect(settle({ mustVerify: true }).refused).toMatch(/at least one verification/);
    expect(settle({ mustVerify: true, verifiedInStep: 1 })).toEqual({ status: 'complete' });
    expect(settle({ status: 'continue', iteration: 4 })).toEqual({ status: 'continue' });
    expect(settle({ status: 'continue', iteration: 5 })).toEqual({
      status: 'stuck',
      refused: 'no completion after 5 iterations',
    });
    expect(settle({ results: [failed], iteration: 5 }).status).toBe('stuck');
    expect(settle({ status: 'infeasible' })).toEqual({ status: 'infeasible' });
  });

  it('reads step files: YAML or JSON, bare steps or { do, expect }, errors naming the field', () => {
    const yaml = parseScenarioText(
      '- Open the settings\n- do: Check dark mode is on\n  expect: the page is dark\n',
      'a.yaml',
    );
    expect(yaml.steps).toEqual([
      { do: 'Open the settings' },
      { do: 'Check dark mode is on', expect: 'the page is dark' },
    ]);
    expect(parseScenarioText('{"steps":["Go"]}', 'b.json').steps).toEqual([{ do: 'Go' }]);
    expect(() => parseScenarioText('steps: [', 'c.yaml')).toThrow(/^c\.yaml: not valid YAML or JSON/);
    expect(() => parseScenarioText('steps:\n  - do: Go\n    then: x\n', 'd.yaml')).toThrow(
      /^d\.yaml: steps\.0/,
    );
    expect(() => parseScenario({ steps: [] })).toThrow('steps: needs at least one step');
    expect(needsVerification({ do: 'Verify the total is 3' })).toBe(true);
    expect(needsVerification({ do: 'Make sure the cart is empty' })).toBe(true);
    expect(needsVerification({ do: 'Open checkout', expect: 'the checkout page' })).toBe(true);
    expect(needsVerification({ do: 'Open the checkout page' })).toBe(false);
  });

  it('judges verifications from what the page showed', () => {
    const el = {
      text: ' Total:  3 items ',
      visible: true,
      enabled: true,
      classes: ['a'],
      attributes: { role: 'status' },
    };
    expect(judgeVerification('textContains', { element: el }, 'Total: 3').ok).toBe(true);
    expect(judgeVerification('textEquals', { element: el }, 'Total: 3 items').ok).toBe(true);
    expect(judgeVerification('textEquals', { element: el }, 'Total: 3')).toMatchObject({
      ok: false,
      actual: 'Total: 3 items',
    });
    expect(judgeVerification('hasAttribute', { element: el }, 'role=status').ok).toBe(true);
    expect(judgeVerification('hasAttribute', { element: el }, 'role=alert').ok).toBe(false);
    expect(judgeVerification('isChecked', { element: el }, undefined)).toMatchObject({
      ok: false,
      actual: 'not checkable',
    });
    expect(judgeVerification('isHidden', { absent: true }, undefined).ok).toBe(true);
    expect(judgeVerification('isVisible', { absent: true }, undefined).ok).toBe(false);
    expect(judgeVerification('countGreaterThan', { count: 3 }, '2').ok).toBe(true);
    expect(judgeVerification('countLessThan', { count: 3 }, 'three').message).toMatch(/whole number/);
    expect(judgeVerification('textContains', { element: el }, undefined).message).toBe(
      'textContains: needs "expected"',
    );
  });

  it('turns commands into typed actions and verifications into replayable selectors', () => {
    expect(toAction({ kind: 'action', action: 'type', value: 'x' }, { id: 3 })).toEqual({
      method: 'fill',
      target: { id: 3 },
      args: ['x'],
    });
    expect(toAction({ kind: 'action', action: 'click' }, undefined)).toEqual({
      error: 'click needs "id" (an element of the outline)',
    });
    expect(toAction({ kind: 'action', action: 'goto' }, undefined)).toEqual({ error: 'goto needs "value"' });
    const v = (command: Extract<RecordedCommand, { kind: 'verify' }>['command'], css?: string) =>
      rulesFor({ kind: 'verify', step: 0, command, ok: true, actual: '', url: '', ...(css ? { css } : {}) });
    expect(v({ kind: 'verify', check: 'countEquals', selector: 'li', expected: '2' })).toEqual([
      { type: 'element_exists', selector: ':nth-match(li, 2)' },
      { type: 'element_absent', selector: ':nth-match(li, 3)' },
    ]);
    expect(v({ kind: 'verify', check: 'isChecked', id: 4 }, '#agree')).toEqual([
      { type: 'element_exists', selector: '#agree:checked' },
    ]);
    expect(v({ kind: 'verify', check: 'textContains', expected: 'Saved "ok"' })).toEqual([
      { type: 'element_exists', selector: 'body:has-text("Saved \\"ok\\"")' },
    ]);
    expect(v({ kind: 'verify', check: 'isVisible', id: 4 })).toBe('its element has no stable CSS selector');
    expect(v({ kind: 'verify', check: 'valueEquals', id: 4, expected: '%pw%' }, '#p')).toBe(
      'it compares with a secret',
    );
  });

  it('keeps experiences and blocker clearings per domain, newest last, without duplicates', () => {
    let m = addExperiences({}, 'https://shop.test/a', ['search needs Enter', ' ']);
    m = addExperiences(m, 'https://shop.test/b', ['cart is top right', 'search needs Enter']);
    expect(experiencesFor(m, 'https://shop.test/x')).toEqual(['cart is top right', 'search needs Enter']);
    expect(experiencesFor(m, 'https://other.test/')).toEqual([]);
    const recipe = {
      description: 'wall',
      commands: [
        { action: 'click' as const, locator: { xpath: '/html/body/div/button', role: 'button', name: 'Go' } },
      ],
    };
    m = addClearing(addClearing(m, 'https://shop.test/', recipe), 'https://shop.test/', {
      ...recipe,
      description: 'wall again',
    });
    expect(clearingsFor(m, 'https://shop.test/').map((c) => c.description)).toEqual(['wall again']);
  });
});
