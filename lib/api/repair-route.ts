/**
 * `POST /v1/repair`: a broken Playwright script (TypeScript or JavaScript) repaired on a live page
 * within the request's deadline. The script is read, never executed as code (lib/scenarios/repair);
 * the answer carries each repaired step with its diff, the repaired script when every broken step
 * was repaired, and — for a repair that would change an assertion's expected value — `review`
 * with the change left out of the script unless `allowAssertionChanges` is set.
 */
import { type OpenAPIHono, z } from '@hono/zod-openapi';
import { OpError } from '../ops/types.ts';
import { repairScript } from '../scenarios/repair/repair.ts';
import { loadTs, parseScript, ScriptError, stepAtLine } from '../scenarios/repair/script.ts';
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

export const RepairRequest = z
  .object({
    url: HttpUrl.describe('page the script starts on, in a fresh browser context'),
    script: z
      .string()
      .min(1)
      .max(200_000)
      .describe('the Playwright script (playwright-core or @playwright/test API)'),
    fileName: z
      .string()
      .max(200)
      .regex(/\.(c|m)?(t|j)sx?$/, 'a .ts or .js file name')
      .optional()
      .describe('decides TypeScript or JavaScript (default script.ts)'),
    error: z
      .object({
        message: z.string().min(1).max(5000).describe('the error the step failed with'),
        line: z.number().int().min(1).optional().describe("the failing step's line in the script"),
      })
      .strict()
      .optional()
      .describe('the failure as seen; without it the first step that fails on the page is repaired'),
    variables: SecretVariables,
    allowAssertionChanges: z
      .boolean()
      .optional()
      .describe("apply repairs that change an assertion's expected value (default: report them for review)"),
    model: ModelChoice.optional(),
    stepTimeoutMs: z.number().int().min(500).max(60_000).optional().describe('per script step (default 5 s)'),
    timeoutMs: TimeoutMs,
  })
  .strict()
  .openapi('RepairRequest');

export const RepairResponse = z
  .object({
    status: z.enum(['repaired', 'review', 'unchanged', 'stuck', 'infeasible', 'failed']),
    reason: z.string().optional(),
    repairs: z.array(
      z.object({
        step: z.number(),
        line: z.number(),
        before: z.string(),
        after: z.string().nullable().describe('the replacement code; null: the step is deleted'),
        error: z.string(),
        iterations: z.number(),
        reasoning: z.string(),
        applied: z.boolean(),
        review: z.string().optional().describe('why it waits for a person (an assertion value changed)'),
        diff: z.string(),
      }),
    ),
    script: z.string().optional().describe('the repaired script (status repaired or review)'),
    steps: z.array(z.object({ step: z.number(), line: z.number(), text: z.string(), outcome: z.string() })),
    url: z.string(),
    usage: UsageBody,
  })
  .openapi('RepairResponse');

const route = pageRoute({
  path: '/v1/repair',
  summary: 'Repair the broken step of a Playwright script on a live page',
  request: RepairRequest,
  ok: {
    description:
      'the script ran to its end with its broken steps repaired, or the repair ended stuck / failed',
    schema: RepairResponse,
  },
  own: {
    400: {
      description: 'invalid request (a script that does not parse, a line that is not a step)',
      content: { 'application/json': { schema: ErrorBody } },
    },
  },
});

type Env = { Variables: { tenant: string } };

export function registerRepairRoute(
  app: OpenAPIHono<Env>,
  deps: OpDeps & { requestTimeoutMs?: number },
): void {
  app.openapi(route, async (c) => {
    const body = c.req.valid('json');
    const fileName = body.fileName ?? 'script.ts';
    // A script that does not parse, or a line that is no step, is the caller's error: 400, field named.
    try {
      const ts = await loadTs();
      const parsed = parseScript(ts, body.script, fileName, body.error?.line);
      if (body.error?.line !== undefined && !stepAtLine(parsed, body.error.line))
        throw new ScriptError(`line ${body.error.line} is not a step of the script`);
    } catch (err) {
      if (err instanceof ScriptError)
        throw new OpError(
          'invalid',
          `${body.error?.line !== undefined && /line \d+ is not/.test(err.message) ? 'error.line' : 'script'}: ${err.message}`,
        );
      throw err;
    }
    await admitUrl(body.url, deps);
    const llm = await requireModel(body, deps, 'repair needs');
    return onFreshPage(body.url, deps, async (page) => {
      const result = await repairScript({
        source: body.script,
        fileName,
        ...(body.error ? { error: body.error } : {}),
        page,
        llm,
        checkNavigation: navigationGuard(deps),
        ...(body.variables ? { variables: body.variables } : {}),
        ...(body.allowAssertionChanges ? { allowAssertionChanges: true } : {}),
        ...(body.stepTimeoutMs ? { stepTimeoutMs: body.stepTimeoutMs } : {}),
        deadline: deadlineOf(body, deps),
      });
      const { iterations: _iterations, usage, ...kept } = result;
      return c.json({ ...kept, usage: usageBody(usage) }, 200);
    });
  });
}
