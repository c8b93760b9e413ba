/**
 * The agent's 12 tools as one reply shape: the model answers with reflection fields and a short list
 * of tool calls, each a member of a union keyed by `tool`. Sent as a forced tool (Anthropic) or a
 * strict JSON Schema answer (OpenAI), so there is never prose to parse. The union offered can be
 * narrowed (last step, stagnation level 3: only `done` and `fail`).
 */
import { z } from 'zod';

export const TOOL_NAMES = [
  'goto',
  'click',
  'type',
  'select_option',
  'scroll',
  'wait',
  'screenshot',
  'extract',
  'download',
  'save_progress',
  'done',
  'fail',
] as const;
/** Scenario mode adds one tool: the current scenario step is achieved, go on to the next. */
export const SCENARIO_TOOL = 'step_done' as const;
export type ToolName = (typeof TOOL_NAMES)[number] | typeof SCENARIO_TOOL;

/**
 * Tools that end a batch: what comes after them could not have seen their effect, or there is no
 * after. save_progress too (the reference's rule): the model sees what it stored before going on.
 */
export const BATCH_ENDING: ReadonlySet<ToolName> = new Set([
  'goto',
  'done',
  'fail',
  'save_progress',
  SCENARIO_TOOL,
]);
export const FINAL_TOOLS: readonly ToolName[] = ['done', 'fail'];

const id = z.number().int().describe('element id from the page outline, e.g. 12 for [12]');
const dataObject = z.record(z.string(), z.unknown());

const TOOL_SHAPES = {
  goto: z.object({ tool: z.literal('goto'), url: z.string().describe('absolute http(s) URL') }),
  click: z.object({ tool: z.literal('click'), id }),
  type: z.object({
    tool: z.literal('type'),
    id,
    text: z.string().describe('text to enter; write a secret as its %name% placeholder'),
    submit: z.boolean().optional().describe('press Enter afterwards'),
  }),
  select_option: z.object({
    tool: z.literal('select_option'),
    id,
    option: z.string().describe('visible label or value'),
  }),
  scroll: z.object({
    tool: z.literal('scroll'),
    direction: z.enum(['down', 'up', 'top', 'bottom']),
    id: id.optional().describe('scroll inside this element instead of the page'),
  }),
  wait: z.object({
    tool: z.literal('wait'),
    text: z.string().optional().describe('wait until this text is visible'),
    ms: z.number().int().min(0).max(10_000).optional(),
  }),
  screenshot: z.object({
    tool: z.literal('screenshot'),
    label: z.string().describe('short label, e.g. invoice_list'),
  }),
  extract: z.object({
    tool: z.literal('extract'),
    instruction: z.string().describe('what to read from the page'),
    schema: z.string().optional().describe('JSON Schema of the answer, as JSON text'),
  }),
  download: z.object({ tool: z.literal('download'), id }),
  save_progress: z.object({
    tool: z.literal('save_progress'),
    data: dataObject.describe('data found so far; merged into what was saved before'),
    note: z.string().describe('what this adds and what is left'),
  }),
  done: z.object({
    tool: z.literal('done'),
    data: dataObject.describe('the final result in the task schema'),
  }),
  fail: z.object({ tool: z.literal('fail'), reason: z.string() }),
  step_done: z.object({
    tool: z.literal(SCENARIO_TOOL),
    note: z.string().describe('what shows the scenario step is achieved'),
  }),
} satisfies Record<ToolName, z.ZodObject>;

export type ToolCall = { [K in ToolName]: z.infer<(typeof TOOL_SHAPES)[K]> }[ToolName];
export type ToolCallOf<K extends ToolName> = z.infer<(typeof TOOL_SHAPES)[K]>;

export interface Decision {
  evaluation_previous_step?: string | undefined;
  memory_update?: string | undefined;
  next_goal?: string | undefined;
  actions: ToolCall[];
}

const cache = new Map<string, z.ZodType<Decision>>();

/** The reply schema offering `tools` (at most `maxActions` calls). Same arguments, same object. */
export function decisionSchema(tools: readonly ToolName[], maxActions: number): z.ZodType<Decision> {
  const key = `${tools.join(',')}|${maxActions}`;
  const known = cache.get(key);
  if (known) return known;
  const members = tools.map((t) => TOOL_SHAPES[t]);
  const action =
    members.length === 1 ? members[0]! : z.union(members as unknown as [z.ZodObject, z.ZodObject]);
  const schema = z.object({
    evaluation_previous_step: z.string().optional().describe('did the last step work, and how you know'),
    memory_update: z.string().optional().describe('a fact to keep for later steps'),
    next_goal: z.string().optional().describe('what these actions are for'),
    actions: z.array(action).min(1).max(maxActions),
  }) as unknown as z.ZodType<Decision>;
  cache.set(key, schema);
  return schema;
}

/** The tool names a decision schema offers (read back from the JSON Schema sent, for tests and logs). */
export function toolsOffered(jsonSchema: unknown): string[] {
  const items = (jsonSchema as { properties?: { actions?: { items?: Record<string, unknown> } } })?.properties
    ?.actions?.items;
  if (!items) return [];
  const members = (items.anyOf ?? items.oneOf ?? [items]) as { properties?: { tool?: { const?: string } } }[];
  return members.map((m) => m.properties?.tool?.const ?? '?');
}

/** Tools that need an element id from the snapshot. */
export const needsElement = (call: ToolCall): call is Extract<ToolCall, { id: number }> =>
  'id' in call && typeof call.id === 'number';
