/**
 * `{{inputs.email}}`, `{{search_results.items.0.title}}`, `{{item.url}}`: values filled into a node's
 * configuration from what ran before (pure). A template that is the whole string keeps the value's
 * JSON type (a number stays a number); inside text it is written out. `%name%` secrets are left
 * alone: they are filled by the action layer at the last moment and never appear in a result.
 */
import type { Json, JsonObject } from '../store/ports.ts';

export const TEMPLATE = /\{\{\s*([A-Za-z_][\w]*(?:\.[\w-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][\w]*(?:\.[\w-]+)*)\s*\}\}$/;

export class TemplateError extends Error {
  override name = 'TemplateError';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/** Reads `a.b.0.c` from the scope; undefined when any step is missing. */
export function lookup(scope: JsonObject, path: string): Json | undefined {
  let cur: Json | undefined = scope;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = Array.isArray(cur) ? cur[Number(part)] : (cur as JsonObject)[part];
  }
  return cur;
}

const text = (v: Json): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** One string with its templates filled; a missing value is an error naming it. */
export function fillString(value: string, scope: JsonObject): Json {
  const whole = WHOLE.exec(value);
  if (whole) {
    const v = lookup(scope, whole[1]!);
    if (v === undefined) throw new TemplateError(whole[1]!, `{{${whole[1]}}} has no value here`);
    return v;
  }
  return value.replace(TEMPLATE, (_m, path: string) => {
    const v = lookup(scope, path);
    if (v === undefined) throw new TemplateError(path, `{{${path}}} has no value here`);
    return text(v);
  });
}

/**
 * Fills every string of a node's configuration, except the keys listed (nested node lists and
 * expressions, which are filled or evaluated when they run).
 */
export function fillTemplates<T>(config: T, scope: JsonObject, skip: readonly string[] = []): T {
  const walk = (v: unknown, key?: string): unknown => {
    if (key !== undefined && skip.includes(key)) return v;
    if (typeof v === 'string') return fillString(v, scope);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(config) as T;
}

/** The template paths a string names (`inputs.email`, `step.field`). */
export function templatePaths(value: string): string[] {
  return [...value.matchAll(TEMPLATE)].map((m) => m[1]!);
}
