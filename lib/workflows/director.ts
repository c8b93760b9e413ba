/**
 * The director (issue 23 item 5): a model writes a workflow document from a plain-language
 * description. One call answers the document in the workflow's own JSON Schema; the whole-document
 * validator checks it, and when it does not hold, ONE repair call names every problem (node alias and
 * field). A plan that still does not validate is refused with every problem listed — never saved.
 *
 * The prompt asks for "deterministic navigation, intelligent processing": navigation, waits, checks
 * and data shaping as node types that never call a model, model nodes only where the page or the data
 * needs judgement. Prompt building and answer parsing are pure (unit-tested); `planWorkflow` is the
 * thin shell that talks to the model.
 */
import { z } from 'zod';
import {
  addUsage,
  type ChatMessage,
  emptyUsage,
  type LlmClient,
  LlmError,
  type Usage,
} from '../llm/types.ts';
import { AI_NODE_TYPES, type Workflow, type WorkflowNode, workflowJsonSchema } from './schema.ts';
import { describeIssue, validateWorkflow, type WorkflowIssue } from './validate.ts';

/** Example values of inputs the caller already knows the workflow takes (per-URL values of a run). */
export type PlanInputs = Record<string, string | number | boolean>;

export interface PlanOptions {
  llm: LlmClient;
  /** The page the workflow starts on (it becomes `{{inputs.url}}`). */
  url?: string;
  inputs?: PlanInputs;
  signal?: AbortSignal;
}

export interface Plan {
  workflow: Workflow;
  /** Both calls when a repair was needed. */
  usage: Usage;
  /** The first answer did not validate; the repair did. */
  repaired: boolean;
}

/** The model's plan never validated: every problem of its last answer, and what the calls cost. */
export class PlanError extends Error {
  override name = 'PlanError';
  constructor(
    readonly issues: WorkflowIssue[],
    readonly usage: Usage,
  ) {
    super(`the model's workflow is not valid after one repair: ${issues.map(describeIssue).join('; ')}`);
  }
}

// ── Pure: the prompt ──────────────────────────────────────────────────────────────────────────

const NODE_GUIDE = [
  'browser_action (never a model): navigate {url}, wait {duration | text | selector}, back, forward, refresh, keypress {key}, screenshot, openNewTab / switchTab, listTabs, getCurrentTab; with a known CSS selector only: click / fill {value} / select {value} / check / press {key} on target {candidates: [{kind:"css", value}], instruction}',
  'browser_query (never a model): method "validate" with rules [{type: element_exists | element_absent, selector}] and onFailure stop_workflow | continue_with_error',
  'transform (never a model): a JSONata expression over {inputs, context, <alias>: output}',
  'context (never a model): set {name: JSONata expression} kept as context.name',
  'iterate {over: JSONata array, as, concurrency, nodes}, route {branches: [{when: JSONata, nodes}], otherwise}, handle {nodes, retry, fallback}, group {nodes}: control flow, never a model themselves',
  'browser_ai_action (model): action click | type | act with an instruction in words (and text for type) — for elements whose selector you do not know',
  'browser_ai_query (model): method extract {instruction, schema}, observe {instruction} or assess {instruction, expected}',
  'cognition (model): reasoning over data {instruction, input, schema}',
  'agent (model): a sub-goal the agent carries out step by step {goal, maxSteps} — the last resort, for open-ended tasks',
];

/** The director's standing instructions (our own words; the reference gives only the principle). */
export function directorSystem(): string {
  return [
    'You design browser automation workflows. Answer with one workflow document as JSON that follows the given schema exactly, and nothing else.',
    '',
    'The rule: deterministic navigation, intelligent processing. A node that never calls a model is free, fast and repeatable; a model node costs tokens on every page it runs on. So:',
    '- Move around with browser_action (navigate, wait, keypress, tabs). The first node navigates to {{inputs.url}} unless the task says otherwise.',
    '- Check page state with browser_query validate rules when a CSS selector is known, and shape or compute data with transform (JSONata), not with a model.',
    '- Use browser_ai_action only to act on an element you cannot name by a selector; browser_ai_query to read data whose markup you do not know or to judge what a page shows; cognition only when data needs understanding (classify, summarise, compare meaning); agent only for open-ended sub-goals.',
    '- Never invent CSS selectors for pages you have not seen: where no selector was given, use an AI node with a precise instruction instead.',
    '',
    'Node types:',
    ...NODE_GUIDE.map((g) => `- ${g}`),
    '',
    'Rules the document must keep:',
    '- every node has a unique snake_case alias (a-z, 0-9, _) and a short description; nested nodes too;',
    '- {{inputs.name}} only for inputs declared in "inputs" (name → {type, default?, description?}); {{inputs.url}} is always there;',
    '- {{alias.field}} only for aliases of nodes that ran before; JSONata fields (expression, when, over, context set) are written without braces;',
    '- secrets are written %name% and only in a fill value or typed text, never in an instruction;',
    '- set store_variable: true on the nodes whose output the workflow returns (usually the extraction or the final transform).',
  ].join('\n');
}

