import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { act } from '../ops/act.ts';
import { extract } from '../ops/extract.ts';
import { explainGoneAct } from '../ops/gone.ts';
import { observe } from '../ops/observe.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { type AgentRouteDeps, registerAgentRoute } from './agent-route.ts';
import { limitAnswer, registerOpRoutes, setUpBase } from './app-base.ts';
import { assertKeyRing, type KeyRing } from './auth.ts';
import { DEMO_CATALOGUE_PATH, DEMO_PATH, demoCataloguePage, demoPage, demoProductPage } from './demo.ts';
import { registerExploreRoute } from './explore-route.ts';
import { DEFAULT_READS_PER_TENANT, FairShare, RUN_READS_AT_ONCE } from './fair-share.ts';
import { registerJudgeRoute } from './judge-route.ts';
import { deadline, validationHook } from './op-routes.ts';
import { documentHealth, OPENAPI_INFO } from './openapi-responses.ts';
import { registerRepairRoute } from './repair-route.ts';
import { registerReportLinkRoute, reportLinkAuth, reportLinkKey } from './report-link.ts';
import { type OpDeps, withPage } from './run-op.ts';
import { type RunsApiDeps, registerRunRoutes } from './runs.ts';
import { registerScenarioRoute } from './scenario-route.ts';
import type { StagehandService } from './stagehand/index.ts';
import { type CallRate, callRateWait, DEFAULT_CALLS_PER_TENANT, TenantGate } from './tenant-gate.ts';
import { registerWorkflowShowRoute } from './workflow-show.ts';
import { registerWorkflowRoutes } from './workflows.ts';

export interface AppDeps extends OpDeps, Pick<AgentRouteDeps, 'agentStores'> {
  keys: KeyRing;
  /** Whole-request deadline (default 120 s). */
  requestTimeoutMs?: number;
  /** Largest accepted body (default 1 MiB). */
  maxBodyBytes?: number;
  /** Stagehand v3 API mode, mounted under its prefix (see lib/api/stagehand). */
  stagehand?: StagehandService;
  /** The runs API (/v1/runs…); absent: those routes answer 404. */
  runs?: RunsApiDeps;
  /** act / observe / extract / agent calls one key may have in progress (default 8). */
  maxCallsPerTenant?: number;
  /**
   * Calls each key may start per second (act / observe / extract / agent), counted in a store every
   * server instance shares: the per-key limit that holds across Lambda instances too.
   */
  callRate?: CallRate | undefined;
  /** Run status, results, report and evidence reads one key may have in progress (default 16). */
  maxReadsPerTenant?: number;
  /** The workflow store (/v1/workflows…, lib/api/workflows.ts); absent: those routes answer 404. */
  workflows?: WorkflowStore;
  /** Signs report links (lib/api/report-link.ts); default BROWSERFN_REPORT_LINK_KEY, else one per process. */
  reportLinkKey?: Uint8Array;
}

/** The calls that open a page (or ask a model) and hold it until they answer. */
const PAGE_CALLS = new Set([
  '/v1/act',
  '/v1/observe',
  '/v1/extract',
  '/v1/agent',
  '/v1/scenarios',
  '/v1/repair',
  '/v1/explore',
  '/v1/workflows/plan',
  '/v1/workflows/compile',
]);
const isPageCall = (path: string) => PAGE_CALLS.has(path) || /^\/v1\/workflows\/[^/]+\/run$/.test(path);

type Env = {
  Variables: {
    tenant: string;
    /** The call's page work, which can outlast its answer (a deadline answers first). */
    pageWork?: Promise<unknown>;
  };
};

/** Every route and the methods it answers. */
const METHODS: Record<string, string[]> = {
  '/v1/act': ['POST'],
  '/v1/observe': ['POST'],
  '/v1/extract': ['POST'],
  '/v1/runs': ['POST'],
  '/v1/agent': ['POST'],
  '/healthz': ['GET', 'HEAD'],
  '/openapi.json': ['GET', 'HEAD'],
  [DEMO_PATH]: ['GET', 'HEAD'],
  [DEMO_CATALOGUE_PATH]: ['GET', 'HEAD'],
};

/** The longest a call's slot stays taken after its answer, while its page work winds down. */
const SLOT_HOLD_AFTER_ANSWER_MS = 30_000;

/**
 * The HTTP API as one hono app: the same object serves Node (`npm start`) and Lambda.
 * Validation errors name the field; every /v1 call needs a bearer key mapped to a tenant.
 */
