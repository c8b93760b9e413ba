/**
 * The runs API: start a run (spec + samples, CSV text, or a prompt), cancel or resume it; its reads
 * (status, results, report, evidence) are in run-reads.ts. Every read and write is scoped to the caller's tenant: another
 * tenant's run id is simply not found.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import {
  createRun,
  type ExecutionInput,
  type ItemsLocation,
  RunNotFound,
  resumeInput,
} from '../runs/run-records.ts';
import { type Sample, SamplesError, samplesFromCsv, samplesFromList } from '../runs/samples.ts';
import { DEFAULT_RUN_CONCURRENCY, parseTaskSpec, SpecError, type TaskSpec } from '../runs/task-spec.ts';
import { checkRunWorkflow } from '../runs/workflow-versions.ts';
import { idProblem } from '../store/names.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { authedResponses, type DocResponse } from './openapi-responses.ts';
import { invalid, notFound, registerRunReadRoutes } from './run-reads.ts';

export interface RunsApiDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** Starts the state machine for this input (locally in the background, or an AWS execution). */
  launch(input: ExecutionInput): Promise<void>;
  /** The tenant's workflows: a mode "workflow" spec naming an id that is not there is a 400 up front. */
  workflows?: WorkflowStore;
  /** Whether an execution of the run is under way (a second one would only duplicate work). */
  isActive?(tenant: string, runId: string): Promise<boolean>;
  /** Stops a running execution, if this deployment can (the run is marked cancelled either way). */
  stop?(tenant: string, runId: string): Promise<void>;
  items?: ItemsLocation;
  /**
   * What one key may ask of this deployment (the Node server, where every run shares one machine):
   * runs in progress at once (a further start or resume is a 429), and samples at once per run.
   */
  limits?: { runsPerTenant: number; concurrency: number; samplesPerRun?: number };
  /** The key's runs in progress here, for `limits.runsPerTenant`. */
  activeRuns?(tenant: string): Promise<number>;
}

/**
 * A place for one more run of the key (release it once the run is launched, or not), or the 429
 * when the key already has its most runs in progress. Starts not yet launched count as well: each
 * request counts itself before its first await, so requests sent together cannot all slip in.
 */
async function reserveRun(
  c: Context<Env>,
  deps: RunsApiDeps,
  starting: Map<string, number>,
): Promise<{ release: () => void } | { refused: Response }> {
  const most = deps.limits?.runsPerTenant;
  if (!most || !deps.activeRuns) return { release: () => undefined };
  const tenant = c.get('tenant');
  const before = starting.get(tenant) ?? 0;
  starting.set(tenant, before + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const left = (starting.get(tenant) ?? 1) - 1;
    if (left > 0) starting.set(tenant, left);
    else starting.delete(tenant);
  };
  // A start launched meanwhile may be counted twice (here and as active): never once too few.
  if ((await deps.activeRuns(tenant)) + before < most) return { release };
  release();
  const refused = c.json(
    {
      error: {
        kind: 'limit',
        message: `this API key already has ${most} run${most === 1 ? '' : 's'} in progress, the most one key may have at once (BROWSERFN_MAX_RUNS_PER_KEY); start this one when one of them has finished or been cancelled`,
        retryable: true,
      },
    },
    429,
    { 'retry-after': '30' },
  );
  return { refused };
}

type Env = { Variables: { tenant: string } };

/**
 * A launch that did not start: `conflict` when an execution of the run already runs (409),
 * `unavailable` when the orchestrator refused to start one (503; the run is marked failed, and a
 * resume may try again).
 */