/** The user's request, with the start page and the inputs they named. */
export function directorUser(prompt: string, opts: { url?: string; inputs?: PlanInputs } = {}): string {
  const lines = [`Task: ${prompt.trim()}`];
  if (opts.url)
    lines.push(
      `Start page: ${opts.url} (use it as {{inputs.url}}; do not write the address itself into a navigate).`,
    );
  const inputs = Object.entries(opts.inputs ?? {});
  if (inputs.length)
    lines.push(
      `Inputs the workflow takes (declare each under "inputs" with its type; the values are examples):\n${inputs
        .map(([k, v]) => `- ${k} (${typeof v}): ${JSON.stringify(v)}`)
        .join('\n')}`,
    );
  lines.push('Write the workflow.');
  return lines.join('\n\n');
}

/** The repair request: every problem of the previous answer, by field and node alias. */
export function repairRequest(issues: readonly WorkflowIssue[]): string {
  return [
    `That workflow does not validate. ${issues.length} problem${issues.length === 1 ? '' : 's'}, each as field (node alias): message:`,
    ...issues.map((i) => `- ${describeIssue(i)}`),
    'Send the whole corrected workflow as one JSON document, keeping everything that was right.',
  ].join('\n');
}

// ── Pure: the answer ──────────────────────────────────────────────────────────────────────────

/**
 * The model's answer as a checked workflow. A document wrapped as `{ workflow: … }` is unwrapped
 * (models add such envelopes); `source` always says the document was planned, whatever the model put,
 * and a `staticRead` mark the model wrote is dropped.
 */
export function parsePlan(
  answer: unknown,
  opts: { url?: string } = {},
): { ok: true; workflow: Workflow } | { ok: false; issues: WorkflowIssue[] } {
  let doc = answer;
  if (
    doc &&
    typeof doc === 'object' &&
    !Array.isArray(doc) &&
    !('nodes' in doc) &&
    'workflow' in doc &&
    typeof (doc as { workflow: unknown }).workflow === 'object'
  )
    doc = (doc as { workflow: unknown }).workflow;
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    return {
      ok: false,
      issues: [{ field: '(workflow)', message: 'expected a JSON object (the workflow document)' }],
    };
  // Nor may a model say its plan reads pages without a browser: only the compile check marks that.
  const { staticRead: _claimed, ...rest } = doc as Record<string, unknown>;
  const withSource = {
    ...rest,
    source: { kind: 'plan', ...(opts.url ? { url: opts.url } : {}) },
  };
  return validateWorkflow(withSource);
}

/** Aliases of the nodes that may call a model, at any depth (what a plan will cost per page). */
export function aiAliases(nodes: readonly WorkflowNode[]): string[] {
  const out: string[] = [];
  const walk = (list: readonly WorkflowNode[]) => {
    for (const n of list) {
      if (AI_NODE_TYPES.includes(n.type)) out.push(n.alias);
      const c = n.config as {
        nodes?: WorkflowNode[];
        otherwise?: WorkflowNode[];
        fallback?: WorkflowNode[];
        branches?: { nodes: WorkflowNode[] }[];
      };
      for (const inner of [c.nodes, c.otherwise, c.fallback, ...(c.branches ?? []).map((b) => b.nodes)])
        if (Array.isArray(inner)) walk(inner);
    }
  };
  walk(nodes);
  return out;
}

// ── Shell ─────────────────────────────────────────────────────────────────────────────────────

/**
 * The reply shape: any JSON object (the validator, not the client, judges it, so the repair can name
 * every problem by alias), sent to the provider as the workflow's JSON Schema.
 */
let replySchema: z.ZodType<Record<string, unknown>> | undefined;
export function planReplySchema(): z.ZodType<Record<string, unknown>> {
  if (!replySchema) {
    const { $schema: _drop, ...schema } = workflowJsonSchema();
    replySchema = z.record(z.string(), z.unknown()).meta(schema);
  }
  return replySchema;
}

/** Usage of a failed model call (what its replies cost), so a caller can still count it. */
const spentOf = (err: unknown): Usage | undefined => (err instanceof LlmError ? err.usage : undefined);

/** Plans a workflow: one call, one repair at most. Throws `PlanError` when it never validates. */
export async function planWorkflow(prompt: string, opts: PlanOptions): Promise<Plan> {
  const { llm } = opts;
  const system = directorSystem();
  const messages: ChatMessage[] = [
    {
      role: 'user',
      content: directorUser(prompt, {
        ...(opts.url ? { url: opts.url } : {}),
        ...(opts.inputs ? { inputs: opts.inputs } : {}),
      }),
    },
  ];
  let usage = emptyUsage(llm.model);
  const ask = async () => {
    try {
      const res = await llm.generate({
        system,
        messages,
        schema: planReplySchema(),
        schemaName: 'workflow',
        schemaDescription: 'the workflow document',
        temperature: 0,
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
      usage = addUsage(usage, res.usage);
      return res.value;
    } catch (err) {
      const spent = spentOf(err);
      if (spent) (err as LlmError).usage = addUsage(usage, spent);
      throw err;
    }
  };
  const first = await ask();
  const checked = parsePlan(first, opts);
  if (checked.ok) return { workflow: checked.workflow, usage, repaired: false };
  messages.push(
    { role: 'assistant', content: JSON.stringify(first) },
    { role: 'user', content: repairRequest(checked.issues) },
  );
  const second = await ask();
  const again = parsePlan(second, opts);
  if (again.ok) return { workflow: again.workflow, usage, repaired: true };
  throw new PlanError(again.issues, usage);
}
