/**
 * Deterministic extractors: `browser_query` method `extract` reads fields by CSS (relative to a
 * repeating item for lists) with no model. One is derived from what a model returned on the
 * recorded page and kept only when running it on that same page gives back exactly that data; a
 * later page where it finds nothing that is required is answered by the model once (a heal).
 */
import type { Page } from 'playwright-core';
import { emptyUsage } from '../llm/types.ts';
import { extract } from '../ops/extract.ts';
import { readExtraction, type SoughtValue, suggestSelectors } from '../perception/extractor-dom.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import type { BrowserQueryConfigSchema, LocatorCandidate } from './schema.ts';
import type { HealRecord, NodeResult, NodeRun, NodeRunner } from './types.ts';

type QueryConfig = import('zod').infer<typeof BrowserQueryConfigSchema>;
export type Extractor = Extract<QueryConfig, { method: 'extract' }>['extractor'];
type FieldType = 'string' | 'number' | 'boolean';

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** A field's text as its type: the first number in "$1,299.00", yes/no words for booleans. */
export function parseField(raw: string | null, type: FieldType): Json {
  if (raw === null) return null;
  const text = squash(raw);
  if (type === 'number') {
    const m = /-?\d[\d,]*(?:\.\d+)?/.exec(text);
    return m ? Number(m[0].replace(/,/g, '')) : null;
  }
  if (type === 'boolean') {
    const t = text.toLowerCase();
    if (/^(true|yes|y|1|in stock|available|on|enabled|active)$/.test(t)) return true;
    if (/^(false|no|n|0|out of stock|sold out|unavailable|off|disabled|inactive)$/.test(t)) return false;
    return null;
  }
  return text;
}

/** Runs the extractor on the page: `{ field: value }`, or `{ [list]: [...] }` with an item. */
export async function applyExtractor(page: Page, extractor: Extractor): Promise<JsonObject> {
  const raw = await readExtraction(page, extractor);
  const typed = (rec: Record<string, string | null>): JsonObject =>
    Object.fromEntries(
      Object.entries(extractor.fields).map(([k, f]) => [k, parseField(rec[k] ?? null, f.type ?? 'string')]),
    );
  if ('items' in raw) return { [extractor.list ?? 'items']: raw.items.map(typed) };
  return typed(raw.one);
}

/** Strings compared with their spaces collapsed (the page's line breaks are not data). */
function canonical(v: unknown): unknown {
  if (typeof v === 'string') return squash(v);
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, canonical(x)]),
    );
  return v;
}
export const sameData = (a: unknown, b: unknown) =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

const isUrl = (s: string) => /^https?:\/\/\S+$/.test(s);

function sought(key: string, value: unknown): SoughtValue | null | 'unsupported' {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return { key, kind: 'number', value };
  if (typeof value === 'boolean') return { key, kind: 'boolean', value };
  if (typeof value === 'string') return { key, kind: isUrl(value) ? 'url' : 'string', value: squash(value) };
  return 'unsupported';
}

const typeOf = (v: SoughtValue): FieldType => (v.kind === 'url' ? 'string' : v.kind);

export type Derived = { ok: true; extractor: Extractor } | { ok: false; reason: string };

/**
 * An extractor for `data` as the model read it from `page`, verified: it must reproduce the data
 * exactly on this page, or there is none (the step stays a model extraction).
 */
