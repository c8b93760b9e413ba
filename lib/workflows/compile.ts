/**
 * Compiling what an AI run did into a workflow that replays it without the model: a successful
 * agent sample (its action log + result), an extract-mode sample, or a sequence of acts. Every
 * element action becomes a pinned step (candidates, the words to heal by, post-conditions), the
 * start URL and typed per-sample values become inputs, secrets stay `%name%`. A failed sample does
 * not compile: replaying a failure would only fail faster.
 */
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { type CompileOptions, dataNode } from './compile-extract.ts';
import {
  Aliases,
  CompileError,
  finishCompiled as finish,
  InputLifter,
  navigateNode,
  pinnedNode,
  type RecordedAction,
} from './compile-steps.ts';
import { type LocatorCandidate, LocatorCandidateSchema, type Workflow, type WorkflowNode } from './schema.ts';
import { staticShape, withStaticCheck } from './static-read.ts';

export { type ActRecord, compileActs } from './compile-acts.ts';
export { type CompileOptions, compileExtractSample, type ExtractSample } from './compile-extract.ts';
export { CompileError } from './compile-steps.ts';

const Recorded = z.object({
  role: z.string(),
  name: z.string(),
  candidates: z.array(LocatorCandidateSchema).min(1),
  after: z
    .object({
      url: z.string(),
      navigated: z.boolean(),
      value: z.string().optional(),
      checked: z.boolean().optional(),
      appeared: z.string().optional(),
    })
    .optional(),
});
const LoggedStep = z.object({
  url: z.string(),
  actions: z.array(
    z.object({
      tool: z.string(),
      input: z.record(z.string(), z.unknown()),
      ok: z.boolean(),
      recorded: Recorded.optional(),
    }),
  ),
});
const SampleResult = z.object({
  status: z.string(),
  reason: z.string().optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  url: z.string().optional(),
});

export interface AgentSample {
  /** action_log.json as stored. */
  actionLog: unknown;
  /** result.json as stored. */
  result: unknown;
  /** The sample's input columns (their values typed on the page become inputs). */
  input?: Record<string, string>;
  /** The task's goal: the instruction of a model extraction when the result cannot be pinned. */
  goal?: string;
  name?: string;
  runId?: string;
  sampleId?: string;
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const got = schema.safeParse(value);
  if (!got.success)
    throw new CompileError(
      `${what} is not in the expected shape: ${got.error.issues[0]?.path.join('.') || '(root)'} ${got.error.issues[0]?.message}`,
    );
  return got.data;
}

const NOT_REPLAYABLE = new Set([
  'scroll',
  'wait',
  'screenshot',
  'save_progress',
  'done',
  'fail',
  'step_done',
]);

/** The element a computer-use click was recorded on, as a pinned target's identity and candidates. */
function pointerTarget(target: unknown, step: number): Omit<RecordedAction, 'method' | 'urlBefore'> {
  const t = target as
    | { locator?: { xpath?: string; role?: string; name?: string }; tag?: string }
    | undefined;
  const xpath = t?.locator?.xpath;
  if (!xpath)
    throw new CompileError(
      `step ${step + 1}: a computer-use click landed on no element, so it cannot be pinned`,
    );
  if (t.tag === 'canvas')
    throw new CompileError(
      `step ${step + 1}: a click at a point of a <canvas> cannot be pinned to an element (where inside it matters); keep that step to the computer-use agent`,
    );
  const role = t.locator?.role ?? '';
  const name = t.locator?.name ?? '';
  const candidates: LocatorCandidate[] = [{ kind: 'xpath', value: xpath }];
  if (role && name) candidates.unshift({ kind: 'role', role, name });
  return { role, name, candidates };
}

/**
 * An agent sample → workflow. With `page` left on the sample's final page, the result's data is
 * pinned as a deterministic extractor checked against that page; without it, it stays a model
 * extraction of the goal.
 */
