/**
 * Models invent URLs. So a URL field is asked for as the id of the link element, and the real
 * href is put back from the snapshot's url map afterwards. Works on JSON Schema (the common form
 * of both zod and API schemas); pure.
 */

export type JsonSchema = { [k: string]: unknown };
/** Property names, `*` for array items. */
export type FieldPath = string[];

const URL_FORMATS = new Set(['uri', 'url', 'uri-reference', 'iri']);

const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

export function isUrlField(node: JsonSchema): boolean {
  return node.type === 'string' && typeof node.format === 'string' && URL_FORMATS.has(node.format);
}

export function urlFieldsToIds(schema: JsonSchema): { schema: JsonSchema; paths: FieldPath[] } {
  const paths: FieldPath[] = [];
  const walk = (node: unknown, path: FieldPath): unknown => {
    if (!isObj(node)) return node;
    if (isUrlField(node)) {
      paths.push(path);
      const { format: _f, pattern: _p, ...rest } = node;
      return {
        ...rest,
        type: 'integer',
        description: `${typeof node.description === 'string' ? `${node.description}. ` : ''}Answer with the element id [N] of the link.`,
      };
    }
    const out: JsonSchema = { ...node };
    if (isObj(node.properties)) {
      out.properties = Object.fromEntries(
        Object.entries(node.properties).map(([k, v]) => [k, walk(v, [...path, k])]),
      );
    }
    if (node.items !== undefined) out.items = walk(node.items, [...path, '*']);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
      const list = node[key];
      if (Array.isArray(list)) out[key] = list.map((v) => walk(v, path));
    }
    return out;
  };
  const out = walk(schema, []) as JsonSchema;
  // anyOf branches may record the same path twice.
  const seen = new Set<string>();
  return {
    schema: out,
    paths: paths.filter((p) => !seen.has(p.join('\u0000')) && seen.add(p.join('\u0000'))),
  };
}

/** Replaces ids with real URLs; an id that is not a link on the page becomes null, never a guess. */
export function injectUrls(data: unknown, paths: FieldPath[], urls: Record<string, string>): unknown {
  const put = (value: unknown, path: FieldPath): unknown => {
    if (path.length === 0) {
      if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value)))
        return urls[String(value)] ?? null;
      return value === undefined ? undefined : null;
    }
    const [head, ...rest] = path;
    if (head === '*') return Array.isArray(value) ? value.map((v) => put(v, rest)) : value;
    if (!isObj(value) || head === undefined || !(head in value)) return value;
    return { ...value, [head]: put(value[head], rest) };
  };
  return paths.reduce((acc, p) => put(acc, p), data);
}
