import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { emptyUsage } from '../../lib/llm/types.ts';
import type { Snapshot, SnapshotElement } from '../../lib/perception/types.ts';
import type { RecordedCommand } from '../../lib/scenarios/commands.ts';
import { compileScenario } from '../../lib/scenarios/compile.ts';
import {
  type CoordinateCommand,
  coordinatesOffered,
  describeCoordinate,
  isFailedAttempt,
  percentToPoint,
  refuseCoordinate,
} from '../../lib/scenarios/coordinate-fallback.ts';
import type { CommandResult } from '../../lib/scenarios/decision.ts';
import type { ScenarioResult } from '../../lib/scenarios/run-scenario.ts';
import {
  decisionSchemaFor,
  elementMap,
  lookVerdict,
  SCREENSHOT_BUDGET_PER_STEP,
  somPageText,
} from '../../lib/scenarios/som-mode.ts';
import { parseScenario } from '../../lib/scenarios/spec.ts';

const el = (
  id: number,
  role: string,
  name: string,
  extra: Partial<SnapshotElement> = {},
): SnapshotElement => ({
  id,
  role,
  name,
  tag: 'button',
  frame: 0,
  locator: { xpath: `/html/body/x[${id}]`, role, name },
  box: { x: 10, y: 10 * id, width: 80, height: 20 },
  inViewport: true,
  interactive: true,
  states: {},
  ...extra,
});

const snap = (elements: SnapshotElement[], tree: string) =>
  ({ url: 'http://a.test/', title: 'A', tree, elements, urls: {}, frames: [] }) as unknown as Snapshot;

const click = (x: number, y: number, extra: Partial<CoordinateCommand> = {}): CoordinateCommand => ({
  kind: 'coordinate',
  action: 'click',
  x,
  y,
  ...extra,
});

describe('coordinate fallback rules', () => {
  it('offers coordinates only from the third failed attempt of a step', () => {
    expect([0, 1, 2, 3, 4].map(coordinatesOffered)).toEqual([false, false, false, true, true]);
  });

  it('counts an iteration with a command that ran and failed, not one whose commands were only skipped', () => {
    const r = (ok: boolean, skipped?: boolean): CommandResult => ({
      command: { kind: 'action', action: 'click', id: 1 },
      ok,
      message: '',
      ...(skipped ? { skipped } : {}),
    });
    expect(isFailedAttempt([r(true), r(false)])).toBe(true);
    expect(isFailedAttempt([r(true), r(false, true)])).toBe(false);
    expect(isFailedAttempt([])).toBe(false);
  });

  it('turns percent of the viewport into CSS pixels at 3 decimals, clamped inside it', () => {
    const p = percentToPoint(11.71875, 25, { width: 1280, height: 720 });
    expect(p.x).toBeCloseTo(150.0032, 6);
    expect(p.y).toBe(180);
    expect(percentToPoint(100, 100, { width: 1280, height: 720 })).toEqual({ x: 1279, y: 719 });
    expect(percentToPoint(-5, 50, { width: 1000, height: 500 })).toEqual({ x: 0, y: 250 });
  });

  it('refuses a coordinate command without a reason in script mode, and incomplete drags and types', () => {
    expect(refuseCoordinate(click(10, 10), { scriptMode: false })).toBeUndefined();
    expect(refuseCoordinate(click(10, 10), { scriptMode: true })).toContain('give "reason"');
    expect(
      refuseCoordinate(click(10, 10, { reason: 'drawn on a canvas' }), { scriptMode: true }),
    ).toBeUndefined();
    expect(refuseCoordinate(click(1, 1, { action: 'drag', toX: 5 }), { scriptMode: false })).toContain('toY');
    expect(refuseCoordinate(click(1, 1, { action: 'type' }), { scriptMode: false })).toContain('value');
  });

  it('describes commands with 3 decimals', () => {
    expect(describeCoordinate(click(11.7, 25))).toBe('click at (11.700%, 25.000%)');
    expect(describeCoordinate(click(1, 2, { action: 'drag', toX: 3, toY: 4 }))).toBe(
      'drag (1.000%, 2.000%) → (3.000%, 4.000%)',
    );
    expect(describeCoordinate(click(5, 5, { action: 'scroll', value: 'up' }))).toBe(
      'scroll up at (5.000%, 5.000%)',
    );
  });
});

