/**
 * `POST /v1/runs/{id}/judge`: the judge's verdict on a run's finished samples (or one of them), from
 * their evidence alone, written into the run's evidence and merged into combined.csv and the report.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { JudgeRunError, judgeRun } from '../runs/judge-run.ts';
import { idProblem } from '../store/names.ts';
import { authedResponses } from './openapi-responses.ts';
import { modelFor, type OpDeps } from './run-op.ts';
import type { RunsApiDeps } from './runs.ts';
import { ModelChoice } from './schemas.ts';

type Env = { Variables: { tenant: string } };

const JudgeBody = z
  .object({
    sampleId: z.string().min(1).max(200).optional().describe('judge this sample only'),
    model: ModelChoice.optional().describe('the judge model (default: the configured one)'),
  })
  .strict();

const invalid = (c: Context<Env>, message: string, path: string) =>
  c.json({ error: { kind: 'invalid', message, issues: [{ path, message }] } }, 400);

export function registerJudgeRoute(app: Hono<Env>, runs: RunsApiDeps, models: OpDeps): void {
  if ('openAPIRegistry' in app) {
    const json = (description: string) => ({
      description,
      content: { 'application/json': { schema: { type: 'object' } } },
    });
    (app.openAPIRegistry as { registerPath(route: Record<string, unknown>): void }).registerPath({
      method: 'post',
      path: '/v1/runs/{id}/judge',
      summary: "The judge model's verdict on the run's finished samples (or one), from their evidence",
      security: [{ bearer: [] }],
      request: {
        params: z.object({ id: z.string().describe('run id') }),
        body: { content: { 'application/json': { schema: JudgeBody } }, required: false },
      },
      responses: authedResponses({
        200: json('{ runId, counts: { <verdict>: n }, samples: [{ sampleId, verdict, … }] }'),
        400: json('invalid body, run id or sampleId (named)'),
        404: json('no such run or sample for this key'),
        409: json('nothing to judge yet: the run or sample has not finished'),
        422: json('no model configured'),
        502: json('the judge model call failed'),
      }),
    });
  }
  app.post('/v1/runs/:id/judge', async (c) => {
    const runId = c.req.param('id');
    let raw: unknown = {};
    const text = await c.req.text();
    if (text.trim()) {
      try {
        raw = JSON.parse(text);
      } catch {
        return invalid(c, 'body must be JSON', '(body)');
      }
    }
    const parsed = JudgeBody.safeParse(raw);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      const path = i?.path.join('.') || '(body)';
      return invalid(c, `${path}: ${i?.message}`, path);
    }
    if (parsed.data.sampleId) {
      const problem = idProblem('sampleId', parsed.data.sampleId);
      if (problem) return invalid(c, problem, 'sampleId');
    }
    const llm = await modelFor(parsed.data.model ? { model: parsed.data.model } : {}, models);
    try {
      const judged = await judgeRun(
        { runStore: runs.runStore, evidence: runs.evidence, llm },
        c.get('tenant'),
        runId,
        {
          ...(parsed.data.sampleId ? { sampleId: parsed.data.sampleId } : {}),
        },
      );
      const counts: Record<string, number> = {};
      for (const j of judged) counts[j.verdict.verdict] = (counts[j.verdict.verdict] ?? 0) + 1;
      return c.json(
        { runId, counts, samples: judged.map((j) => ({ sampleId: j.sampleId, ...j.verdict })) },
        200,
      );
    } catch (err) {
      if (err instanceof JudgeRunError)
        return c.json(
          { error: { kind: err.kind, message: err.message } },
          err.kind === 'not_found' ? 404 : 409,
        );
      throw err;
    }
  });
}
