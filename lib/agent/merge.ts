/**
 * How `save_progress` grows the accumulated data: objects merge key by key, arrays append the items
 * they do not hold yet (compared as canonical JSON, so key order does not matter), anything else is
 * replaced by the newer value. Pure: the inputs are never changed.
 */
import type { Json, JsonObject } from '../store/ports.ts';

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with object keys sorted: equal data, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

export function deepMerge(base: Json, update: Json): Json {
  if (Array.isArray(base) && Array.isArray(update)) {
    const seen = new Set(base.map(canonicalJson));
    const out: Json[] = [...base];
    for (const item of update) {
      const key = canonicalJson(item);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(item);
    }
    return out;
  }
  if (isObject(base) && isObject(update)) {
    const out: JsonObject = { ...base };
    for (const [k, v] of Object.entries(update)) {
      if (v === undefined) continue;
      out[k] = k in base ? deepMerge(base[k] as Json, v) : v;
    }
    return out;
  }
  return update;
}

export function mergeData(base: JsonObject, update: JsonObject): JsonObject {
  return deepMerge(base, update) as JsonObject;
}

/** Items collected so far: the length of the longest array anywhere in the data. */
export function countItems(data: Json): number {
  if (Array.isArray(data)) return Math.max(data.length, ...data.map(countItems));
  if (isObject(data)) return Math.max(0, ...Object.values(data).map(countItems));
  return 0;
}
