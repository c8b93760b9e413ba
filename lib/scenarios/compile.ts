/**
 * A passed scenario → a workflow that replays it with zero tokens, through lib/workflows' own
 * compiler: the recorded actions become act records for `compileActs` (pinned nodes with locator
 * candidates and post-conditions), and each passed verification becomes a `browser_query` validate
 * node placed where it ran, written as Playwright selectors (`:visible`, `:checked`, `:has-text()`,
 * `:nth-match()` for counts). A verification that no selector can state (a field's value checked
 * apart from its own fill, an element with no stable CSS) is listed in `notCarried`, never dropped
 * silently.
 */
import { emptyUsage } from '../llm/types.ts';
import type { ActResult } from '../ops/types.ts';
import { type ActRecord, CompileError, compileActs } from '../workflows/compile.ts';
import { Aliases, InputLifter, navigateNode } from '../workflows/compile-steps.ts';
import { type Workflow, type WorkflowNode, WorkflowSchema } from '../workflows/schema.ts';
import type { RecordedCommand } from './commands.ts';
import type { ScenarioResult } from './run-scenario.ts';

export interface CompiledScenario {
  workflow: Workflow;
  /** Verifications the workflow does not check, each with why. */
  notCarried: string[];
}

/** Methods `compileActs` pins; the rest are handled here (back) or were only looking around. */
const PINNED = new Set(['click', 'dblclick', 'fill', 'type', 'select', 'check', 'uncheck', 'press', 'goto']);

type RecordedAction = Extract<RecordedCommand, { kind: 'action' }>;

/** A coordinate command whose element's locator alone would not redo it (a point on a canvas, a drag). */
const pointOnly = (r: RecordedAction) => r.point !== undefined && !r.point.byLocator;

const pinnable = (r: RecordedAction) =>
  !pointOnly(r) &&
  (r.action.method === 'goto' ||
    (PINNED.has(r.action.method) && !!r.action.target && 'locator' in r.action.target));

/**
 * A coordinate command on a drawn surface replays through a model told the element and the place
 * inside it: clicking the canvas's centre by locator would press whatever is drawn there. Pure.
 */
function pointNode(r: RecordedAction, alias: string): WorkflowNode {
  const p = r.point!;
  const inside = p.within
    ? ` at ${Math.round(p.within.fx * 100)}% of its width and ${Math.round(p.within.fy * 100)}% of its height`
    : '';
  const what = r.command.description ?? r.command.action;
  return {
    alias,
    description: `${what} (recorded by coordinates on ${p.element})`,
    type: 'browser_ai_action',
    config: {
      action: 'act',
      instruction: `${what}: on the ${p.tag} ${p.element.startsWith(p.tag) ? p.element.slice(p.tag.length).trim() : p.element}${inside}`,
    },
  };
}

const quote = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

type Rule = { type: 'element_exists' | 'element_absent'; selector: string };

/** A verification as validate rules over Playwright selectors; a string says why it cannot be. Pure. */
export function rulesFor(v: Extract<RecordedCommand, { kind: 'verify' }>): Rule[] | string {
  const c = v.command;
  const want = c.expected ?? '';
  if (/%[A-Za-z_][\w.-]*%/.test(want)) return 'it compares with a secret';
  if (c.check === 'countEquals' || c.check === 'countGreaterThan' || c.check === 'countLessThan') {
    const n = Number(want);
    if (!c.selector || !Number.isInteger(n) || n < 0) return 'no selector or count';
    const nth = (k: number) => `:nth-match(${c.selector}, ${k})`;
    if (c.check === 'countEquals')
      return [
        ...(n > 0 ? [{ type: 'element_exists' as const, selector: nth(n) }] : []),
        { type: 'element_absent', selector: nth(n + 1) },
      ];
    if (c.check === 'countGreaterThan') return [{ type: 'element_exists', selector: nth(n + 1) }];
    return n > 0 ? [{ type: 'element_absent', selector: nth(n) }] : 'a count below 0';
  }
  const pageWide = c.id === undefined && !c.selector;
  const sel = pageWide ? 'body' : v.css;
  if (!sel) return 'its element has no stable CSS selector';
  const exists = (s: string): Rule[] => [{ type: 'element_exists', selector: s }];
  switch (c.check) {
    case 'textContains':
      return exists(`${sel}:has-text(${quote(want)})`);
    case 'textEquals':
      return exists(`${sel}:text-is(${quote(want)})`);
    case 'isVisible':
      return exists(`${sel}:visible`);
    case 'isHidden':
      return [{ type: 'element_absent', selector: `${sel}:visible` }];
    case 'isEnabled':
      return exists(`${sel}:enabled`);
    case 'isDisabled':
      return exists(`${sel}:disabled`);
    case 'isChecked':
      return exists(`${sel}:checked`);
    case 'isUnchecked':
      return exists(`${sel}:not(:checked)`);
    case 'hasClass':
      return /^[\w-]+$/.test(want) ? exists(`${sel}.${want}`) : 'an unusual class name';
    case 'hasAttribute': {
      const at = want.indexOf('=');
      const name = (at < 0 ? want : want.slice(0, at)).trim();
      if (!/^[\w:-]+$/.test(name)) return 'an unusual attribute name';
      return exists(at < 0 ? `${sel}[${name}]` : `${sel}[${name}=${quote(want.slice(at + 1))}]`);
    }
    default:
      return 'a field value is not visible to a selector';
  }
}

