/**
 * A workflow document checked whole: the schema per node, then what only the whole can tell —
 * aliases unique across every nesting level, templates that name something that exists by then,
 * expressions that parse, secrets only where a value is typed into the page. Every problem is named
 * by node alias and field, all of them at once.
 */
import type { JsonObject } from '../store/ports.ts';
import { parseExpression } from './expressions.ts';
import { type Workflow, type WorkflowNode, WorkflowSchema } from './schema.ts';
import { templatePaths } from './templates.ts';

export interface WorkflowIssue {
  /** The node's alias, when the problem is in a node. */
  alias?: string;
  /** Where, from the document's root (`nodes.2.config.target.candidates`). */
  field: string;
  message: string;
}

export class WorkflowError extends Error {
  override name = 'WorkflowError';
  constructor(readonly issues: WorkflowIssue[]) {
    super(`workflow: ${issues.map(describeIssue).join('; ')}`);
  }
}

export const describeIssue = (i: WorkflowIssue): string =>
  `${i.field}${i.alias ? ` (${i.alias})` : ''}: ${i.message}`;

const SECRET = /%[A-Za-z_][\w.-]*%/;
/** Fields whose text is typed into the page: the only places a `%secret%` may stand. */
const TYPED_FIELDS = new Set(['value', 'text']);
/** Fields that hold JSONata, not templates. */
const EXPRESSION_FIELDS = new Set(['expression', 'when', 'over']);

/** The alias of the node a zod path points into (`nodes.3.config…` → nodes[3]). */
function aliasAt(raw: unknown, path: (string | number)[]): string | undefined {
  let cur: unknown = raw;
  let alias: string | undefined;
  for (const part of path) {
    if (cur === null || typeof cur !== 'object') break;
    cur = (cur as Record<string | number, unknown>)[part];
    if (
      cur &&
      typeof cur === 'object' &&
      !Array.isArray(cur) &&
      typeof (cur as { alias?: unknown }).alias === 'string'
    )
      alias = (cur as { alias: string }).alias;
  }
  return alias;
}

interface Walk {
  issues: WorkflowIssue[];
  seen: Set<string>;
  /** Declared input names and `url` (the sample's URL, always given): `{{inputs.x}}` must name one. */
  inputs: Set<string>;
}

/** Names a template root may use at this point: inputs, context, earlier aliases, enclosing `as`. */
function checkNode(node: WorkflowNode, path: string, known: Set<string>, w: Walk): void {
  const at = (field: string, message: string) =>
    w.issues.push({ alias: node.alias, field: `${path}.${field}`, message });
  if (w.seen.has(node.alias))
    at('alias', `"${node.alias}" is used by another node; aliases are unique across the workflow`);
  w.seen.add(node.alias);
  const visit = (value: unknown, field: string, key: string) => {
    if (typeof value === 'string') {
      if (EXPRESSION_FIELDS.has(key) || (node.type === 'context' && field.startsWith('config.set.'))) {
        try {
          parseExpression(value);
        } catch (err) {
          at(field, `not a valid JSONata expression: ${(err as Error).message}`);
        }
        return;
      }
      if (SECRET.test(value) && !TYPED_FIELDS.has(key))
        at(
          field,
          'a %secret% may only be typed into the page (a fill value or typed text), never sent to a model',
        );
      for (const p of templatePaths(value)) {
        const [root, name] = p.split('.') as [string, string | undefined];
        if (root === 'inputs' && (!name || !w.inputs.has(name)))
          at(field, `{{${p}}} names no declared input (declared: ${[...w.inputs].join(', ') || 'none'})`);
        else if (!known.has(root))
          at(field, `{{${p}}} names "${root}", which is no input, context, earlier node or loop item here`);
      }
      return;
    }
    if (Array.isArray(value)) for (const [i, v] of value.entries()) visit(v, `${field}.${i}`, key);
    else if (value && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) {
        if (k === 'nodes' || k === 'otherwise' || k === 'fallback' || k === 'branches') continue;
        visit(v, `${field}.${k}`, k);
      }
  };
  visit(node.config, 'config', 'config');
  const inner = (list: WorkflowNode[], listPath: string, scope: Set<string>) =>
    checkList(list, listPath, scope, w);
  switch (node.type) {
    case 'iterate':
      inner(node.config.nodes, `${path}.config.nodes`, new Set([...known, node.config.as]));
      break;
    case 'route':
      for (const [i, b] of node.config.branches.entries())
        inner(b.nodes, `${path}.config.branches.${i}.nodes`, new Set(known));
      if (node.config.otherwise) inner(node.config.otherwise, `${path}.config.otherwise`, new Set(known));
      break;
    case 'handle':
      inner(node.config.nodes, `${path}.config.nodes`, new Set(known));
      if (node.config.fallback)
        inner(node.config.fallback, `${path}.config.fallback`, new Set([...known, node.alias]));
      break;
    case 'group':
      inner(node.config.nodes, `${path}.config.nodes`, new Set(known));
      break;
    default:
      break;
  }
}

