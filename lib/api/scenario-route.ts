/**
 * `POST /v1/scenarios`: a step list carried out on one page within the request's deadline, each
 * step proved by its verifications. With `urls` (many pages) or `async: true` it starts a run in
 * mode "scenario" instead (the same request `POST /v1/runs` takes, so the same limits) and answers
 * 202 with the run id. Answers with the status (passed / stuck / infeasible /
 * failed), the step it ended on, every step's verifications as evidence, usage, and — for a passed
 * scenario with `compile: true` — the workflow that replays it without a model.
 */
import { randomUUID } from 'node:crypto';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { OpError } from '../ops/types.ts';
import { redactText } from '../perception/redact.ts';
import { compileScenario } from '../scenarios/compile.ts';
import { runScenario } from '../scenarios/run-scenario.ts';
import { ScenarioSchema } from '../scenarios/spec.ts';
import { storesFromEnv } from '../store/config.ts';
import { runEvidencePrefix, sampleEvidenceKey } from '../store/keys.ts';
import type { EvidenceStore } from '../store/ports.ts';
import {
  admitUrl,
  deadlineOf,
  HttpUrl,
  navigationGuard,
  onFreshPage,
  pageRoute,
  requireModel,
  SecretVariables,
  TimeoutMs,
  UsageBody,
  usageBody,
} from './page-route.ts';
import type { OpDeps } from './run-op.ts';
import { ErrorBody, ModelChoice } from './schemas.ts';

export const ScenarioRequest = z
  .object({
    url: HttpUrl.optional().describe('page the scenario starts on, in a fresh browser context'),
    urls: z
      .array(HttpUrl)
      .min(1)
      .max(10_000)
      .optional()
      .describe('many pages: a run in mode "scenario", one sample per URL (answers 202 with the run id)'),
    async: z.boolean().optional().describe('start a run even for one url (answers 202 with the run id)'),
    concurrency: z.number().int().min(1).max(1000).optional().describe('a run: samples worked on at once'),
    steps: ScenarioSchema.shape.steps,
    vision: ScenarioSchema.shape.vision,
    variables: SecretVariables,
    model: ModelChoice.optional(),
    compile: z.boolean().optional().describe('a passed scenario answers with the workflow that replays it'),
    runId: z
      .string()
      .min(1)
      .max(120)
      .regex(/^[\w.-]+$/, 'letters, digits, _ . - only')
      .optional(),
    timeoutMs: TimeoutMs,
  })
  .strict()
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((b.url === undefined) === (b.urls === undefined))
      issue(b.url === undefined ? 'url' : 'urls', 'give either url (one page) or urls (a run over many)');
    if (!asRun(b)) return;
    // A run's spec is stored: secrets are never written into it.
    if (b.variables)
      issue('variables', 'not accepted for a scenario run (its spec is stored; secrets are not)');
    if (b.compile)
      issue('compile', 'not for a run: compile a passed sample with POST /v1/scenarios on its url');
    if (b.runId) issue('runId', 'a run gets its own id');
  })
  .openapi('ScenarioRequest');

type Request = z.infer<typeof ScenarioRequest>;
const asRun = (b: { urls?: unknown; async?: boolean }) => b.urls !== undefined || b.async === true;

const Verification = z.object({
  check: z.string(),
  expected: z.string().optional(),
  ok: z.boolean(),
  actual: z.string(),
  message: z.string(),
});

export const ScenarioResponse = z
  .object({
    runId: z.string(),
    status: z.enum(['passed', 'stuck', 'infeasible', 'failed']),
    reason: z.string().optional(),
    failedStep: z.number().optional().describe('1-based step the scenario ended on'),
    steps: z.array(
      z.object({
        index: z.number(),
        do: z.string(),
        expect: z.string().optional(),
        status: z.enum(['complete', 'stuck', 'infeasible', 'failed', 'not_run']),
        iterations: z.number(),
        reason: z.string().optional(),
        verifications: z.array(Verification),
      }),
    ),
    url: z.string(),
    usage: UsageBody,
    workflow: z.unknown().optional(),
    notCarried: z.array(z.string()).optional().describe('verifications the compiled workflow does not check'),
    evidence: z.object({
      prefix: z.string(),
      files: z.array(z.object({ key: z.string(), sha256: z.string() })),
    }),
  })
  .openapi('ScenarioResponse');

export interface ScenarioRouteDeps extends OpDeps {
  /** Where a tenant's scenario evidence goes (default: the configured store). */
  agentStores?: (tenant: string) => { evidence: EvidenceStore };
  requestTimeoutMs?: number;
  /** The runs API (lib/api/runs.ts): present when this deployment runs runs. */
  runs?: object;
}

const configuredEvidence = (() => {
  let store: EvidenceStore | undefined;
  return () => {
    store ??= storesFromEnv().evidence;
    return { evidence: store };
  };
})();

