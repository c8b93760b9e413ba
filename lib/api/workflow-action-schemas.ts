/**
 * The bodies of the workflow plan / compile / run routes (one zod schema each: the validator and the
 * OpenAPI entry) and their /openapi.json entries with the answers they really give.
 */
import { z } from 'zod';
import { authedResponses, type DocResponse } from './openapi-responses.ts';
import { ModelChoice } from './schemas.ts';

type Registry = { registerPath(route: Record<string, unknown>): void };

const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');
const StoreId = z.string().optional().describe('store id; an existing id gets the next version');
const Variables = z
  .record(z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'), z.string())
  .optional()
  .describe('secrets the workflow types as %name%; never sent to a model, logged, stored or echoed');

export const PlanBody = z
  .object({
    prompt: z.string().trim().min(1).max(8000).describe('what the workflow should do, in words'),
    url: HttpUrl.optional().describe('the page it starts on (becomes {{inputs.url}})'),
    inputs: z
      .record(z.string().regex(/^[A-Za-z_]\w*$/), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('inputs it takes, with example values'),
    save: z.boolean().optional().describe('save the plan as a workflow (next version with id)'),
    id: StoreId,
    model: ModelChoice.optional(),
  })
  .strict();

const ActLog = z
  .array(
    z.object({
      instruction: z.string().min(1),
      result: z
        .object({
          success: z.boolean(),
          url: z.string(),
          message: z.string().optional(),
          actions: z.array(z.object({ method: z.string() }).passthrough()),
        })
        .passthrough(),
    }),
  )
  .min(1);

export const CompileBody = z.union([
  z
    .object({
      runId: z.string().min(1).max(200),
      sampleId: z.string().min(1).max(200),
      id: StoreId,
      name: z.string().min(1).max(200).optional(),
    })
    .strict(),
  z
    .object({
      actionLog: ActLog.describe('acts as { instruction, result } (the act API answers), in order'),
      url: HttpUrl.describe('the page the first act ran on'),
      input: z.record(z.string(), z.string()).optional().describe('values typed that become inputs'),
      id: StoreId,
      name: z.string().min(1).max(200).optional(),
    })
    .strict(),
]);

export const RunBody = z
  .object({
    url: HttpUrl.describe('the page to run the workflow on ({{inputs.url}})'),
    inputs: z.record(z.string(), z.unknown()).optional(),
    version: z.number().int().min(1).optional().describe('default: the latest'),
    variables: Variables,
    model: ModelChoice.optional().describe('for AI nodes and heals; without one, deterministic nodes run'),
  })
  .strict();

/** The routes in /openapi.json with the answers they really give. */
export function documentActions(registry: Registry): void {
  const error = (description: string) => ({
    description,
    content: { 'application/json': { schema: { type: 'object' } } },
  });
  const json = (description: string) => error(description);
  const doc = (path: string, summary: string, schema: z.ZodType, responses: Record<number, DocResponse>) =>
    registry.registerPath({
      method: 'post',
      path,
      summary,
      security: [{ bearer: [] }],
      ...(path.includes('{id}')
        ? {
            request: {
              params: z.object({ id: z.string() }),
              body: { content: { 'application/json': { schema } }, required: true },
            },
          }
        : { request: { body: { content: { 'application/json': { schema } }, required: true } } }),
      // Page calls: the key's call limits and the request deadline apply (app.ts).
      responses: authedResponses(responses, { limit: 'calls', deadline: true }),
    });
  doc(
    '/v1/workflows/plan',
    'A model writes a workflow from a description (deterministic nodes first)',
    PlanBody,
    {
      200: json('{ workflow, usage, repaired, aiNodes }'),
      201: json('saved: { workflow, usage, repaired, aiNodes, id, version }'),
      400: error(
        'invalid body, or invalid_plan: the plan never validated (issues name node alias and field)',
      ),
      422: error('no model configured'),
      502: error('the model failed'),
    },
  );
  doc(
    '/v1/workflows/compile',
    'Compile a finished sample of a run, or a list of acts, into a saved workflow',
    CompileBody,
    {
      201: json('{ id, version, workflow, aiNodes }'),
      400: error('invalid body, or an action log that cannot compile (kind not_compilable)'),
      404: error('no such run or sample for this key'),
      409: error('the sample cannot compile: it failed, has not finished, or logged no actions'),
    },
  );
  doc('/v1/workflows/{id}/run', 'Run a stored workflow on one URL, synchronously', RunBody, {
    200: json(
      '{ id, status: done | failed, data, results: { <alias>: { status, resolvedBy, usage, error } }, usage, heals, version, healedVersion? } — a failed workflow is a 200 with status failed and the reason',
    ),
    400: error('invalid body or inputs (each named)'),
    403: error('URL blocked by the network guard'),
    404: error('no such workflow or version for this key'),
    409: error('the stored version no longer validates'),
  });
}
