/**
 * Compiling an extract-mode sample: open the page, then read it with a deterministic extractor
 * checked on the recorded page (or, when no selectors give back exactly the model's data, the model
 * reads it at replay). With `staticCheck`, whether replay can read the served HTML is checked too.
 */
import type { Page } from 'playwright-core';
import { CompileError, finishCompiled as finish, InputLifter, navigateNode } from './compile-steps.ts';
import { deriveExtractor } from './extractor.ts';
import type { Workflow, WorkflowNode } from './schema.ts';
import { type StaticCheckOptions, withStaticCheck } from './static-read.ts';

/** The extraction node: a verified deterministic extractor when the page allows, else the model's. */
export async function dataNode(
  alias: string,
  data: Record<string, unknown>,
  instruction: string,
  schema: Record<string, unknown> | undefined,
  page: Page | undefined,
): Promise<{ node: WorkflowNode; why?: string }> {
  const derived = page
    ? await deriveExtractor(page, data, schema)
    : { ok: false as const, reason: 'no page to check selectors on' };
  if (derived.ok)
    return {
      node: {
        alias,
        description: 'read the data with the selectors checked on the recorded page',
        type: 'browser_query',
        config: {
          method: 'extract',
          extractor: derived.extractor,
          instruction,
          ...(schema ? { schema } : {}),
          store_variable: true,
        },
      },
    };
  return {
    node: {
      alias,
      description: `the model reads the data (no extractor: ${derived.reason})`,
      type: 'browser_ai_query',
      config: { method: 'extract', instruction, ...(schema ? { schema } : {}), store_variable: true },
    },
    why: derived.reason,
  };
}

export interface ExtractSample {
  url: string;
  instruction: string;
  schema?: Record<string, unknown>;
  /** What the model returned on the page. */
  data: unknown;
  status?: string;
  input?: Record<string, string>;
  name?: string;
  runId?: string;
  sampleId?: string;
}

export interface CompileOptions {
  /**
   * Check whether replay can read the page without a browser (static-read.ts): the extractors on
   * the served HTML, fetched under this guard policy, against `page`. Absent: not checked.
   */
  staticCheck?: StaticCheckOptions;
}

/** An extract-mode sample → navigate + extractor (verified on `page`, showing the sample's URL). */
export async function compileExtractSample(
  page: Page,
  sample: ExtractSample,
  opts: CompileOptions = {},
): Promise<Workflow> {
  if (sample.status && sample.status !== 'done')
    throw new CompileError(
      `sample ${sample.sampleId ?? ''} did not succeed (status ${sample.status}); only a successful sample compiles`,
    );
  if (!sample.data || typeof sample.data !== 'object' || Array.isArray(sample.data))
    throw new CompileError('the sample has no data object to compile an extraction from');
  const lifter = new InputLifter(sample.input ?? {});
  const { node } = await dataNode(
    'data',
    sample.data as Record<string, unknown>,
    sample.instruction,
    sample.schema,
    page,
  );
  const nodes = [navigateNode('open_page', lifter.url(sample.url), 'open the page'), node];
  const compiled = finish({
    name: sample.name ?? `extraction: ${sample.instruction.slice(0, 80)}`,
    version: 1,
    inputs: lifter.inputs,
    nodes,
    source: {
      kind: 'extract',
      ...(sample.runId ? { runId: sample.runId } : {}),
      ...(sample.sampleId ? { sampleId: sample.sampleId } : {}),
      url: sample.url,
    },
  });
  return opts.staticCheck ? withStaticCheck(compiled, page, opts.staticCheck) : compiled;
}