export function createApp(deps: AppDeps): OpenAPIHono<Env> {
  assertKeyRing(deps.keys);
  const app = new OpenAPIHono<Env>({
    defaultHook: validationHook,
  });
  const timeoutMs = deps.requestTimeoutMs ?? 120_000;

  // A page of our own to try the API on, offline (the local server allows exactly this URL).
  app.get(DEMO_PATH, (c) => c.html(demoPage()));
  // …and a small catalogue (a list and a page per product) for extract, runs and workflows.
  app.get(DEMO_CATALOGUE_PATH, (c) => c.html(demoCataloguePage()));
  app.get(`${DEMO_CATALOGUE_PATH}/:slug`, (c) => {
    const page = demoProductPage(c.req.param('slug'));
    return page
      ? c.html(page)
      : c.html('<!doctype html><title>Not found</title><h1>No such product</h1>', 404);
  });
  const linkKey = deps.reportLinkKey ?? reportLinkKey();
  setUpBase(app, {
    keys: deps.keys,
    log: deps.log,
    maxBodyBytes: deps.maxBodyBytes,
    methodsOf: (path) => METHODS[path],
    info: OPENAPI_INFO,
    documentHealth,
    // A run report may also be opened by its signed link (?token=…), without the key.
    otherAuth: (c) => reportLinkAuth(c.req.method, c.req.path, c.req.query('token'), linkKey),
  });
  const rateAnswer = (c: Context, waitS: number) =>
    limitAnswer(
      c,
      `this API key has started its ${deps.callRate!.limit.ratePerSecond} calls per second (BROWSERFN_CALLS_PER_SECOND_PER_KEY); send this one again in ${waitS} s`,
      waitS,
    );
  const gate = new TenantGate(deps.maxCallsPerTenant ?? DEFAULT_CALLS_PER_TENANT);
  app.use('/v1/*', async (c, next) => {
    if (c.req.method !== 'POST' || !isPageCall(c.req.path)) return next();
    const tenant = c.get('tenant');
    const leave = gate.enter(tenant);
    if (!leave)
      return limitAnswer(
        c,
        `this API key already has ${gate.perTenant} call${gate.perTenant === 1 ? '' : 's'} in progress, the most one key may have at once (BROWSERFN_MAX_CALLS_PER_KEY); send this one again when one of them has answered`,
      );
    // Taken after the gate, so a call the gate turns away costs the key no token.
    const waitS = deps.callRate ? await callRateWait(deps.callRate, tenant, deps.log) : undefined;
    if (waitS !== undefined) {
      leave();
      return rateAnswer(c, waitS);
    }
    try {
      await next();
    } finally {
      // A call answered by its deadline still holds a page until that page is closed; a page work
      // that hangs (a browser that never answers) gives the slot back after a while all the same.
      const work = c.get('pageWork');
      if (work) {
        const cap = setTimeout(leave, SLOT_HOLD_AFTER_ANSWER_MS);
        cap.unref();
        void work.finally(() => {
          clearTimeout(cap);
          leave();
        });
      } else leave();
    }
  });
  // Run reads (status, results, report, evidence) load the stores and the disk: they count against
  // the key's limits too, in a gate of their own so polling a run never blocks the key's page calls.
  const reads = new TenantGate(deps.maxReadsPerTenant ?? DEFAULT_READS_PER_TENANT);
  // Admitted reads then share the server fairly between keys: one key's polls cannot queue ahead of
  // another key's read, and take at most their share of the server's time (lib/api/fair-share.ts).
  const readShare = new FairShare(RUN_READS_AT_ONCE);
  app.use('/v1/runs/*', async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    const tenant = c.get('tenant');
    const leave = reads.enter(tenant);
    if (!leave)
      return limitAnswer(
        c,
        `this API key already has ${reads.perTenant} run read${reads.perTenant === 1 ? '' : 's'} in progress, the most one key may have at once (BROWSERFN_MAX_READS_PER_KEY); send this one again when one of them has answered`,
      );
    try {
      const waitS = deps.callRate ? await callRateWait(deps.callRate, tenant, deps.log) : undefined;
      if (waitS !== undefined) return rateAnswer(c, waitS);
      const done = await readShare.take(tenant);
      try {
        await next();
      } finally {
        done();
      }
    } finally {
      leave();
    }
  });
  if (deps.stagehand) app.route(deps.stagehand.prefix, deps.stagehand.app);

  const run = <T>(
    c: Context<Env>,
    body: Parameters<typeof withPage>[0],
    op: Parameters<typeof withPage<T>>[4],
  ) =>
    deadline(
      timeoutMs,
      (signal, doing) => withPage(body, c.get('tenant'), deps, signal, op, doing),
      (work) => c.set('pageWork', work),
    );

  registerOpRoutes(app, {
    act: async (c, body, input) =>
      explainGoneAct(await run(c, body, (ctx) => act(ctx, input as Parameters<typeof act>[1]))),
    observe: (c, body) => run(c, body, (ctx) => observe(ctx, body.instruction)),
    extract: (c, body) => run(c, body, (ctx) => extract(ctx, body.instruction, body.schema)),
  });
  if (deps.runs) {
    registerRunRoutes(app, deps.runs);
    registerJudgeRoute(app, deps.runs, deps);
    registerReportLinkRoute(app, { runStore: deps.runs.runStore, key: linkKey });
  }
  if (deps.workflows)
    registerWorkflowRoutes(app, {
      store: deps.workflows,
      actions: {
        ops: deps,
        ...(deps.runs ? { runs: { runStore: deps.runs.runStore, evidence: deps.runs.evidence } } : {}),
        withDeadline: (c, fn) =>
          deadline(timeoutMs, fn, (work) => (c as unknown as Context<Env>).set('pageWork', work)),
      },
    });
  if (deps.workflows) registerWorkflowShowRoute(app, { store: deps.workflows });
  registerAgentRoute(app, deps);
  registerScenarioRoute(app, deps);
  registerRepairRoute(app, deps);
  registerExploreRoute(app, deps);
  return app;
}
