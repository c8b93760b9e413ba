/**
 * The workflow routes (issue 23 item 8): save a validated workflow as version 1 or the next version,
 * list, read (latest or one version), list versions, validate without saving, and export as a
 * playwright-core script. Tenant-scoped: another tenant's id is a 404, like a missing one.
 * Every invalid document is a 400 naming each problem (node alias + field), not only the first.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { idProblem } from '../store/names.ts';
import type { JsonObject } from '../store/ports.ts';
import { saveNextVersion, type WorkflowStore, type WorkflowVersionRecord } from '../store/workflow-ports.ts';
import { ExportError, exportPlaywright } from '../workflows/export-playwright.ts';
import { describeIssue, validateWorkflow, type WorkflowIssue } from '../workflows/validate.ts';
import { authedResponses, type DocResponse } from './openapi-responses.ts';
import { registerWorkflowActions, type WorkflowActionDeps } from './workflow-actions.ts';

type Env = { Variables: { tenant: string } };

export interface WorkflowsApiDeps {
  store: WorkflowStore;
  /** Plan / compile / run (lib/api/workflow-actions.ts); absent: those routes answer 404. */
  actions?: Omit<WorkflowActionDeps, 'store'>;
}

const SaveBody = z
  .object({
    id: z
      .string()
      .optional()
      .describe('store id (default: made from the workflow name); same id = new version'),
    workflow: z.record(z.string(), z.unknown()).describe('the workflow document'),
  })
  .strict();

const invalid = (
  c: Context<Env>,
  message: string,
  issues: { path: string; message: string; alias?: string }[],
) => c.json({ error: { kind: 'invalid', message, issues } }, 400);

const notFound = (c: Context<Env>, id: string, version?: number) =>
  c.json(
    {
      error: {
        kind: 'not_found',
        message: version === undefined ? `no workflow "${id}"` : `workflow "${id}" has no version ${version}`,
      },
    },
    404,
  );

const workflowIssues = (issues: WorkflowIssue[]) =>
  issues.map((i) => ({ path: i.field, message: i.message, ...(i.alias ? { alias: i.alias } : {}) }));

/** A store id from a workflow name: `Product pages (v2)` → `product-pages-v2`. */
export function idFromName(name: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80);
  return slug.length > 0 ? slug : 'workflow';
}

/** A version as the API shows it. */
export function versionView(record: WorkflowVersionRecord, withDocument: boolean) {
  return {
    id: record.id,
    version: record.version,
    name: record.name,
    createdAt: record.createdAt,
    ...(record.parent !== undefined ? { parent: record.parent } : {}),
    ...(record.note !== undefined ? { note: record.note } : {}),
    verified: record.verified,
    runs: record.runs,
    ...(withDocument ? { workflow: record.document } : {}),
  };
}

async function jsonBody(c: Context<Env>): Promise<{ ok: true; value: unknown } | { ok: false }> {
  try {
    return { ok: true, value: JSON.parse(await c.req.text()) };
  } catch {
    return { ok: false };
  }
}

function versionQuery(c: Context<Env>): number | undefined | 'bad' {
  const raw = c.req.query('version');
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 ? n : 'bad';
}

/** The version `?version=` asks for (else the latest), a 404 naming it, or the 400 of a bad number. */
async function askedVersion(
  c: Context<Env>,
  store: WorkflowStore,
  id: string,
): Promise<{ record: WorkflowVersionRecord } | { answer: Response }> {
  const version = versionQuery(c);
  if (version === 'bad')
    return {
      answer: invalid(c, 'version: a whole number from 1', [
        { path: 'version', message: 'a whole number from 1' },
      ]),
    };
  const record = await store.getVersion(c.get('tenant'), id, version);
  return record ? { record } : { answer: notFound(c, id, version) };
}