function checkList(list: WorkflowNode[], path: string, known: Set<string>, w: Walk): void {
  list.forEach((node, i) => {
    checkNode(node, `${path}.${i}`, known, w);
    // A node's output is there for the nodes after it (and a group's inner aliases after the group).
    known.add(node.alias);
    for (const a of innerAliases(node)) known.add(a);
  });
}

/** Aliases inside a control node: their outputs stay readable after it. */
export function innerAliases(node: WorkflowNode): string[] {
  const lists: WorkflowNode[][] =
    node.type === 'iterate' || node.type === 'group'
      ? [node.config.nodes]
      : node.type === 'route'
        ? [...node.config.branches.map((b) => b.nodes), node.config.otherwise ?? []]
        : node.type === 'handle'
          ? [node.config.nodes, node.config.fallback ?? []]
          : [];
  return lists.flat().flatMap((n) => [n.alias, ...innerAliases(n)]);
}

export function validateWorkflow(
  value: unknown,
): { ok: true; workflow: Workflow } | { ok: false; issues: WorkflowIssue[] } {
  const parsed = WorkflowSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => {
      const alias = aliasAt(value, i.path as (string | number)[]);
      return {
        ...(alias ? { alias } : {}),
        field: i.path.map(String).join('.') || '(workflow)',
        message: i.message,
      };
    });
    return { ok: false, issues };
  }
  const w: Walk = {
    issues: [],
    seen: new Set(),
    inputs: new Set(['url', ...Object.keys(parsed.data.inputs)]),
  };
  const known = new Set(['inputs', 'context']);
  checkList(parsed.data.nodes, 'nodes', known, w);
  for (const [name, input] of Object.entries(parsed.data.inputs))
    if (input.required && input.default !== undefined)
      w.issues.push({
        field: `inputs.${name}`,
        message: 'an input is either required or has a default, not both',
      });
  return w.issues.length ? { ok: false, issues: w.issues } : { ok: true, workflow: parsed.data };
}

/** Validates or throws a `WorkflowError` listing every problem. */
export function parseWorkflow(value: unknown): Workflow {
  const r = validateWorkflow(value);
  if (!r.ok) throw new WorkflowError(r.issues);
  return r.workflow;
}

/** Input values for a run: the given ones typed as declared, the rest from defaults; missing ones named. */
export function resolveInputs(workflow: Workflow, given: JsonObject): JsonObject {
  const out: JsonObject = {};
  const issues: WorkflowIssue[] = [];
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const raw = given[name] ?? (spec.default as JsonObject[string] | undefined);
    if (raw === undefined || raw === null) {
      if (spec.required || spec.default === undefined)
        issues.push({ field: `inputs.${name}`, message: 'no value given and no default' });
      continue;
    }
    if (spec.type === 'number') {
      const n = typeof raw === 'number' ? raw : Number(raw);
      if (!Number.isFinite(n))
        issues.push({ field: `inputs.${name}`, message: `expected a number, got ${JSON.stringify(raw)}` });
      else out[name] = n;
    } else if (spec.type === 'boolean') {
      if (typeof raw === 'boolean') out[name] = raw;
      else if (raw === 'true' || raw === 'false') out[name] = raw === 'true';
      else
        issues.push({
          field: `inputs.${name}`,
          message: `expected true or false, got ${JSON.stringify(raw)}`,
        });
    } else if (spec.type === 'string') out[name] = typeof raw === 'string' ? raw : JSON.stringify(raw);
    else out[name] = raw;
  }
  // Undeclared values are passed through (a run's sample columns, the url).
  for (const [k, v] of Object.entries(given)) if (!(k in out) && !(k in workflow.inputs)) out[k] = v;
  if (issues.length) throw new WorkflowError(issues);
  return out;
}
