/**
 * `POST /v1/agent`: one goal on one page, carried out by the agent until the sample ends or the
 * request's deadline passes. Answers with status, data, steps, usage and where the evidence is;
 * a call that ran out of time answers `running` and the same runId + sampleId resumes it.
 */
import { randomUUID } from 'node:crypto';
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AgentDeps } from '../agent/deps.ts';
import { runAgent } from '../agent/run-agent.ts';
import { AgentTaskSchema } from '../agent/state.ts';
import { checkUrl } from '../browser/guard.ts';
import { openSession } from '../browser/session.ts';
import { createComputerUseModel, noChatModel, resolveComputerUseModel } from '../llm/computer-use/index.ts';
import { OpError } from '../ops/types.ts';
import { storesFromEnv } from '../store/config.ts';
import { runEvidencePrefix } from '../store/keys.ts';
import type { EvidenceStore, RunStore } from '../store/ports.ts';
import {
  admitUrl,
  deadlineOf,
  HttpUrl,
  navigationGuard,
  pageRoute,
  requireModel,
  SecretVariables,
  TimeoutMs,
} from './page-route.ts';
import { admitCdp, type OpDeps } from './run-op.ts';
import { ModelChoice } from './schemas.ts';

const Id = z
  .string()
  .min(1)
  .max(120)
  .regex(/^[\w.-]+$/, 'letters, digits, _ . - only');

export const AgentRequest = z
  .object({
    url: HttpUrl.optional().describe('page to start on, in a fresh browser context'),
    cdpUrl: z.string().url().optional().describe('attach to a remote browser session instead'),
    goal: z.string().min(1).max(4000),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the result data'),
    requiredFields: z.array(z.string().min(1)).optional(),
    requiredArtifacts: z.array(z.string().min(1)).optional(),
    keywords: z.array(z.string().min(1)).optional(),
    maxSteps: z.number().int().min(1).max(200).optional(),
    expectedItems: z.number().int().min(1).optional(),
    vision: z.enum(['fallback', 'always', 'never']).optional(),
    steps: z
      .array(z.string().min(1))
      .min(1)
      .max(50)
      .optional()
      .describe('scenario mode: steps done in order'),
    pageBudget: z.number().int().min(300).max(50_000).optional().describe('tokens of page text per step'),
    variables: SecretVariables,
    model: ModelChoice.optional(),
    mode: z
      .enum(['dom', 'cua'])
      .optional()
      .describe(
        'dom (default): the agent reads the page outline; cua: a computer-use model (model: anthropic/…, openai/…, google/…) works from screenshots and coordinates',
      ),
    runId: Id.optional().describe('resume or group samples: same runId + sampleId continues a sample'),
    sampleId: Id.optional(),
    timeoutMs: TimeoutMs,
  })
  .strict()
  .refine((b) => !!b.url !== !!b.cdpUrl, { message: 'give exactly one of url or cdpUrl', path: ['url'] })
  .openapi('AgentRequest');

export const AgentResponse = z
  .object({
    runId: z.string(),
    sampleId: z.string(),
    status: z.enum(['running', 'done', 'partial_success', 'failed', 'needs_review']),
    reason: z.string().optional(),
    retryable: z.boolean().optional(),
    data: z.unknown(),
    steps: z.number(),
    url: z.string(),
    usage: z.object({
      promptTokens: z.number(),
      completionTokens: z.number(),
      cachedTokens: z.number(),
      costUsd: z.number(),
      ms: z.number(),
      calls: z.number(),
    }),
    evidence: z.object({
      prefix: z.string(),
      files: z.array(
        z.object({
          key: z.string(),
          sha256: z.string(),
          url: z.string().optional().describe('where to fetch it, when the store can link (S3)'),
        }),
      ),
    }),
  })
  .openapi('AgentResponse');

export interface AgentRouteDeps extends OpDeps {
  /** Stores for a tenant's agent runs (default: the configured ones, lib/store/config.ts). */
  agentStores?: (tenant: string) => { runStore: RunStore; evidence: EvidenceStore };
  requestTimeoutMs?: number;
}

/** The stores the environment names (DynamoDB + S3, or local files), the same ones runs use. */
const configuredStores = (() => {
  let stores: { runStore: RunStore; evidence: EvidenceStore } | undefined;
  return () => {
    if (!stores) {
      const s = storesFromEnv();
      stores = { runStore: s.runs, evidence: s.evidence };
    }
    return stores;
  };
})();

const route = pageRoute({
  path: '/v1/agent',
  summary: 'Carry out a goal on a page with the agent loop',
  request: AgentRequest,
  ok: { description: 'the sample ended, or the deadline passed', schema: AgentResponse },
});