export function registerWorkflowRoutes(app: Hono<Env>, deps: WorkflowsApiDeps): void {
  const { store } = deps;
  if ('openAPIRegistry' in app) documentRoutes(app.openAPIRegistry as Registry);
  if (deps.actions) registerWorkflowActions(app, { store, ...deps.actions }, idFromName);

  const checkId = async (c: Context<Env>, next: () => Promise<void>) => {
    const id = c.req.param('id') ?? '';
    // The fixed sub-paths (validate, compile, plan) are POST-only routes of their own.
    const problem = idProblem('id', id);
    if (problem) return invalid(c, problem, [{ path: 'id', message: problem }]);
    await next();
  };

  app.post('/v1/workflows/validate', async (c) => {
    const body = await jsonBody(c);
    if (!body.ok) return invalid(c, 'body must be JSON', [{ path: '(body)', message: 'not JSON' }]);
    const checked = validateWorkflow(body.value);
    if (checked.ok) return c.json({ ok: true, workflow: checked.workflow }, 200);
    return c.json({ ok: false, issues: workflowIssues(checked.issues) }, 200);
  });

  app.post('/v1/workflows', async (c) => {
    const body = await jsonBody(c);
    if (!body.ok) return invalid(c, 'body must be JSON', [{ path: '(body)', message: 'not JSON' }]);
    const parsed = SaveBody.safeParse(body.value);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => ({
        path: i.path.join('.') || '(body)',
        message: i.message,
      }));
      return invalid(c, issues.map((i) => `${i.path}: ${i.message}`).join('; '), issues);
    }
    const checked = validateWorkflow(parsed.data.workflow);
    if (!checked.ok) {
      return invalid(
        c,
        `invalid workflow: ${checked.issues.map(describeIssue).join('; ')}`,
        workflowIssues(checked.issues).map((i) => ({ ...i, path: `workflow.${i.path}` })),
      );
    }
    const id = parsed.data.id ?? idFromName(checked.workflow.name);
    const problem = idProblem('id', id);
    if (problem) return invalid(c, problem, [{ path: 'id', message: problem }]);
    const tenant = c.get('tenant');
    const version = await saveNextVersion(store, {
      tenant,
      id,
      document: checked.workflow as unknown as JsonObject,
    });
    const saved = await store.getVersion(tenant, id, version);
    return c.json(saved ? versionView(saved, true) : { id, version }, 201);
  });

  app.get('/v1/workflows', async (c) => {
    const rows = await store.list(c.get('tenant'));
    return c.json({ workflows: rows.map(({ tenant: _t, ...row }) => row) }, 200);
  });

  app.use('/v1/workflows/:id', checkId);
  app.use('/v1/workflows/:id/*', checkId);

  app.get('/v1/workflows/:id', async (c) => {
    const asked = await askedVersion(c, store, c.req.param('id'));
    return 'answer' in asked ? asked.answer : c.json(versionView(asked.record, true), 200);
  });

  app.get('/v1/workflows/:id/versions', async (c) => {
    const id = c.req.param('id');
    const versions = await store.listVersions(c.get('tenant'), id);
    if (versions.length === 0) return notFound(c, id);
    return c.json({ id, versions: versions.map((v) => versionView(v, false)) }, 200);
  });

  app.get('/v1/workflows/:id/export', async (c) => {
    const id = c.req.param('id');
    const asked = await askedVersion(c, store, id);
    if ('answer' in asked) return asked.answer;
    const { record } = asked;
    const checked = validateWorkflow(record.document);
    if (!checked.ok)
      return c.json({ error: { kind: 'invalid', message: 'stored workflow no longer validates' } }, 409);
    try {
      return c.text(exportPlaywright(checked.workflow), 200, {
        'content-type': 'text/plain; charset=utf-8',
        'content-disposition': `attachment; filename="${id}-v${record.version}.ts"`,
      });
    } catch (err) {
      if (err instanceof ExportError)
        return c.json({ error: { kind: 'not_exportable', message: err.message } }, 422);
      throw err;
    }
  });
}

type Registry = { registerPath(route: Record<string, unknown>): void };

/** The workflow routes in /openapi.json (the handlers validate on their own). */
function documentRoutes(registry: Registry): void {
  const json = (description: string) => ({
    description,
    content: { 'application/json': { schema: { type: 'object' } } },
  });
  const missing = json('no such workflow or version for this key');
  const id = z.object({ id: z.string().describe('workflow id') });
  type Extra = { responses: Record<number, DocResponse> } & Record<string, unknown>;
  const doc = (method: string, path: string, summary: string, extra: Extra) =>
    registry.registerPath({
      method,
      path,
      summary,
      security: [{ bearer: [] }],
      ...extra,
      responses: authedResponses(extra.responses),
    });
  doc('post', '/v1/workflows', 'Save a workflow: version 1, or the next version of the same id', {
    request: { body: { content: { 'application/json': { schema: SaveBody } }, required: true } },
    responses: {
      201: json('the saved version with its document'),
      400: json('invalid workflow document (issues name node alias and field)'),
    },
  });
  doc('get', '/v1/workflows', "The key's workflows with their latest version", {
    responses: { 200: json('{ workflows: [{ id, name, latest, updatedAt }] }') },
  });
  doc('get', '/v1/workflows/{id}', 'A workflow version (latest unless ?version=N)', {
    request: { params: id, query: z.object({ version: z.string().optional() }) },
    responses: {
      200: json('the version with its document, verified mark and run counts'),
      400: json('invalid version'),
      404: missing,
    },
  });
  doc('get', '/v1/workflows/{id}/versions', 'Every version, oldest first (heals name their parent)', {
    request: { params: id },
    responses: { 200: json('{ id, versions: [...] }'), 400: json('invalid workflow id'), 404: missing },
  });
  doc('get', '/v1/workflows/{id}/export', 'The version as a standalone playwright-core script', {
    request: { params: id, query: z.object({ version: z.string().optional() }) },
    responses: {
      200: { description: 'TypeScript source', content: { 'text/plain': { schema: { type: 'string' } } } },
      400: json('invalid version'),
      404: missing,
      409: json('the stored version no longer validates'),
      422: json('the workflow has a node playwright-core cannot run on its own (not_exportable)'),
    },
  });
  doc('post', '/v1/workflows/validate', 'Check a workflow document without saving it', {
    request: { body: { content: { 'application/json': { schema: { type: 'object' } } }, required: true } },
    responses: {
      200: json('{ ok: true, workflow } or { ok: false, issues: [{ path, alias, message }] }'),
      400: json('the body is not JSON'),
    },
  });
}