export class LaunchError extends Error {
  override name = 'LaunchError';
  constructor(
    readonly kind: 'conflict' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

/** Launches the run; a LaunchError becomes its JSON answer (with the run id), anything else throws. */
async function launchOrAnswer(c: Context<Env>, deps: RunsApiDeps, input: ExecutionInput) {
  try {
    await deps.launch(input);
    return undefined;
  } catch (err) {
    if (!(err instanceof LaunchError)) throw err;
    return c.json(
      { error: { kind: err.kind, message: err.message }, runId: input.runId },
      err.kind === 'conflict' ? 409 : 503,
    );
  }
}

const StartBody = z
  .object({
    spec: z.record(z.string(), z.unknown()).optional(),
    samples: z
      .array(
        z.object({
          sample_id: z.string().optional(),
          sampleId: z.string().optional(),
          url: z.string(),
          input: z.record(z.string(), z.string()).optional(),
        }),
      )
      .optional(),
    csv: z.string().optional().describe('CSV text with a header "sample_id,url,…"'),
    prompt: z.string().min(1).optional().describe('plan the spec and samples from plain language'),
    model: z.string().optional(),
    concurrency: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

function parseStart(
  body: z.infer<typeof StartBody>,
): { spec: TaskSpec; samples: Sample[] } | { prompt: string } {
  if (body.prompt) {
    if (body.spec || body.samples || body.csv)
      throw new SpecError('give either prompt, or spec with samples/csv');
    return { prompt: body.prompt };
  }
  if (!body.spec)
    throw new SpecError('spec: required (or give prompt)', [{ path: 'spec', message: 'required' }]);
  const spec = parseTaskSpec({
    ...body.spec,
    ...(body.model ? { model: body.model } : {}),
    ...(body.concurrency ? { concurrency: body.concurrency } : {}),
  });
  // A file path would read this server's disk on the caller's behalf.
  if (spec.authProfile?.file)
    throw new SpecError(
      'spec.authProfile.file: not accepted over the API; store the profile and give its key',
      [{ path: 'spec.authProfile.file', message: 'not accepted over the API' }],
    );
  if ((body.samples ? 1 : 0) + (body.csv !== undefined ? 1 : 0) !== 1)
    throw new SamplesError('give the samples as either "samples" (a list) or "csv" (text)');
  const samples = body.csv !== undefined ? samplesFromCsv(body.csv, 'csv') : samplesFromList(body.samples!);
  return { spec, samples };
}

type Registry = { registerPath(route: Record<string, unknown>): void };

/** The runs routes in /openapi.json (the handlers below validate on their own). */
function documentRoutes(registry: Registry): void {
  const json = (description: string) => ({
    description,
    content: { 'application/json': { schema: { type: 'object' } } },
  });
  const noRun = json('no run with this id for this key');
  const badId = json('the run id (or another field, named) is invalid');
  const id = { params: z.object({ id: z.string().describe('run id') }) };
  const doc = (
    method: string,
    path: string,
    summary: string,
    responses: Record<number, DocResponse>,
    extra: Record<string, unknown> = {},
  ) =>
    registry.registerPath({
      method,
      path,
      summary,
      security: [{ bearer: [] }],
      // Reads count against the key's run-read limit; starts and resumes against its runs in progress.
      responses: authedResponses(responses, {
        ...(method === 'get' ? { limit: 'reads' as const } : {}),
        ...(path === '/v1/runs' || path.endsWith('/resume') ? { limit: 'runs' as const } : {}),
      }),
      ...extra,
    });
  const launch = {
    409: json('an execution of this run is already under way'),
    503: json('the orchestrator refused to start the run (it is marked failed; retryable)'),
  };
  doc(
    'post',
    '/v1/runs',
    'Start a run: spec + samples (list or CSV text), or a prompt to plan from',
    {
      202: json('{ runId, status: queued }: the run is created and launched'),
      400: json('invalid body: the message names the field (spec, samples, csv, concurrency…)'),
      ...launch,
    },
    { request: { body: { content: { 'application/json': { schema: StartBody } }, required: true } } },
  );
  doc(
    'get',
    '/v1/runs/{id}',
    'Run status with counts, tokens and cost so far',
    { 200: json('the run: status, counts, tokens, cost'), 400: badId, 404: noRun },
    { request: id },
  );
  doc(
    'get',
    '/v1/runs/{id}/results',
    'Results as JSON or as combined CSV (?format=csv)',
    {
      200: {
        description: 'the results (JSON), or combined.csv with one column per output field',
        content: {
          'application/json': { schema: { type: 'object' } },
          'text/csv': { schema: { type: 'string' } },
        },
      },
      400: json('invalid run id, format or raw'),
      404: noRun,
    },
    {
      request: {
        ...id,
        query: z.object({
          format: z.enum(['json', 'csv']).optional(),
          raw: z.enum(['true', 'false']).optional().describe('CSV cells as extracted (no formula escaping)'),
        }),
      },
    },
  );
  doc(
    'get',
    '/v1/runs/{id}/report',
    'The self-contained HTML report',
    {
      200: { description: 'the HTML report', content: { 'text/html': { schema: { type: 'string' } } } },
      400: badId,
      404: noRun,
    },
    { request: id },
  );
  doc(
    'get',
    '/v1/runs/{id}/evidence/{path}',
    'One evidence file (a redirect to a presigned URL on S3)',
    {
      200: { description: 'the file, with its content type' },
      302: { description: 'a redirect to a short-lived presigned URL of the file (S3)' },
      400: json('invalid run id or evidence path'),
      404: json('no such run, or no such evidence file'),
    },
    { request: { params: z.object({ id: z.string(), path: z.string() }) } },
  );
  doc(
    'post',
    '/v1/runs/{id}/cancel',
    'Cancel a run; unfinished samples stay resumable',
    {
      202: json('{ runId, status: cancelled }'),
      400: badId,
      404: noRun,
      409: json('the run has already ended'),
    },
    { request: id },
  );
  doc(
    'post',
    '/v1/runs/{id}/resume',
    'Resume: finished samples are skipped, the rest continue',
    { 202: json('{ runId, status: running }'), 400: badId, 404: noRun, ...launch },
    { request: id },
  );
}

export function registerRunRoutes(app: Hono<Env>, deps: RunsApiDeps): void {
  const { runStore, evidence } = deps;
  /** Runs per key being started right now (created, not yet launched). */
  const starting = new Map<string, number>();
  if ('openAPIRegistry' in app) documentRoutes(app.openAPIRegistry as Registry);
  // One rule for run ids at the edge: an id the stores could never hold is a 400, not a 500 there.
  const checkRunId = async (c: Context<Env>, next: () => Promise<void>) => {
    const problem = idProblem('id', c.req.param('id') ?? '');
    if (problem) return invalid(c, problem, 'id');
    await next();
  };
  app.use('/v1/runs/:id', checkRunId);
  app.use('/v1/runs/:id/*', checkRunId);

  app.post('/v1/runs', async (c) => {
    let raw: unknown;
    try {
      raw = await c.req.json();
    } catch {
      return invalid(c, 'body must be JSON');
    }
    const parsed = StartBody.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      return invalid(c, `${i?.path.join('.') || '(body)'}: ${i?.message}`, i?.path.join('.') || '(body)');
    }
    let start: ReturnType<typeof parseStart>;
    try {
      start = parseStart(parsed.data);
      if ('spec' in start) await checkRunWorkflow(deps.workflows, c.get('tenant'), start.spec);
    } catch (err) {
      if (err instanceof SpecError) return invalid(c, err.message, err.issues[0]?.path ?? 'spec');
      if (err instanceof SamplesError) return invalid(c, err.message, 'samples');
      throw err;
    }
    const cap = deps.limits?.samplesPerRun;
    if (cap && !('prompt' in start) && start.samples.length > cap) {
      const path = parsed.data.csv !== undefined ? 'csv' : 'samples';
      return invalid(
        c,
        `${path}: at most ${cap} samples per run on this server (BROWSERFN_RUN_MAX_SAMPLES), got ${start.samples.length}; split them over several runs`,
        path,
      );
    }
    const most = deps.limits?.concurrency;
    const asked = 'prompt' in start ? parsed.data.concurrency : start.spec.concurrency;
    if (most && asked !== undefined && asked > most) {
      const path = 'prompt' in start || parsed.data.concurrency ? 'concurrency' : 'spec.concurrency';
      return invalid(
        c,
        `${path}: at most ${most} samples at once on this server (BROWSERFN_RUN_MAX_CONCURRENCY), got ${asked}`,
        path,
      );
    }
    // A planned run gets the spec's default concurrency, unless this server allows less.
    const planned = most ? Math.min(asked ?? DEFAULT_RUN_CONCURRENCY, most) : asked;
    const place = await reserveRun(c, deps, starting);
    if ('refused' in place) return place.refused;
    try {
      const tenant = c.get('tenant');
      const input = await createRun(
        runStore,
        evidence,
        'prompt' in start
          ? {
              tenant,
              prompt: start.prompt,
              ...(parsed.data.model ? { model: parsed.data.model } : {}),
              ...(planned ? { concurrency: planned } : {}),
            }
          : { tenant, spec: start.spec, samples: start.samples },
        deps.items,
      );
      const refused = await launchOrAnswer(c, deps, input);
      if (refused) return refused;
      return c.json({ runId: input.runId, status: 'queued' }, 202);
    } finally {
      place.release();
    }
  });

  registerRunReadRoutes(app, deps);

  app.post('/v1/runs/:id/cancel', async (c) => {
    const tenant = c.get('tenant');
    const runId = c.req.param('id');
    const run = await runStore.getRun(tenant, runId);
    if (!run) return notFound(c, runId);
    if (run.status === 'done' || run.status === 'failed')
      return c.json(
        { error: { kind: 'conflict', message: `run ${runId} has already ended (${run.status})` } },
        409,
      );
    await runStore.updateRun(tenant, runId, { status: 'cancelled', reason: 'cancelled by the caller' });
    await deps.stop?.(tenant, runId);
    return c.json({ runId, status: 'cancelled' }, 202);
  });

  app.post('/v1/runs/:id/resume', async (c) => {
    const tenant = c.get('tenant');
    const runId = c.req.param('id');
    if (!(await runStore.getRun(tenant, runId))) return notFound(c, runId);
    if (await deps.isActive?.(tenant, runId))
      return c.json({ error: { kind: 'conflict', message: `run ${runId} is still running` } }, 409);
    const place = await reserveRun(c, deps, starting);
    if ('refused' in place) return place.refused;
    try {
      const input = await resumeInput(runStore, evidence, tenant, runId, {}, deps.items);
      const refused = await launchOrAnswer(c, deps, input);
      if (refused) return refused;
      return c.json({ runId, status: 'running' }, 202);
    } catch (err) {
      if (err instanceof RunNotFound) return notFound(c, runId);
      throw err;
    } finally {
      place.release();
    }
  });
}
