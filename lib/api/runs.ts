/**
 * The runs API: start a run (spec + samples, CSV text, or a prompt), cancel or resume it. Its reads
 * (status, results, report, evidence) are in run-reads.ts, the start body in runs-start.ts, the run
 * limits and launch answers in runs-admit.ts, the OpenAPI entries in runs-doc.ts. Every read and
 * write is scoped to the caller's tenant: another tenant's run id is simply not found.
 */
import type { Context, Hono } from 'hono';
import {
  createRun,
  type ExecutionInput,
  type ItemsLocation,
  RunNotFound,
  resumeInput,
} from '../runs/run-records.ts';
import { SamplesError } from '../runs/samples.ts';
import { DEFAULT_RUN_CONCURRENCY, SpecError } from '../runs/task-spec.ts';
import { checkRunWorkflow } from '../runs/workflow-versions.ts';
import { idProblem } from '../store/names.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { invalid, notFound, registerRunReadRoutes } from './run-reads.ts';
import { launchOrAnswer, reserveRun } from './runs-admit.ts';
import { documentRunRoutes, type Registry } from './runs-doc.ts';
import { parseStart, StartBody } from './runs-start.ts';

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

type Env = { Variables: { tenant: string } };

export function registerRunRoutes(app: Hono<Env>, deps: RunsApiDeps): void {
  const { runStore, evidence } = deps;
  /** Runs per key being started right now (created, not yet launched). */
  const starting = new Map<string, number>();
  if ('openAPIRegistry' in app) documentRunRoutes(app.openAPIRegistry as Registry);
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