const route = pageRoute({
  path: '/v1/scenarios',
  summary: 'Carry out a step list on a page and prove each step',
  request: ScenarioRequest,
  ok: {
    description: 'the scenario ended (passed, stuck, infeasible) or failed (model error, deadline)',
    schema: ScenarioResponse,
  },
  own: {
    202: {
      description:
        'urls or async: a run in mode "scenario" was started ({ runId, status: queued }; see /v1/runs/{id})',
      content: { 'application/json': { schema: z.object({ runId: z.string(), status: z.string() }) } },
    },
    409: {
      description: 'urls or async: an execution of the run is already under way (as POST /v1/runs)',
      content: { 'application/json': { schema: ErrorBody } },
    },
    501: {
      description: 'urls or async on a server without the runs API',
      content: { 'application/json': { schema: ErrorBody } },
    },
    503: {
      description: 'urls or async: the orchestrator refused to start the run (as POST /v1/runs; retryable)',
      content: { 'application/json': { schema: ErrorBody } },
    },
  },
});

type Env = { Variables: { tenant: string } };

export function registerScenarioRoute(app: OpenAPIHono<Env>, deps: ScenarioRouteDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    if (asRun(body)) return startRun(app, c.req.raw, body, deps) as never;
    if (!body.url) throw new OpError('invalid', 'url: required');
    const tenant = c.get('tenant');
    await admitUrl(body.url, deps);
    const llm = await requireModel(body, deps, 'scenarios need');
    const scenario = ScenarioSchema.parse({
      steps: body.steps,
      ...(body.vision ? { vision: body.vision } : {}),
    });
    const runId = body.runId ?? `scenario_${randomUUID()}`;
    const { evidence } = (deps.agentStores ?? configuredEvidence)(tenant);
    const secrets = body.variables;
    const files: { key: string; sha256: string }[] = [];
    const save = async (file: string, data: Uint8Array | string, type: string) => {
      const obj = await evidence.put(sampleEvidenceKey(tenant, runId, 'main', file), data, type);
      files.push({ key: obj.key, sha256: obj.sha256 });
    };
    return onFreshPage(body.url, deps, async (page) => {
      const result = await runScenario(scenario, {
        page,
        llm,
        checkNavigation: navigationGuard(deps),
        ...(secrets ? { variables: secrets } : {}),
        deadline: deadlineOf(body, deps),
        // Compiling: coordinate commands must state why no element of the outline would do.
        ...(body.compile ? { scriptMode: true } : {}),
      });
      // The page where a failed scenario ended: what the step saw. Skipped when secrets are set
      // (a screenshot could show one); the verifications are the evidence then.
      if (result.status !== 'passed' && !secrets)
        await save(
          `step_${result.failedStep ?? 0}_end.png`,
          await page.screenshot({ type: 'png' }),
          'image/png',
        );
      const { memory: _memory, ...kept } = result;
      await save('scenario.json', redactText(JSON.stringify(kept, null, 2), secrets), 'application/json');
      const compiled = body.compile && result.status === 'passed' ? compileScenario(result) : undefined;
      return c.json(
        {
          runId,
          status: result.status,
          ...(result.reason ? { reason: result.reason } : {}),
          ...(result.failedStep ? { failedStep: result.failedStep } : {}),
          steps: result.steps,
          url: result.url,
          usage: usageBody(result.usage),
          ...(compiled ? { workflow: compiled.workflow, notCarried: compiled.notCarried } : {}),
          evidence: { prefix: runEvidencePrefix(tenant, runId), files },
        },
        200,
      );
    });
  });
}

/**
 * A scenario over many URLs (or `async`): the run `POST /v1/runs` would start for the spec
 * `{ scenario: { steps }, model, concurrency }` and these samples — sent through that route, so the
 * key's run limits, the server's caps and the launch answers are the same — and its answer as is.
 */
async function startRun(
  app: OpenAPIHono<Env>,
  raw: globalThis.Request,
  body: Request,
  deps: ScenarioRouteDeps,
): Promise<Response> {
  if (!deps.runs)
    return Response.json(
      { error: { kind: 'unavailable', message: 'this server has no runs API; send one url without async' } },
      { status: 501 },
    );
  const urls = body.urls ?? [body.url!];
  const spec = {
    scenario: { steps: body.steps, ...(body.vision ? { vision: body.vision } : {}) },
    ...(body.model ? { model: body.model } : {}),
    ...(body.concurrency ? { concurrency: body.concurrency } : {}),
    ...(body.timeoutMs ? { wallClockSeconds: Math.ceil(body.timeoutMs / 1000) } : {}),
  };
  return app.fetch(
    new Request(new URL('/v1/runs', raw.url), {
      method: 'POST',
      headers: { authorization: raw.headers.get('authorization') ?? '', 'content-type': 'application/json' },
      body: JSON.stringify({
        spec,
        samples: urls.map((url, i) => ({ sampleId: `s${String(i + 1).padStart(4, '0')}`, url })),
      }),
    }),
  );
}
