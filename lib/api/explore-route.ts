/**
 * `POST /v1/explore`: exploratory mode within the request's deadline. A journey goal and a start
 * page; the answer lists the journeys found, each a scenario (`steps`, the shape `POST
 * /v1/scenarios` takes, so it can be replayed) and, with `compile: true`, the workflow that
 * replays a proved journey with zero tokens. Ends `stuck` at a CAPTCHA or at a login when no
 * test credentials were given (`variables`, typed by the model as %name%, never shown to it).
 */
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { redactText } from '../perception/redact.ts';
import { compileJourney, explore } from '../scenarios/explore.ts';
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
import { ModelChoice } from './schemas.ts';

export const ExploreRequest = z
  .object({
    url: HttpUrl.describe('page the exploration starts on (and every journey), in a fresh browser context'),
    goal: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(2000)
      .describe('the journeys to find, in plain words'),
    variables: SecretVariables.describe(
      'test credentials and data typed as %name%; never sent to the model, logged or stored',
    ),
    maxIterations: z.number().int().min(1).max(60).optional().describe('model decisions in all (default 20)'),
    compile: z.boolean().optional().describe('each proved journey answers with the workflow that replays it'),
    model: ModelChoice.optional(),
    timeoutMs: TimeoutMs,
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
    usage: UsageBody,
  })
  .openapi('ExploreResponse');

const route = pageRoute({
  path: '/v1/explore',
  summary: 'Explore an app for a journey goal and record the journeys found as scenarios',
  request: ExploreRequest,
  ok: {
    description: 'the exploration ended (complete, stuck, out of budget) or failed (model error, deadline)',
    schema: ExploreResponse,
  },
});

type Env = { Variables: { tenant: string } };

export function registerExploreRoute(
  app: OpenAPIHono<Env>,
  deps: OpDeps & { requestTimeoutMs?: number },
): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    await admitUrl(body.url, deps);
    const llm = await requireModel(body, deps, 'exploring needs');
    return onFreshPage(body.url, deps, async (page) => {
      const result = await explore({
        page,
        llm,
        goal: body.goal,
        checkNavigation: navigationGuard(deps),
        ...(body.variables ? { variables: body.variables } : {}),
        ...(body.maxIterations ? { maxIterations: body.maxIterations } : {}),
        deadline: deadlineOf(body, deps),
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
        usage: usageBody(result.usage),
      };
      // Model-written steps could echo a value typed on the page: secrets are put back as %name%.
      return c.json(JSON.parse(redactText(JSON.stringify(answer), body.variables)) as typeof answer, 200);
    });
  });
}
