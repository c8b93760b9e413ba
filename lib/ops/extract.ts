import type { z } from 'zod';
import type { Snapshot } from '../perception/types.ts';
import { chunkTree } from './chunks.ts';
import { type ExtractSchema, preparedSchema } from './extract-schema.ts';
import { ask, emptyUsage, readPage, userMessage, visionPart } from './page-state.ts';
import { extractSystem, extractUser, VISION_NOTE, withGuidance } from './prompts.ts';
import { type ExtractResult, type OpContext, OpError } from './types.ts';
import { injectUrls, type JsonSchema } from './url-fields.ts';

/** Default page text per model call; pages longer than this are read in parts. */
export const EXTRACT_BUDGET = 6000;

const DEFAULT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: { extraction: { type: 'string', description: 'the requested information' } },
  required: ['extraction'],
  additionalProperties: false,
};

/**
 * Typed data from the page. URL fields are answered as element ids and mapped back to the real
 * hrefs; long pages are read in parts until the model says it has everything (the flag rides on
 * the same reply, so no extra call per part).
 */
export async function extract<
  S extends ExtractSchema = JsonSchema,
  T = S extends z.ZodType ? z.infer<S> : unknown,
>(ctx: OpContext, instruction?: string, schema?: S): Promise<ExtractResult<T>> {
  const started = performance.now();
  const text = instruction?.trim();
  if (!text) {
    // No instruction: the page's text as the model would see it, for free.
    const snap = await readPage(ctx, { budget: null, readOnly: true });
    return {
      data: { pageText: snap.tree } as T,
      usage: emptyUsage(),
      resolvedBy: 'matcher',
      chunks: { read: 1, total: 1 },
      url: snap.url,
      ms: Math.round(performance.now() - started),
    };
  }
  const { validator, reply: replySchema, paths } = preparedSchema(schema ?? DEFAULT_SCHEMA);
  if (!ctx.llm) {
    const { noModelError } = await import('../llm/config.ts');
    throw new OpError('no_model', `extract needs a model to read "${text}". ${noModelError().message}`);
  }
  const snap: Snapshot = await readPage(ctx, { budget: null, readOnly: true });
  const budget = ctx.options?.budget ?? EXTRACT_BUDGET;
  const parts = chunkTree(snap.tree, budget);
  const usage = { total: emptyUsage(ctx.llm.model) };
  const vision =
    ctx.options?.vision === 'always' || (ctx.options?.vision !== 'never' && snap.confidence < 0.6);
  const system = withGuidance(
    extractSystem({ links: paths.length > 0, parts: parts.length > 1 }),
    ctx.guidance,
  );
  let data: unknown;
  let read = 0;
  for (const [index, part] of parts.entries()) {
    const partSnap = { ...snap, tree: part };
    const image = vision && index === 0 ? await visionPart(ctx, snap) : undefined;
    const prompt =
      extractUser(text, partSnap, { index, total: parts.length }, data) + (image ? `\n${VISION_NOTE}` : '');
    const res = await ask(
      ctx.llm,
      {
        system,
        messages: [userMessage(prompt, image)],
        schema: replySchema,
        schemaName: 'extracted',
      },
      usage,
      ctx.signal,
    );
    data = res.value.data;
    read++;
    if (res.value.done) break;
  }
  const withUrls = injectUrls(data, paths, snap.urls);
  const checked = validator.safeParse(withUrls);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const err = new OpError(
      'model',
      `extracted data does not match the schema at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
    );
    err.usage = usage.total;
    throw err;
  }
  return {
    data: checked.data as T,
    usage: usage.total,
    resolvedBy: 'llm',
    chunks: { read, total: parts.length },
    url: snap.url,
    ms: Math.round(performance.now() - started),
  };
}