const actResult = (r: Extract<RecordedCommand, { kind: 'action' }>): ActResult => ({
  success: true,
  message: r.command.description ?? r.command.action,
  actionDescription: r.command.description ?? r.command.action,
  actions: [r.action],
  usage: emptyUsage(),
  resolvedBy: 'llm',
  url: r.urlAfter,
  ms: 0,
});

export function compileScenario(
  result: ScenarioResult,
  opts: { name?: string; input?: Record<string, string> } = {},
): CompiledScenario {
  if (result.status !== 'passed')
    throw new CompileError(
      `the scenario did not pass (status ${result.status}${result.failedStep ? ` at step ${result.failedStep}` : ''}); only a passed scenario compiles`,
    );
  const pinned = result.recorded.filter(
    (r): r is Extract<RecordedCommand, { kind: 'action' }> => r.kind === 'action' && pinnable(r),
  );
  const acts: ActRecord[] = pinned.map((r) => ({
    instruction: r.command.description?.trim() || result.steps[r.step]!.do,
    result: actResult(r),
  }));
  const name = opts.name ?? `scenario: ${result.steps.map((s) => s.do).join(' / ')}`.slice(0, 200);
  // compileActs pins one node per act after its start node; with no acts, only the start page.
  const base = acts.length
    ? compileActs(acts, { startUrl: result.startUrl, ...(opts.input ? { input: opts.input } : {}), name })
    : undefined;
  const lifter = new InputLifter(opts.input ?? {});
  const start =
    base?.nodes[0] ?? navigateNode('open_start_page', lifter.url(result.startUrl), 'open the start page');
  const aliases = new Aliases();
  for (const n of base?.nodes ?? [start]) aliases.make(n.alias);
  const nodes: WorkflowNode[] = [start];
  const notCarried: string[] = [];
  let next = 1;
  for (const r of result.recorded) {
    if (r.kind === 'action') {
      if (pinnable(r)) nodes.push(base!.nodes[next++]!);
      else if (pointOnly(r)) {
        nodes.push(pointNode(r, aliases.make(`point_${r.point!.tag}`)));
        notCarried.push(
          `step ${r.step + 1}: ${r.command.description ?? r.command.action} on ${r.point!.element} replays through a model (browser_ai_action): its locator alone cannot say where inside it`,
        );
      } else if (r.action.method === 'press')
        nodes.push({
          alias: aliases.make(`press_${r.action.args?.[0] ?? 'key'}`),
          description: `press ${r.action.args?.[0] ?? 'Enter'}`,
          type: 'browser_action',
          config: { action: 'keypress', key: r.action.args?.[0] ?? 'Enter' },
        });
      else if (r.action.method === 'back')
        nodes.push({
          alias: aliases.make('go_back'),
          description: 'go back',
          type: 'browser_action',
          config: { action: 'back' },
        });
      continue;
    }
    const rules = rulesFor(r);
    const what = `step ${r.step + 1}: ${r.command.check}${r.command.expected !== undefined ? ` "${r.command.expected}"` : ''}`;
    if (typeof rules === 'string') {
      notCarried.push(`${what} (${rules})`);
      continue;
    }
    nodes.push({
      alias: aliases.make(`verify_${r.command.check}`),
      description: r.command.description ?? what,
      type: 'browser_query',
      config: {
        method: 'validate',
        rules: rules.map((x) => ({ ...x, description: what })),
        onFailure: 'stop_workflow',
      },
    });
  }
  const got = WorkflowSchema.safeParse({
    name,
    version: 1,
    inputs: base?.inputs ?? lifter.inputs,
    nodes,
    source: { kind: 'scenario', url: result.startUrl },
  });
  if (!got.success)
    throw new CompileError(
      `the compiled workflow is not valid: ${got.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return { workflow: got.data, notCarried };
}
