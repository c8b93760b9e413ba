/**
 * Inlines local `$ref`s in a JSON Schema. zod-to-json-schema (what the Stagehand SDK uses for zod v3
 * schemas) writes `{"$ref":"#/properties/min"}` wherever it meets a schema object a second time,
 * and `z.fromJSONSchema` only resolves `#`, `#/$defs/…` and `#/definitions/…`; `urlFieldsToIds`
 * resolves none. Replacing each ref by a copy of its target fixes both. Pure: the input is not
 * touched.
 *
 * Cycles: a `$ref` whose target is being inlined at that very point (`#`, a pointer to one of its
 * own ancestors, or A → B → A) is left in place, because inlining it would never end. z.fromJSONSchema
 * still builds a recursive zod schema from `#` and `#/$defs/…` (`#/definitions/…` in draft-07)
 * refs, which worked before this step and keeps working; any other recursive pointer fails there
 * with "Reference not found", as it did before.
 */
import type { JsonSchema } from './url-fields.ts';

const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keywords whose values are instance data, not schemas: a `$ref` key in them is just a key. */
const DATA = new Set(['const', 'default', 'enum', 'examples']);
/** Keywords whose values map names to schemas: the names are data (a property may be "default"). */
const MAPS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
]);
/**
 * Inlining copies, so refs to refs multiply: ten definitions each using the previous one twice are
 * a thousand copies of the first, thirty a billion, and one long array behind a ref used many times
 * is copied each time. Callers send schemas over HTTP, so every value copied counts against this;
 * a real extract schema is a few hundred.
 */
export const INLINED_NODE_LIMIT = 20_000;

/** `#/a~1b/c%20d` → ['a/b', 'c d']: percent-decoding first (it is a URI fragment), then RFC 6901. */
function pointerSegments(ref: string): string[] {
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    throw new Error(`$ref ${ref} is not a valid JSON Pointer`);
  }
  if (pointer === '') return [];
  // `~1` before `~0`, so that `~01` reads as `~1` and not `/`.
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function inlineLocalRefs(root: JsonSchema): JsonSchema {
  const resolve = (ref: string): JsonSchema => {
    let at: unknown = root;
    for (const seg of pointerSegments(ref)) {
      // Own keys only: `#/properties/constructor` must not find Object.prototype.constructor.
      if (Array.isArray(at) && /^(0|[1-9]\d*)$/.test(seg) && Number(seg) < at.length) at = at[Number(seg)];
      else if (isObj(at) && Object.hasOwn(at, seg)) at = at[seg];
      else throw new Error(`$ref ${ref} points to nothing in the schema`);
    }
    if (!isObj(at)) throw new Error(`$ref ${ref} does not point to a schema object`);
    return at;
  };

  // The source nodes being inlined right now, by identity: meeting one again is a cycle.
  const open = new Set<JsonSchema>();

  let nodes = 0;
  const count = () => {
    if (++nodes > INLINED_NODE_LIMIT)
      throw new Error(`schema has more than ${INLINED_NODE_LIMIT} nodes once its $refs are inlined`);
  };
  const data = (v: unknown): unknown => {
    count();
    return Array.isArray(v)
      ? v.map(data)
      : isObj(v)
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, data(x)]))
        : v;
  };
  const value = (v: unknown): unknown => {
    if (Array.isArray(v)) {
      count();
      return v.map(value);
    }
    if (isObj(v)) return schema(v);
    count();
    return v;
  };

  const schema = (node: JsonSchema): JsonSchema => {
    count();
    open.add(node);
    try {
      const out: JsonSchema = {};
      for (const [k, v] of Object.entries(node)) {
        // `__proto__` would set the copy's prototype instead of a key: no schema needs it.
        if (k === '$ref' || k === '__proto__') continue;
        if (DATA.has(k) || k.startsWith('x-')) out[k] = data(v);
        else if (MAPS.has(k) && isObj(v))
          out[k] = Object.fromEntries(
            Object.entries(v)
              .filter(([name]) => name !== '__proto__')
              .map(([name, s]) => [name, value(s)]),
          );
        else out[k] = value(v);
      }
      const ref = node.$ref;
      // `#` or `#/…` only: anchors (`#foo`) and other documents (`http://…`) are left alone, never fetched.
      if (typeof ref !== 'string' || !(ref === '#' || ref.startsWith('#/'))) {
        if (ref !== undefined) out.$ref = ref;
        return out;
      }
      const target = resolve(ref);
      if (open.has(target)) return { ...out, $ref: ref };
      // Siblings (a description, a default) say more about this use than the shared target does.
      return { ...schema(target), ...out };
    } finally {
      open.delete(node);
    }
  };

  return schema(root);
}