export async function compileAgentSample(
  sample: AgentSample,
  opts: { page?: Page } & CompileOptions = {},
): Promise<Workflow> {
  const result = parse(SampleResult, sample.result, 'result.json');
  if (result.status !== 'done')
    throw new CompileError(
      `sample ${sample.sampleId ?? ''} did not succeed (status ${result.status}${result.reason ? `: ${result.reason}` : ''}); only a successful sample compiles`.replace(
        '  ',
        ' ',
      ),
    );
  const steps = parse(z.array(LoggedStep), sample.actionLog, 'action_log.json');
  if (steps.length === 0) throw new CompileError('the action log is empty: nothing to compile');
  const lifter = new InputLifter(sample.input ?? {});
  const aliases = new Aliases();
  const startUrl = steps[0]!.url;
  const nodes: WorkflowNode[] = [
    navigateNode(aliases.make('open_start_page'), lifter.url(startUrl), 'open the start page'),
  ];
  // The element a computer-use click landed on: where its typing and key presses went.
  let pointer: Omit<RecordedAction, 'method' | 'urlBefore'> | undefined;
  for (const [s, step] of steps.entries()) {
    const ok = step.actions.filter((a) => a.ok);
    const nextUrl = steps[s + 1]?.url ?? result.url;
    for (const [i, a] of ok.entries()) {
      if (NOT_REPLAYABLE.has(a.tool)) continue;
      if (a.tool === 'goto') {
        const url = String(a.input.url ?? '');
        nodes.push(
          navigateNode(
            aliases.make('go_to_page'),
            url === startUrl ? lifter.url(startUrl) : lifter.lift(url),
            `go to ${url}`,
          ),
        );
        continue;
      }
      if (a.tool === 'extract') {
        const schema =
          typeof a.input.schema === 'string'
            ? (JSON.parse(a.input.schema) as Record<string, unknown>)
            : undefined;
        nodes.push({
          alias: aliases.make('extract'),
          description: 'the model reads the page (as the agent did)',
          type: 'browser_ai_query',
          config: {
            method: 'extract',
            instruction: String(a.input.instruction ?? 'the requested data'),
            ...(schema ? { schema } : {}),
          },
        });
        continue;
      }
      if (a.tool.startsWith('computer.')) {
        const kind = a.tool.slice('computer.'.length);
        const last = i === ok.length - 1;
        if (kind === 'goto') {
          const url = String(a.input.url ?? '');
          nodes.push(navigateNode(aliases.make('go_to_page'), lifter.lift(url), `go to ${url}`));
        } else if (kind === 'click') {
          pointer = pointerTarget(a.input.target, s);
          nodes.push(
            pinnedNode(
              aliases.make(`click_${pointer.name || pointer.role}`),
              {
                ...pointer,
                method: 'click',
                urlBefore: step.url,
                after: last && nextUrl ? { url: nextUrl } : {},
              },
              undefined,
            ),
          );
        } else if (kind === 'type' && pointer) {
          const value = String(a.input.text ?? '');
          nodes.push(
            pinnedNode(
              aliases.make(`fill_${pointer.name || pointer.role}`),
              { ...pointer, method: 'fill', value, urlBefore: step.url, after: {} },
              lifter.lift(value),
            ),
          );
        } else if (kind === 'keys' && pointer) {
          const key = (a.input.chord as string[] | undefined)?.join('+') ?? '';
          nodes.push(
            pinnedNode(
              aliases.make(`press_${key}`),
              {
                ...pointer,
                method: 'press',
                value: key,
                urlBefore: step.url,
                after: last && nextUrl ? { url: nextUrl } : {},
              },
              undefined,
            ),
          );
        }
        // Moves, scrolls, waits and screenshots were how the model looked around: nothing to replay.
        continue;
      }
      if (!a.recorded) {
        if (['click', 'type', 'select_option'].includes(a.tool))
          throw new CompileError(
            `step ${s + 1}: the ${a.tool} was logged without its element's candidates (a run from before workflows were recorded); run the sample again to compile it`,
          );
        continue;
      }
      const r = a.recorded;
      const last = i === ok.length - 1;
      const checkable = ['checkbox', 'switch', 'radio', 'menuitemcheckbox'].includes(r.role);
      const method: RecordedAction['method'] =
        a.tool === 'type'
          ? 'fill'
          : a.tool === 'select_option'
            ? 'select'
            : checkable && r.after?.checked !== undefined
              ? r.after.checked
                ? 'check'
                : 'uncheck'
              : 'click';
      const value =
        a.tool === 'type'
          ? String(a.input.text ?? '')
          : a.tool === 'select_option'
            ? String(a.input.option ?? '')
            : undefined;
      const urlAfter = last && nextUrl ? nextUrl : r.after?.url;
      const rec: RecordedAction = {
        method,
        role: r.role,
        name: r.name,
        candidates: r.candidates,
        ...(value !== undefined ? { value } : {}),
        urlBefore: step.url,
        after: {
          ...(urlAfter ? { url: urlAfter } : {}),
          ...(r.after?.value !== undefined ? { value: r.after.value } : {}),
          ...(r.after?.checked !== undefined ? { checked: r.after.checked } : {}),
          ...(r.after?.appeared && !r.after.navigated ? { appeared: r.after.appeared } : {}),
        },
      };
      const submit = a.tool === 'type' && a.input.submit === true;
      nodes.push(
        pinnedNode(
          aliases.make(`${method}_${r.name || r.role}`),
          submit ? { ...rec, after: { ...rec.after, url: step.url } } : rec,
          value !== undefined ? lifter.lift(value) : undefined,
        ),
      );
      if (submit)
        nodes.push(
          pinnedNode(
            aliases.make(`submit_${r.name || r.role}`),
            { ...rec, method: 'press', value: 'Enter', after: urlAfter ? { url: urlAfter } : {} },
            undefined,
          ),
        );
    }
  }
  const data = result.data ?? {};
  if (Object.keys(data).length > 0) {
    if (!opts.page && !sample.goal)
      throw new CompileError(
        'the result has data but neither the final page nor the goal was given to read it again',
      );
    const { node } = await dataNode(
      'result',
      data,
      sample.goal ?? 'the data the task asked for',
      undefined,
      opts.page,
    );
    nodes.push(node);
  }
  const compiled = finish({
    name: sample.name ?? `compiled from sample ${sample.sampleId ?? ''}`.trim(),
    version: 1,
    inputs: lifter.inputs,
    nodes,
    source: {
      kind: 'agent',
      ...(sample.runId ? { runId: sample.runId } : {}),
      ...(sample.sampleId ? { sampleId: sample.sampleId } : {}),
      url: startUrl,
    },
  });
  // Only a sample that opened a page and read it can go without the browser; its final page is the
  // one it read.
  return opts.staticCheck && opts.page && staticShape(compiled).ok
    ? withStaticCheck(compiled, opts.page, opts.staticCheck)
    : compiled;
}
