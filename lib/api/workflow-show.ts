/**
 * `GET /v1/workflows/{id}/show[?version=N]` (issue 23 item 9): the workflow's graph page as HTML,
 * tenant-scoped like the other workflow routes (another key's id is a 404), served under the page's
 * own CSP (style by hash, no script, nothing fetched).
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { renderWorkflowPage, WORKFLOW_PAGE_CSP } from '../workflows/show.ts';
import { validateWorkflow } from '../workflows/validate.ts';
import { authedResponses } from './openapi-responses.ts';

type Env = { Variables: { tenant: string } };
type Registry = { registerPath(route: Record<string, unknown>): void };

const problem = (c: Context<Env>, status: 400 | 404 | 409, kind: string, message: string, path?: string) =>
  c.json({ error: { kind, message, ...(path ? { issues: [{ path, message }] } : {}) } }, status);

export function registerWorkflowShowRoute(app: Hono<Env>, deps: { store: WorkflowStore }): void {
  if ('openAPIRegistry' in app)
    (app.openAPIRegistry as Registry).registerPath({
      method: 'get',
      path: '/v1/workflows/{id}/show',
      summary: 'The workflow drawn as a graph: a self-contained HTML page (latest unless ?version=N)',
      security: [{ bearer: [] }],
      request: {
        params: z.object({ id: z.string().describe('workflow id') }),
        query: z.object({ version: z.string().optional() }),
      },
      responses: authedResponses({
        200: { description: 'HTML page', content: { 'text/html': { schema: { type: 'string' } } } },
        400: { description: 'bad version', content: { 'application/json': { schema: { type: 'object' } } } },
        404: { description: 'no such workflow or version for this key' },
      }),
    });

  app.get('/v1/workflows/:id/show', async (c) => {
    const id = c.req.param('id');
    const raw = c.req.query('version');
    const version = raw === undefined ? undefined : Number(raw);
    if (version !== undefined && !(Number.isInteger(version) && version >= 1))
      return problem(c, 400, 'invalid', 'version: a whole number from 1', 'version');
    const tenant = c.get('tenant');
    const record = await deps.store.getVersion(tenant, id, version);
    if (!record)
      return problem(
        c,
        404,
        'not_found',
        version === undefined ? `no workflow "${id}"` : `workflow "${id}" has no version ${version}`,
      );
    const checked = validateWorkflow(record.document);
    if (!checked.ok) return problem(c, 409, 'invalid', 'stored workflow no longer validates');
    const versions = await deps.store.listVersions(tenant, id);
    const html = renderWorkflowPage(
      { ...checked.workflow, version: record.version },
      {
        id,
        versions: versions.map((v) => ({
          version: v.version,
          createdAt: v.createdAt,
          verified: v.verified,
          ...(v.note !== undefined ? { note: v.note } : {}),
        })),
      },
    );
    return c.body(html, 200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': WORKFLOW_PAGE_CSP,
      'x-content-type-options': 'nosniff',
    });
  });
}