describe('set-of-marks mode', () => {
  it('takes vision from the scenario, text by default, and names a bad value', () => {
    expect(parseScenario({ steps: ['a'] }).vision).toBeUndefined();
    expect(parseScenario({ steps: ['a'], vision: 'som' }).vision).toBe('som');
    expect(() => parseScenario({ steps: ['a'], vision: 'pixels' })).toThrow(/^vision: /);
  });

  it('offers look and coordinate commands in the schema only when they are offered', () => {
    const json = (o: { looks: boolean; coordinates: boolean }) =>
      JSON.stringify(z.toJSONSchema(decisionSchemaFor(o), { io: 'input' }));
    const plain = json({ looks: false, coordinates: false });
    expect(plain).not.toContain('"look"');
    expect(plain).not.toContain('"coordinate"');
    expect(json({ looks: true, coordinates: false })).toContain('"look"');
    const both = json({ looks: true, coordinates: true });
    expect(both).toContain('"coordinate"');
    expect(both).toContain('refresh_som_markers');
    // A look or a coordinate command is refused by the plain schema.
    const cmd = { kind: 'coordinate', action: 'click', x: 1, y: 1 };
    const decision = {
      reasoning: '',
      status: 'continue',
      commands: [cmd],
      noteToFutureSelf: '',
      experiences: [],
    };
    expect(decisionSchemaFor({ looks: false, coordinates: false }).safeParse(decision).success).toBe(false);
    expect(decisionSchemaFor({ looks: false, coordinates: true }).safeParse(decision).success).toBe(true);
  });

  it('lists marked elements in the viewport, and keeps only the text lines of the outline', () => {
    const s = snap(
      [
        el(1, 'button', 'Add red mug'),
        el(2, 'textbox', 'Search', { value: 'mugs', states: { disabled: true } }),
        el(3, 'link', 'Terms of sale', { inViewport: false }),
      ],
      '[1] button: Add red mug\nheading: Mugs\n  Sturdy, 300 ml.\n[3] link: Terms of sale',
    );
    expect(elementMap(s)).toBe('[1] button: Add red mug\n[2] textbox: Search value="mugs" disabled');
    const text = somPageText(s);
    expect(text).toContain('heading: Mugs\nSturdy, 300 ml.');
    expect(text).not.toContain('Terms of sale');
    expect(somPageText(snap([], 'x'.repeat(50)), 20)).toContain('more text below');
  });

  it('sends a picture asked for until the step budget is spent; a picture already in the conversation is a loop', () => {
    const inConversation = new Set(['a']);
    expect(lookVerdict({ asked: 0 }, 'b', inConversation)).toBe('send');
    expect(lookVerdict({ asked: 0 }, 'a', inConversation)).toBe('repeat');
    expect(lookVerdict({ asked: SCREENSHOT_BUDGET_PER_STEP }, undefined, inConversation)).toBe('budget');
    expect(lookVerdict({ asked: 1, closed: 'loop' }, 'b', inConversation)).toBe('closed');
  });
});

describe('compiling coordinate steps', () => {
  const result = (recorded: RecordedCommand[]): ScenarioResult => ({
    status: 'passed',
    steps: [{ index: 0, do: 'Press Save', status: 'complete', iterations: 5, verifications: [] }],
    iterations: [],
    recorded,
    usage: emptyUsage(),
    startUrl: 'http://a.test/board',
    url: 'http://a.test/board',
    memory: {},
  });
  const locator = { xpath: '/html/body/div[2]', role: 'generic', name: 'Save' };
  const recorded = (byLocator: boolean): RecordedCommand => ({
    kind: 'action',
    step: 0,
    command: { kind: 'action', action: 'click', description: 'click Save' },
    action: { method: 'click', target: { locator }, description: 'click Save' },
    urlBefore: 'http://a.test/board',
    urlAfter: 'http://a.test/board',
    point: {
      x: 10,
      y: 20,
      element: byLocator ? 'generic "Save"' : 'canvas "Toolbar"',
      tag: byLocator ? 'div' : 'canvas',
      within: { fx: 0.25, fy: 0.5 },
      positional: !byLocator,
      byLocator,
    },
  });

  it('pins a coordinate click on an ordinary element by the locator it was recorded with', () => {
    const { workflow, notCarried } = compileScenario(result([recorded(true)]));
    const pinned = workflow.nodes[1]!;
    expect(pinned.type).toBe('browser_action');
    expect(JSON.stringify(pinned)).toContain('/html/body/div[2]');
    expect(notCarried).toEqual([]);
  });

  it('replays a point on a drawn surface through a model told the element and the place inside it', () => {
    const { workflow, notCarried } = compileScenario(result([recorded(false)]));
    expect(workflow.nodes.map((n) => n.type)).toEqual(['browser_action', 'browser_ai_action']);
    const node = workflow.nodes[1]!;
    expect(node.type === 'browser_ai_action' && node.config.instruction).toBe(
      'click Save: on the canvas "Toolbar" at 25% of its width and 50% of its height',
    );
    expect(notCarried[0]).toContain('replays through a model');
  });
});