type Env = { Variables: { tenant: string } };

const LINK_SECONDS = 3600;

async function withLinks(store: EvidenceStore, files: { key: string; sha256: string }[]) {
  if (!store.link) return files;
  return Promise.all(
    files.map(async (f) => {
      const url = await store.link?.(f.key, LINK_SECONDS);
      return url ? { ...f, url } : f;
    }),
  );
}

/**
 * The computer-use model a `mode: "cua"` call names, with the caller's key when it sends one. A
 * caller's own endpoint is a request from our network like any page load: the guard checks it.
 */
async function computerUseFor(choice: z.infer<typeof ModelChoice> | undefined, deps: AgentRouteDeps) {
  const name = typeof choice === 'string' ? choice : choice?.name;
  if (!name)
    throw new OpError(
      'invalid',
      'model: mode "cua" needs a computer-use model (anthropic/…, openai/…, google/…)',
    );
  let config: ReturnType<typeof resolveComputerUseModel>;
  try {
    config = resolveComputerUseModel(name, deps.env ?? process.env);
  } catch (err) {
    throw new OpError('invalid', `model: ${(err as Error).message}`);
  }
  if (typeof choice === 'object' && choice.baseURL) {
    const verdict = await checkUrl(choice.baseURL, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', `model.baseURL: ${verdict.message}`);
    // A caller's URL never receives the server's key.
    config = { ...config, baseURL: choice.baseURL };
    delete config.apiKey;
  }
  if (typeof choice === 'object' && choice.apiKey) config = { ...config, apiKey: choice.apiKey };
  return createComputerUseModel(config);
}

export function registerAgentRoute(app: OpenAPIHono<Env>, deps: AgentRouteDeps): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const tenant = c.get('tenant');
    if (body.url) await admitUrl(body.url, deps);
    // The operator's list of browser endpoints applies here as everywhere (400 / 403 / 502).
    const cdpUrl = body.cdpUrl ? await admitCdp(body.cdpUrl, deps) : undefined;
    const computerUse = body.mode === 'cua' ? await computerUseFor(body.model, deps) : undefined;
    const llm = computerUse ? noChatModel : await requireModel(body, deps, 'the agent needs');
    const {
      schema,
      requiredFields,
      requiredArtifacts,
      keywords,
      maxSteps,
      expectedItems,
      vision,
      steps,
      pageBudget,
    } = body;
    const task = AgentTaskSchema.parse({
      goal: body.goal,
      ...(schema ? { schema } : {}),
      ...(requiredFields ? { requiredFields } : {}),
      ...(requiredArtifacts ? { requiredArtifacts } : {}),
      ...(keywords ? { keywords } : {}),
      ...(maxSteps ? { maxSteps } : {}),
      ...(expectedItems ? { expectedItems } : {}),
      ...(vision ? { vision } : {}),
      ...(steps ? { steps } : {}),
      ...(pageBudget ? { pageBudget } : {}),
      ...(computerUse
        ? { computerUse: { model: `${computerUse.config.provider}/${computerUse.config.model}` } }
        : {}),
    });
    const runId = body.runId ?? `agent_${randomUUID()}`;
    const sampleId = body.sampleId ?? 'main';
    const stores = (deps.agentStores ?? configuredStores)(tenant);
    const browser = deps.browser ? await deps.browser() : undefined;
    const agentDeps: AgentDeps = {
      ...stores,
      llm,
      ...(computerUse ? { computerUse } : {}),
      newPage: async () => {
        const s = await openSession({
          ...(browser ? { browser } : {}),
          ...(cdpUrl ? { cdpUrl } : {}),
          policy: deps.policy,
        });
        return { page: s.page, close: () => s.close() };
      },
      checkNavigation: navigationGuard(deps),
      ...(body.variables ? { variables: body.variables } : {}),
      ...(deps.log ? { log: deps.log } : {}),
    };
    // A cdpUrl session starts wherever the remote page is.
    let startUrl = body.url;
    if (!startUrl) {
      const probe = await agentDeps.newPage();
      startUrl = probe.page.url();
      await probe.close();
    }
    const state = await runAgent({ tenant, runId, sampleId, task, url: startUrl }, agentDeps, {
      deadline: deadlineOf(body, deps),
    });
    return c.json(
      {
        runId,
        sampleId,
        status: state.status,
        ...(state.reason ? { reason: state.reason } : {}),
        ...(state.retryable ? { retryable: true } : {}),
        data: state.data,
        steps: state.step,
        url: state.url,
        usage: state.usage,
        evidence: {
          prefix: runEvidencePrefix(tenant, runId),
          files: await withLinks(stores.evidence, state.evidence),
        },
      },
      200,
    );
  });
}
