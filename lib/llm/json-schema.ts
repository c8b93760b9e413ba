import { z } from 'zod';
import type { WireSchema } from './types.ts';

type Json = { [k: string]: unknown };
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The schema as providers are sent it. `io: 'input'` describes what the model must write (fields
 * with defaults are optional, transforms show their input). Providers want an object at the root,
 * so anything else travels wrapped as `{ value }`.
 */
export function toWireSchema(schema: z.ZodType): WireSchema {
  const known = wireSchemas.get(schema);
  if (known) return known;
  const wire = buildWireSchema(schema);
  wireSchemas.set(schema, wire);
  return wire;
}

// Schemas are immutable, and the reply schemas of act / observe / the agent are module constants:
// converting them once saves work on every call.
const wireSchemas = new WeakMap<z.ZodType, WireSchema>();

function buildWireSchema(schema: z.ZodType): WireSchema {
  const { $schema: _ignored, ...json } = withoutIntegerLimits(
    z.toJSONSchema(schema, { target: 'draft-7', unrepresentable: 'any', io: 'input' }),
  ) as Json;
  const wrapped = json.type !== 'object';
  const { definitions, ...inner } = json;
  const root: Json = wrapped
    ? {
        type: 'object',
        properties: { value: inner },
        required: ['value'],
        ...(definitions ? { definitions } : {}),
      }
    : json;
  return { schema: root, strict: strictify(root), wrapped };
}

/**
 * zod writes every `.int()` with the bounds of a safe integer; they tell a model nothing and cost
 * ~20 prompt tokens each, so they are left out (zod still checks the reply).
 */
export function withoutIntegerLimits(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIntegerLimits);
  if (!isObj(node)) return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    out[k] = withoutIntegerLimits(v);
  }
  return out;
}

// OpenAI strict mode rejects these outright; dropping them only loosens the hint, zod still checks.
const STRICT_DROP = ['minLength', 'maxLength', 'default', 'propertyNames', 'uniqueItems', 'contains'];
const STRICT_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

/**
 * OpenAI's strict mode wants every property required and no extra ones: optional properties
 * become required-but-nullable (`restoreAbsent` turns those nulls back). Undefined when the schema
 * cannot be made strict (free-form records, tuples, untyped values); the caller then sends it loose.
 */
export function strictify(schema: Json): Json | undefined {
  let ok = true;
  const walk = (node: unknown): unknown => {
    if (!isObj(node)) return node;
    const out: Json = { ...node };
    for (const k of STRICT_DROP) delete out[k];
    if (typeof node.format === 'string' && !STRICT_FORMATS.has(node.format)) delete out.format;
    if (typeof node.pattern === 'string' && /\(\?[=!<]/.test(node.pattern)) delete out.pattern;
    const typed = ['type', 'anyOf', 'oneOf', 'allOf', '$ref', 'enum', 'const'].some((k) => k in node);
    if (!typed || Array.isArray(node.items) || isObj(node.patternProperties)) ok = false;
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

const allowsNull = (node: Json): boolean =>
  node.type === 'null' ||
  (Array.isArray(node.type) && node.type.includes('null')) ||
  (Array.isArray(node.anyOf) && node.anyOf.some((n) => isObj(n) && allowsNull(n)));

/**
 * Undoes what strict mode forced: a null in a property the original schema has as optional and
 * not nullable means "absent". Guided by the original schema, so nulls that are real values stay.
 */
export function restoreAbsent(value: unknown, schema: Json, root: Json = schema, depth = 0): unknown {
  if (depth > 50) return value;
  let node = schema;
  if (typeof node.$ref === 'string') {
    const target = node.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((at, key) => (isObj(at) ? at[key] : undefined), root);
    if (!isObj(target)) return value;
    node = target;
  }
  if (Array.isArray(value)) {
    return isObj(node.items)
      ? value.map((v) => restoreAbsent(v, node.items as Json, root, depth + 1))
      : value;
  }
  if (!isObj(value)) return value;
  if (isObj(node.properties)) {
    const props = node.properties;
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    const out: Json = {};
    for (const [k, v] of Object.entries(value)) {
      const sub = props[k];
      if (!isObj(sub)) {
        out[k] = v;
        continue;
      }
      if (v === null && !required.has(k) && !allowsNull(sub)) continue;
      out[k] = restoreAbsent(v, sub, root, depth + 1);
    }
    return out;
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const branches = node[key];
    if (!Array.isArray(branches)) continue;
    // An object value can only have come from an object branch; take the first that fits its keys.
    const branch = branches.find(
      (b): b is Json =>
        isObj(b) && isObj(b.properties) && Object.keys(value).every((k) => k in (b.properties as Json)),
    );
    if (branch) return restoreAbsent(value, branch, root, depth + 1);
  }
  return value;
}

/** The first complete JSON object in a text (models in text mode like to add prose or fences). */
export function firstJsonObject(text: string): string | undefined {
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
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
      else if (c === '}' && --depth === 0) {
        const candidate = text.slice(start, i + 1);
        try {
          JSON.parse(candidate);
          return candidate;
        } catch {
          break;
        }
      }
    }
  }
  return undefined;
}
