/** The runs routes in /openapi.json (their handlers, runs.ts and run-reads.ts, validate on their own). */
import { z } from 'zod';
import { authedResponses, type DocResponse } from './openapi-responses.ts';
import { StartBody } from './runs-start.ts';

export type Registry = { registerPath(route: Record<string, unknown>): void };

export function documentRunRoutes(registry: Registry): void {
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
