import { z } from 'zod';

type Json = { [k: string]: unknown };
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON Schema for a zod schema, without the `$schema` line (providers do not want it). */
export function toJsonSchema(schema: z.ZodType): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-7',
    unrepresentable: 'any',
  }) as Json;
  return rest;
}

/**
 * OpenAI's strict mode wants every property required and no extra ones. Optional properties
 * become required-but-nullable; `nulls` lists where we did that so the nulls can be dropped again.
 * Returns undefined when the schema cannot be made strict (e.g. free-form records).
 */
export function strictify(schema: Json): Json | undefined {
  let ok = true;
  const walk = (node: unknown): unknown => {
    if (!isObj(node)) return node;
    const out: Json = { ...node };
    if (node.type === 'object' || isObj(node.properties)) {
      if (isObj(node.additionalProperties) || node.additionalProperties === true) ok = false;
      const props = isObj(node.properties) ? node.properties : {};
      const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
      out.properties = Object.fromEntries(
        Object.entries(props).map(([k, v]) => {
          const inner = walk(v);
          return [k, required.has(k) ? inner : { anyOf: [inner, { type: 'null' }] }];
        }),
      );
      out.required = Object.keys(props);
      out.additionalProperties = false;
    }
    if (node.items !== undefined) out.items = walk(node.items);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
      if (Array.isArray(node[key])) out[key] = (node[key] as unknown[]).map(walk);
    for (const key of ['definitions', '$defs'] as const)
      if (isObj(node[key]))
        out[key] = Object.fromEntries(Object.entries(node[key] as Json).map(([k, v]) => [k, walk(v)]));
    return out;
  };
  const result = walk(schema) as Json;
  return ok ? result : undefined;
}

/** Drops the nulls that strict mode forced into optional fields, so zod sees them as absent. */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (!isObj(value)) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null)
      .map(([k, v]) => [k, dropNulls(v)]),
  );
}

/** The first complete JSON object in a text (models in text mode like to add prose or fences). */
export function firstJsonObject(text: string): string | undefined {
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}
