/**
 * `POST /v1/explore`: exploratory mode within the request's deadline. A journey goal and a start
 * page; the answer lists the journeys found, each a scenario (`steps`, the shape `POST
 * /v1/scenarios` takes, so it can be replayed) and, with `compile: true`, the workflow that
 * replays a proved journey with zero tokens. Ends `stuck` at a CAPTCHA or at a login when no
 * test credentials were given (`variables`, typed by the model as %name%, never shown to it).
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { checkUrl } from '../browser/guard.ts';
import { guardedGoto } from '../browser/navigate.ts';
import { openSession } from '../browser/session.ts';
import { OpError } from '../ops/types.ts';
import { redactText } from '../perception/redact.ts';
import { compileJourney, explore } from '../scenarios/explore.ts';
import { authedResponses } from './openapi-responses.ts';
import { modelFor, type OpDeps } from './run-op.ts';
import { ErrorBody, ModelChoice } from './schemas.ts';

const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

export const ExploreRequest = z
  .object({
    url: HttpUrl.describe('page the exploration starts on (and every journey), in a fresh browser context'),
    goal: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(2000)
      .describe('the journeys to find, in plain words'),
    variables: z
      .record(z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'), z.string())
      .optional()
      .describe('test credentials and data typed as %name%; never sent to the model, logged or stored'),
    maxIterations: z.number().int().min(1).max(60).optional().describe('model decisions in all (default 20)'),
    compile: z.boolean().optional().describe('each proved journey answers with the workflow that replays it'),
    model: ModelChoice.optional(),
    timeoutMs: z.number().int().min(1000).max(900_000).optional().describe('answer by then (default 120 s)'),
  })
  .strict()
  .openapi('ExploreRequest');

export const ExploreResponse = z
  .object({
    status: z.enum(['complete', 'stuck', 'budget', 'failed']),
    reason: z.string().optional(),
    journeys: z.array(
      z.object({
        id: z.string(),
        status: z.enum(['complete', 'incomplete']),
        steps: z.array(z.object({ do: z.string(), expect: z.string().optional() })),
        startUrl: z.string(),
        workflow: z.unknown().optional(),
        notCarried: z.array(z.string()).optional(),
      }),
    ),
    url: z.string(),
    usage: z.object({
      promptTokens: z.number(),
      completionTokens: z.number(),
      calls: z.number(),
      ms: z.number(),
    }),
  })
  .openapi('ExploreResponse');

const route = createRoute({
  method: 'post',
  path: '/v1/explore',
  summary: 'Explore an app for a journey goal and record the journeys found as scenarios',
  security: [{ bearer: [] }],
  request: { body: { content: { 'application/json': { schema: ExploreRequest } }, required: true } },
  responses: {
    200: {
      description: 'the exploration ended (complete, stuck, out of budget) or failed (model error, deadline)',
      content: { 'application/json': { schema: ExploreResponse } },
    },
    400: { description: 'invalid request', content: { 'application/json': { schema: ErrorBody } } },
    403: {
      description: 'URL blocked by the network guard',
      content: { 'application/json': { schema: ErrorBody } },
    },
    422: { description: 'no model configured', content: { 'application/json': { schema: ErrorBody } } },
    ...authedResponses({}, { limit: 'calls', deadline: true }),
  },
});

type Env = { Variables: { tenant: string } };

export function registerExploreRoute(
  app: OpenAPIHono<Env>,
  deps: OpDeps & { requestTimeoutMs?: number },
): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const verdict = await checkUrl(body.url, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', verdict.message);
    const llm = await modelFor(body, deps);
    if (!llm) {
      const { noModelError } = await import('../llm/config.ts');
      throw new OpError('no_model', `exploring needs a model. ${noModelError().message}`);
    }
    const browser = deps.browser ? await deps.browser() : undefined;
    const session = await openSession({ ...(browser ? { browser } : {}), policy: deps.policy });
    try {
      await guardedGoto(session.page, body.url);
      await session.page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
      const result = await explore({
        page: session.page,
        llm,
        goal: body.goal,
        checkNavigation: async (url: string) => {
          const v = await checkUrl(url, deps.policy);
          if (!v.ok) throw new OpError('blocked', v.message);
        },
        ...(body.variables ? { variables: body.variables } : {}),
        ...(body.maxIterations ? { maxIterations: body.maxIterations } : {}),
        deadline: Date.now() + (body.timeoutMs ?? deps.requestTimeoutMs ?? 120_000),
      });
      const journeys = result.journeys.map((j) => {
        const compiled = body.compile && j.status === 'complete' ? compileJourney(j) : undefined;
        return {
          id: j.id,
          status: j.status,
          steps: j.scenario.steps,
          startUrl: j.startUrl,
          ...(compiled ? { workflow: compiled.workflow, notCarried: compiled.notCarried } : {}),
        };
      });
      const answer = {
        status: result.status,
        ...(result.reason ? { reason: result.reason } : {}),
        journeys,
        url: result.url,
        usage: {
          promptTokens: result.usage.promptTokens,
          completionTokens: result.usage.completionTokens,
          calls: result.usage.calls,
          ms: result.usage.ms,
        },
      };
      // Model-written steps could echo a value typed on the page: secrets are put back as %name%.
      return c.json(JSON.parse(redactText(JSON.stringify(answer), body.variables)) as typeof answer, 200);
    } finally {
      await session.close();
    }
  });
}