export async function deriveExtractor(
  page: Page,
  data: unknown,
  _schema?: Record<string, unknown>,
): Promise<Derived> {
  if (!data || typeof data !== 'object' || Array.isArray(data))
    return { ok: false, reason: 'the data is not an object' };
  const entries = Object.entries(data as Record<string, unknown>);
  if (entries.length === 0) return { ok: false, reason: 'the data is empty' };
  const lists = entries.filter(([, v]) => Array.isArray(v));
  let extractor: Extractor;
  if (lists.length === 0) {
    const single: SoughtValue[] = [];
    for (const [k, v] of entries) {
      const s = sought(k, v);
      if (s === 'unsupported') return { ok: false, reason: `${k} is not a plain value` };
      if (s === null) return { ok: false, reason: `${k} is empty: nothing to find it by` };
      single.push(s);
    }
    const got = await suggestSelectors(page, { single });
    if (!got.ok) return got;
    extractor = {
      fields: Object.fromEntries(
        single.map((s) => [s.key, { ...got.fields[s.key]!, type: typeOf(s) }]),
      ) as Extractor['fields'],
    };
  } else {
    if (lists.length !== 1 || entries.length !== 1)
      return { ok: false, reason: 'a list beside other fields: an extractor gives one list or one record' };
    const [list, rows] = lists[0]! as [string, unknown[]];
    if (rows.length === 0 || !rows.every((r) => r && typeof r === 'object' && !Array.isArray(r)))
      return { ok: false, reason: `${list} is not a non-empty list of records` };
    const records = rows as Record<string, unknown>[];
    const keys = [...new Set(records.flatMap((r) => Object.keys(r)))];
    // The first field that every record has as text is what tells the records apart on the page.
    const keyField = keys.find((k) => records.every((r) => typeof r[k] === 'string' && String(r[k]).trim()));
    if (!keyField) return { ok: false, reason: 'no text field present in every record' };
    const ordered = [keyField, ...keys.filter((k) => k !== keyField)];
    const types: Record<string, FieldType> = {};
    const items: (SoughtValue | null)[][] = [];
    for (const r of records) {
      const row: (SoughtValue | null)[] = [];
      for (const k of ordered) {
        const s = sought(k, r[k]);
        if (s === 'unsupported') return { ok: false, reason: `${list}.${k} is not a plain value` };
        if (s) types[k] ??= typeOf(s);
        row.push(s);
      }
      items.push(row);
    }
    const got = await suggestSelectors(page, { keys: ordered, items });
    if (!got.ok) return got;
    extractor = {
      item: got.item!,
      list,
      fields: Object.fromEntries(
        ordered.map((k) => [k, { ...got.fields[k]!, type: types[k] ?? 'string' }]),
      ) as Extractor['fields'],
    };
  }
  const again = await applyExtractor(page, extractor);
  if (!sameData(again, data))
    return {
      ok: false,
      reason: 'the selectors found do not give back exactly what the model read on this page',
    };
  return { ok: true, extractor };
}

/** Fields the data must have: the schema's `required` (top level, or of the list's items), else all. */
export function nothingWhereRequired(
  output: JsonObject,
  extractor: Extractor,
  schema?: Record<string, unknown>,
): boolean {
  const required = (s: unknown): string[] | undefined =>
    s && typeof s === 'object' && Array.isArray((s as { required?: unknown }).required)
      ? (s as { required: string[] }).required
      : undefined;
  if (extractor.item) {
    const rows = output[extractor.list ?? 'items'];
    if (!Array.isArray(rows) || rows.length === 0) return true;
    const itemSchema = (schema?.properties as Record<string, { items?: unknown }> | undefined)?.[
      extractor.list ?? 'items'
    ]?.items;
    const need = required(itemSchema) ?? Object.keys(extractor.fields);
    return rows.every((r) =>
      need.some((k) => (r as JsonObject)?.[k] === null || (r as JsonObject)?.[k] === undefined),
    );
  }
  const need = required(schema) ?? Object.keys(extractor.fields);
  return need.some((k) => output[k] === null || output[k] === undefined);
}

const SCHEMA_TYPE: Record<FieldType, string> = { string: 'string', number: 'number', boolean: 'boolean' };

/** The JSON Schema of what an extractor gives (every field required): the shape a heal asks for. */
export function schemaOf(extractor: Extractor): Record<string, unknown> {
  const fields = Object.keys(extractor.fields);
  const record = {
    type: 'object',
    properties: Object.fromEntries(
      Object.entries(extractor.fields).map(([k, f]) => [k, { type: SCHEMA_TYPE[f.type ?? 'string'] }]),
    ),
    required: fields,
  };
  if (!extractor.item) return record;
  const list = extractor.list ?? 'items';
  return { type: 'object', properties: { [list]: { type: 'array', items: record } }, required: [list] };
}

