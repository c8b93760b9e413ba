/**
 * The planner: a plain-language request → a task spec and the sample URLs, in one structured model call.
 * The model fills a small, flat shape (fields as a list, not a JSON Schema) that every provider's
 * structured output can express; the spec is built and validated from it here. Two of its fields
 * follow the reference: `systemPrompt` (instructions every sample's agent gets in its system part)
 * and `needsDiscovery` (the request names a listing: collect the item URLs first, then fan out).
 */
import { z } from 'zod';
import type { LlmClient } from '../llm/types.ts';
import { type Sample, samplesFromList } from './samples.ts';
import { parseTaskSpec, type TaskSpec } from './task-spec.ts';

const FieldType = z.enum(['string', 'number', 'integer', 'boolean', 'string_list', 'object_list']);

export const PlanReply = z.object({
  goal: z.string().describe('what to do on every sample page, as an instruction to a browsing agent'),
  fields: z
    .array(
      z.object({
        name: z.string().describe('snake_case name of one value to return'),
        type: FieldType,
        description: z.string(),
      }),
    )
    .describe('the values each sample returns'),
  requiredFields: z.array(z.string()).describe('names from fields that must be found for success'),
  keywords: z.array(z.string()).describe('words that mark the relevant parts of a page'),
  maxSteps: z.number().int().describe('browser steps a careful agent needs per sample (1–50)'),
  expectedItems: z.number().int().nullable().describe('how many list items to collect, null if not a list'),
  samples: z
    .array(z.object({ sample_id: z.string(), url: z.string() }))
    .describe('every page to work on; sample_id is short, unique, letters/digits/_/-'),
  // The four below default (an older reply without them still plans): optional in the wire schema.
  systemPrompt: z
    .string()
    .default('')
    .describe(
      'standing instructions for every agent: what kind of site this is, where the data tends to be, what to avoid; empty if none',
    ),
  needsDiscovery: z
    .boolean()
    .default(false)
    .describe(
      'true when the request points at a listing (a list, index, search results, directory, "all members") whose item pages are the real work: their URLs are collected first',
    ),
  listingUrls: z
    .array(z.string())
    .default([])
    .describe('with needsDiscovery: the listing pages to collect item links from; else empty'),
  itemLinkPattern: z
    .string()
    .nullable()
    .optional()
    .describe('with needsDiscovery: a * glob every item URL matches (https://site/item/*), null if unsure'),
});
/** A plan reply as the model may write it (the defaulted fields may be absent). */
export type PlanReply = z.input<typeof PlanReply>;

const SYSTEM = [
  'You turn a request for web data into a plan for a fleet of browsing agents.',
  'Each agent gets one start URL (a sample) and the same goal, and returns the listed fields.',
  'Use only URLs the request names or that follow directly from it; never invent hosts.',
  'Keep the goal concrete: where to look on the page and what to return. Prefer few, well-named fields.',
  'When the request is about the items of a listing (every product in a category, all members of an org, each result of a search), set needsDiscovery, give the listing pages, and leave samples empty: the item links are collected first and each item becomes a sample.',
  'Write systemPrompt as short standing advice for every agent on this site and task.',
].join('\n');

const JSON_TYPE: Record<z.infer<typeof FieldType>, Record<string, unknown>> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  string_list: { type: 'array', items: { type: 'string' } },
  object_list: { type: 'array', items: { type: 'object' } },
};

/** The spec and samples a plan reply describes (pure; throws SpecError / SamplesError). */
export function specFromPlan(reply: PlanReply, base: { model?: string; concurrency?: number } = {}) {
  const properties: Record<string, unknown> = {};
  for (const f of reply.fields)
    properties[f.name] = { ...JSON_TYPE[f.type], ...(f.description ? { description: f.description } : {}) };
  const names = new Set(reply.fields.map((f) => f.name));
  const discovery = discoveryFromPlan(reply);
  const systemPrompt = (reply.systemPrompt ?? '').trim();
  const spec: TaskSpec = parseTaskSpec({
    goal: reply.goal,
    ...(reply.fields.length ? { outputSchema: { type: 'object', properties } } : {}),
    requiredFields: reply.requiredFields.filter((f) => names.has(f)),
    keywords: reply.keywords,
    maxSteps: Math.min(50, Math.max(1, reply.maxSteps)),
    // A task the planner sizes at one step is a single read of the page: no agent loop needed.
    mode: reply.maxSteps <= 1 ? 'extract' : 'agent',
    ...(reply.expectedItems ? { expectedItems: reply.expectedItems } : {}),
    ...(systemPrompt ? { systemPrompt: systemPrompt.slice(0, 4000) } : {}),
    ...(discovery ? { discovery } : {}),
    ...(base.model ? { model: base.model } : {}),
    ...(base.concurrency ? { concurrency: base.concurrency } : {}),
  });
  // A listing's items are found by the Discover state; the listing pages themselves are no samples.
  const samples: Sample[] = discovery ? [] : samplesFromList(reply.samples, 'planner samples');
  return { spec, samples };
}

/** The discovery block a plan asks for: links matching its pattern, else the model picks them. Pure. */
export function discoveryFromPlan(reply: PlanReply): TaskSpec['discovery'] {
  const listings = (reply.listingUrls ?? []).map((u) => u.trim()).filter(Boolean);
  if (!reply.needsDiscovery || listings.length === 0) return undefined;
  const pattern = reply.itemLinkPattern?.trim();
  return {
    listings: listings.slice(0, 100),
    ...(pattern
      ? { include: pattern }
      : { instruction: `the links to each item page the task is about: ${reply.goal}` }),
  };
}

export interface Plan {
  prompt: string;
  spec: TaskSpec;
  samples: Sample[];
  usage: { promptTokens: number; completionTokens: number; costUsd?: number };
}

export async function planRun(
  llm: LlmClient,
  prompt: string,
  base: { model?: string; concurrency?: number } = {},
): Promise<Plan> {
  const res = await llm.generate({
    system: SYSTEM,
    messages: [{ role: 'user', content: `Request:\n${prompt.trim()}` }],
    schema: PlanReply,
    schemaName: 'run_plan',
    schemaDescription: 'task spec and sample URLs for the request',
  });
  const { spec, samples } = specFromPlan(res.value, base);
  return {
    prompt,
    spec,
    samples,
    usage: {
      promptTokens: res.usage.promptTokens,
      completionTokens: res.usage.completionTokens,
      ...(res.usage.costUsd !== undefined ? { costUsd: res.usage.costUsd } : {}),
    },
  };
}
