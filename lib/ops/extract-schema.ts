import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { inlineLocalRefs } from './json-refs.ts';
import { extractReply } from './replies.ts';
import { OpError } from './types.ts';
import { type FieldPath, type JsonSchema, urlFieldsToIds } from './url-fields.ts';

export type ExtractSchema = z.ZodType | JsonSchema;

/** Everything extract derives from the caller's schema before it reads the page. */
export interface PreparedSchema {
  /** The schema as JSON Schema (URL fields still URLs). */
  json: JsonSchema;
  /** Validates the final data, URLs put back. */
  validator: z.ZodType;
  /** What the model answers: the data with URL fields as link ids, and whether it has all of it. */
  reply: ReturnType<typeof extractReply>;
  /** Where the URL fields are, to put the hrefs back. */
  paths: FieldPath[];
}

const isZod = (s: unknown): s is z.ZodType => typeof s === 'object' && s !== null && '_zod' in s;

/** Deeper than any real extraction schema; every later step (text key, $ref inlining, zod) recurses. */
export const MAX_SCHEMA_DEPTH = 64;

/**
 * How deeply objects and arrays nest in `value`, counted without recursion (a 20,000-deep schema
 * would overflow the stack of any recursive walk), stopping once past `limit`.
 */
export function nestingDepth(value: unknown, limit = MAX_SCHEMA_DEPTH): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}

function checkDepth(schema: unknown): void {
  if (nestingDepth(schema) > MAX_SCHEMA_DEPTH)
    throw new OpError(
      'invalid',
      `schema: nested deeper than ${MAX_SCHEMA_DEPTH} levels of objects and arrays`,
    );
}

/** One schema, two views: JSON Schema to transform and send, zod to validate the final data. */
export function prepareSchema(schema: ExtractSchema): { json: JsonSchema; validator: z.ZodType } {
  if (isZod(schema)) return { json: z.toJSONSchema(schema) as JsonSchema, validator: schema };
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema))
    throw new OpError('invalid', 'schema must be a JSON Schema object');
  checkDepth(schema);
  try {
    // zod v3 schemas from the Stagehand SDK come with `$ref`s to reused parts, which neither
    // z.fromJSONSchema nor urlFieldsToIds (it reads this `json`) would follow.
    const json = inlineLocalRefs(schema);
    return { json, validator: z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]) };
  } catch (err) {
    throw new OpError('invalid', `schema is not a usable JSON Schema: ${(err as Error).message}`);
  }
}

function build(schema: ExtractSchema): PreparedSchema {
  const { json, validator } = prepareSchema(schema);
  const { schema: idSchema, paths } = urlFieldsToIds(json);
  const reply = extractReply(z.fromJSONSchema(idSchema as Parameters<typeof z.fromJSONSchema>[0]));
  return { json, validator, reply, paths };
}

// API and SDK callers send the same schema with every call; converting it (JSON Schema → zod →
// JSON Schema for the wire) each time is most of extract's own work on a small page. Prepared
// schemas are immutable, so one per distinct schema is kept: zod objects by identity, JSON Schemas
// by their text, the latter bounded so that a caller inventing schemas cannot grow it forever.
const byZod = new WeakMap<z.ZodType, PreparedSchema>();
export const PREPARED_LIMIT = 256;
const byText = new LRUCache<string, PreparedSchema>({ max: PREPARED_LIMIT });

export function preparedSchema(schema: ExtractSchema): PreparedSchema {
  if (isZod(schema)) {
    const known = byZod.get(schema) ?? build(schema);
    byZod.set(schema, known);
    return known;
  }
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return build(schema);
  checkDepth(schema);
  const text = JSON.stringify(schema);
  const known = byText.get(text);
  if (known) return known;
  const fresh = build(schema);
  byText.set(text, fresh);
  return fresh;
}