/** An extractor's selectors as CSS candidates (item-relative ones after the item), for heal records. */
const selectorsOf = (e: Extractor): LocatorCandidate[] =>
  Object.values(e.fields).map((f) => ({
    kind: 'css' as const,
    value: e.item ? `${e.item} ${f.selector === ':scope' ? '' : f.selector}`.trim() : f.selector,
  }));

export const runExtractor: NodeRunner = async (run: NodeRun): Promise<NodeResult> => {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'browser_query' || node.config.method !== 'extract')
    throw new Error(`${node.alias}: runExtractor runs browser_query nodes with method extract`);
  const config = node.config;
  const base = { alias: node.alias, type: 'browser_query' as const };
  const output = await applyExtractor(deps.page, config.extractor);
  if (!nothingWhereRequired(output, config.extractor, config.schema))
    return {
      ...base,
      status: 'ok',
      output,
      usage: emptyUsage(),
      resolvedBy: 'deterministic',
      ms: Math.round(performance.now() - started),
    };
  const selectors = Object.values(config.extractor.fields).map((f) => f.selector);
  if (!deps.llm)
    return {
      ...base,
      status: 'failed',
      usage: emptyUsage(),
      resolvedBy: 'deterministic',
      ms: Math.round(performance.now() - started),
      error: {
        kind: 'deterministic',
        message: `${node.alias}: the extractor found nothing where data is required on ${deps.page.url()}`,
        resolution:
          'The page layout changed: configure a model so the step can heal, or compile the extraction again on the new page.',
        selector: [config.extractor.item, ...selectors].filter(Boolean).join(' | '),
        instruction: config.instruction,
      },
    };
  try {
    // The heal: the model reads the page once (no secrets are passed to it), in the extractor's own
    // shape when the node has no schema (else the model's default shape would not fit the fields).
    const schema = config.schema ?? schemaOf(config.extractor);
    const res = await extract(
      { page: deps.page, llm: deps.llm, ...(deps.signal ? { signal: deps.signal } : {}) },
      config.instruction,
      schema,
    );
    deps.log?.({
      level: 'warn',
      msg: 'extractor found nothing; the model read the page',
      alias: node.alias,
      url: deps.page.url(),
    });
    // Selectors found again from what the model read here, kept only when they give it back exactly:
    // written back, later pages read the new layout with no model.
    const again = await deriveExtractor(deps.page, res.data, schema).catch(
      (err: unknown): Derived => ({ ok: false, reason: String(err) }),
    );
    if (!again.ok)
      deps.log?.({
        level: 'info',
        msg: 'no extractor fits the new page',
        alias: node.alias,
        why: again.reason,
      });
    const heal: HealRecord | undefined = again.ok
      ? {
          alias: node.alias,
          path: run.path,
          url: deps.page.url(),
          old: selectorsOf(config.extractor),
          new: selectorsOf(again.extractor),
          via: 'llm',
          reason: `the extractor found nothing where data is required (${selectors.join(' | ')})`,
          confirmed: true,
          extractor: again.extractor,
        }
      : undefined;
    if (heal)
      await deps
        .saveEvidence?.(`heal-${node.alias}.json`, JSON.stringify(heal, null, 2), 'application/json')
        .catch((err: unknown) =>
          deps.log?.({ level: 'warn', msg: 'could not save the heal record', error: String(err) }),
        );
    return {
      ...base,
      status: 'ok',
      output: res.data as Json,
      usage: res.usage,
      resolvedBy: 'heal-llm',
      ms: Math.round(performance.now() - started),
      ...(heal ? { heal } : {}),
    };
  } catch (err) {
    return {
      ...base,
      status: 'failed',
      usage: (err as { usage?: NodeResult['usage'] }).usage ?? emptyUsage(),
      resolvedBy: 'heal-llm',
      ms: Math.round(performance.now() - started),
      error: {
        kind: 'ai',
        message: `${node.alias}: the extractor found nothing and the model could not read the page: ${String((err as Error).message ?? err).split('\n')[0]}`,
        resolution: 'Check that the page still holds this data; compile the extraction again if it moved.',
        instruction: config.instruction,
      },
    };
  }
};
