/**
 * The workflow routes that do work (issue 23 items 3, 5, 8): plan a workflow from words, compile a
 * finished sample (or a list of acts) into one, and run a stored workflow on one URL synchronously.
 * Each runs under the request deadline and the key's page-call limits like /v1/act (a 504 says what it
 * was waiting for). A run whose workflow failed is still a 200 with `status: "failed"` and the node's
 * error: the request was right and the workflow ran; what failed was a step of it.
 */
import { randomUUID } from 'node:crypto';
import type { Context, Hono } from 'hono';
import type { Page } from 'playwright-core';
import type { z } from 'zod';
import { checkUrl } from '../browser/guard.ts';
import { noModelError } from '../llm/config.ts';
import { OpError } from '../ops/types.ts';
import { idProblem } from '../store/names.ts';
import type { EvidenceStore, JsonObject, RunStore } from '../store/ports.ts';
import { saveNextVersion, type WorkflowStore } from '../store/workflow-ports.ts';
import type { ActRecord } from '../workflows/compile.ts';
import { CompileError, compileActs } from '../workflows/compile.ts';
import { compileStoredSample, SampleNotFound, type WithPage } from '../workflows/compile-stored.ts';
import { aiAliases, PlanError, planWorkflow } from '../workflows/director.ts';
import { runServedOnly, runWorkflowOnce } from '../workflows/run-one.ts';
import type { Workflow } from '../workflows/schema.ts';
import { resolveInputs, validateWorkflow, WorkflowError } from '../workflows/validate.ts';
import { type Doing, modelFor, type OpDeps, withPage } from './run-op.ts';
import { CompileBody, documentActions, PlanBody, RunBody } from './workflow-action-schemas.ts';

type Env = { Variables: { tenant: string } };
type Registry = Parameters<typeof documentActions>[0];

export interface WorkflowActionDeps {
  store: WorkflowStore;
  ops: OpDeps;
  /** Where finished samples are read from (compile by runId); absent: that form answers 404. */
  runs?: { runStore: RunStore; evidence: EvidenceStore };
  /** Runs `fn` under the request deadline: aborts it and answers 504 when the deadline passes. */
  withDeadline<T>(c: Context<Env>, fn: (signal: AbortSignal, doing: Doing) => Promise<T>): Promise<T>;
}

const bad = (
  c: Context<Env>,
  issues: { path: string; message: string; alias?: string }[],
  kind = 'invalid',
) =>
  c.json(
    {
      error: {
        kind,
        message: issues.map((i) => `${i.path}${i.alias ? ` (${i.alias})` : ''}: ${i.message}`).join('; '),
        issues,
      },
    },
    400,
  );

async function body<T>(
  c: Context<Env>,
  schema: z.ZodType<T>,
): Promise<{ ok: true; value: T } | { ok: false; issues: { path: string; message: string }[] }> {
  let raw: unknown;
  try {
    raw = JSON.parse(await c.req.text());
  } catch {
    return { ok: false, issues: [{ path: '(body)', message: 'not JSON' }] };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { ok: true, value: parsed.data };
  // A union reports each branch: the branch closest to what was sent names the real problem.
  const issues = parsed.error.issues.flatMap((i) =>
    i.code === 'invalid_union' && 'errors' in i
      ? ((i.errors as z.core.$ZodIssue[][]).sort((a, b) => a.length - b.length)[0] ?? []).map((e) => ({
          path: [...i.path, ...e.path].join('.') || '(body)',
          message: e.message,
        }))
      : [{ path: i.path.join('.') || '(body)', message: i.message }],
  );
  return { ok: false, issues };
}

async function save(
  store: WorkflowStore,
  tenant: string,
  id: string,
  workflow: Workflow,
): Promise<{ id: string; version: number }> {
  const version = await saveNextVersion(store, {
    tenant,
    id,
    document: { ...workflow } as unknown as JsonObject,
  });
  return { id, version };
}

export function registerWorkflowActions(
  app: Hono<Env>,
  deps: WorkflowActionDeps,
  idFromName: (name: string) => string,
): void {
  const { store, ops } = deps;
  if ('openAPIRegistry' in app) documentActions(app.openAPIRegistry as Registry);

  const storeId = (given: string | undefined, workflow: Workflow) => {
    const id = given ?? idFromName(workflow.name);
    const problem = idProblem('id', id);
    return problem ? { problem } : { id };
  };

  app.post('/v1/workflows/plan', async (c) => {
    const got = await body(c, PlanBody);
    if (!got.ok) return bad(c, got.issues);
    const b = got.value;
    if (b.id) {
      const problem = idProblem('id', b.id);
      if (problem) return bad(c, [{ path: 'id', message: problem }]);
    }
    if (b.url) {
      const verdict = await checkUrl(b.url, ops.policy);
      if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
    }
    const llm = await modelFor(b, ops);
    if (!llm) throw new OpError('no_model', `planning a workflow needs a model. ${noModelError().message}`);
    let plan: Awaited<ReturnType<typeof planWorkflow>>;
    try {
      plan = await deps.withDeadline(c, (signal) =>
        planWorkflow(b.prompt, {
          llm,
          signal,
          ...(b.url ? { url: b.url } : {}),
          ...(b.inputs ? { inputs: b.inputs } : {}),
        }),
      );
    } catch (err) {
      if (!(err instanceof PlanError)) throw err;
      return c.json(
        {
          error: {
            kind: 'invalid_plan',
            message: err.message,
            issues: err.issues.map((i) => ({
              path: i.field,
              message: i.message,
              ...(i.alias ? { alias: i.alias } : {}),
            })),
            usage: err.usage,
          },
        },
        400,
      );
    }
    const answer = {
      workflow: plan.workflow,
      usage: plan.usage,
      repaired: plan.repaired,
      aiNodes: aiAliases(plan.workflow.nodes),
    };
    if (!b.save) return c.json(answer, 200);
    const target = storeId(b.id, plan.workflow);
    if ('problem' in target) return bad(c, [{ path: 'id', message: target.problem ?? '' }]);
    return c.json({ ...answer, ...(await save(store, c.get('tenant'), target.id, plan.workflow)) }, 201);
  });

  app.post('/v1/workflows/compile', async (c) => {
    const got = await body(c, CompileBody);
    if (!got.ok) return bad(c, got.issues);
    const b = got.value;
    const tenant = c.get('tenant');
    if (b.id) {
      const problem = idProblem('id', b.id);
      if (problem) return bad(c, [{ path: 'id', message: problem }]);
    }
    let workflow: Workflow;
    if ('actionLog' in b) {
      const verdict = await checkUrl(b.url, ops.policy);
      if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
      try {
        workflow = compileActs(b.actionLog as unknown as ActRecord[], {
          startUrl: b.url,
          ...(b.input ? { input: b.input } : {}),
          ...(b.name ? { name: b.name } : {}),
        });
      } catch (err) {
        return bad(
          c,
          [{ path: 'actionLog', message: (err as Error).message.split('\n')[0] ?? '' }],
          'not_compilable',
        );
      }
    } else {
      const runs = deps.runs;
      const notFound = (message: string) => c.json({ error: { kind: 'not_found', message } }, 404);
      if (!runs) return notFound(`no run "${b.runId}" (runs are not served here)`);
      try {
        workflow = await deps.withDeadline(c, (signal, doing) => {
          // The sample's page, opened fresh in a guarded context of its own.
          const open: WithPage = async <T>(url: string, fn: (page: Page) => Promise<T>): Promise<T> => {
            const verdict = await checkUrl(url, ops.policy);
            if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
            const r = await withPage(
              { url },
              tenant,
              ops,
              signal,
              // Node's server opens Playwright pages (run-op.ts).
              async (ctx) => ({ value: await fn(ctx.page as Page) }),
              doing,
            );
            return r.value;
          };
          return compileStoredSample(
            runs,
            { tenant, runId: b.runId, sampleId: b.sampleId, ...(b.name ? { name: b.name } : {}) },
            open,
            // The served HTML is fetched under the same guard as this server's pages.
            { staticCheck: { policy: ops.policy } },
          );
        });
      } catch (err) {
        if (err instanceof SampleNotFound) return notFound(err.message);
        if (err instanceof CompileError)
          return c.json({ error: { kind: 'not_compilable', message: err.message } }, 409);
        throw err;
      }
    }
    // Acts carry no name of their own: without an id they get a fresh one, never another's next version.
    const target = storeId(
      b.id ?? ('actionLog' in b && !b.name ? `acts-${randomUUID().slice(0, 8)}` : undefined),
      workflow,
    );
    if ('problem' in target) return bad(c, [{ path: 'id', message: target.problem ?? '' }]);
    const saved = await save(store, tenant, target.id, workflow);
    return c.json(
      { ...saved, workflow: { ...workflow, version: saved.version }, aiNodes: aiAliases(workflow.nodes) },
      201,
    );
  });

  app.post('/v1/workflows/:id/run', async (c) => {
    const id = c.req.param('id');
    const tenant = c.get('tenant');
    const got = await body(c, RunBody);
    if (!got.ok) return bad(c, got.issues);
    const b = got.value;
    const record = await store.getVersion(tenant, id, b.version);
    if (!record)
      return c.json(
        {
          error: {
            kind: 'not_found',
            message:
              b.version === undefined
                ? `no workflow "${id}"`
                : `workflow "${id}" has no version ${b.version}`,
          },
        },
        404,
      );
    const checked = validateWorkflow(record.document);
    if (!checked.ok)
      return c.json(
        {
          error: { kind: 'invalid', message: `stored workflow ${id} v${record.version} no longer validates` },
        },
        409,
      );
    const workflow = checked.workflow;
    const inputs = (b.inputs ?? {}) as JsonObject;
    try {
      // Missing or mistyped inputs are the caller's to fix: said before any page opens.
      resolveInputs(workflow, { url: b.url, ...inputs });
    } catch (err) {
      if (!(err instanceof WorkflowError)) throw err;
      return bad(
        c,
        err.issues.map((i) => ({ path: i.field, message: i.message })),
      );
    }
    const verdict = await checkUrl(b.url, ops.policy);
    if (!verdict.ok) throw new OpError('blocked', verdict.message, undefined, verdict.url);
    // A workflow that starts by navigating opens the URL itself; any other starts on the page.
    const first = workflow.nodes[0];
    const navigatesFirst = first?.type === 'browser_action' && first.config.action === 'navigate';
    const one = {
      tenant,
      workflow,
      url: b.url,
      inputs,
      runId: `wfrun_${randomUUID()}`,
      stored: { store, id },
    };
    const result = await deps.withDeadline(c, async (signal, doing) => {
      // Read from the page's served HTML when the workflow is marked so: no page is opened for it.
      doing.what = `workflow ${id} v${workflow.version} to read ${b.url}`;
      const served = navigatesFirst
        ? await runServedOnly({
            ...one,
            policy: ops.policy,
            signal,
            ...(b.variables ? { variables: b.variables } : {}),
            ...(ops.log ? { log: ops.log } : {}),
          })
        : {};
      if (served.answer) return { answer: served.answer };
      return withPage(
        {
          ...(navigatesFirst ? {} : { url: b.url }),
          ...(b.model ? { model: b.model } : {}),
          ...(b.variables ? { variables: b.variables } : {}),
        },
        tenant,
        ops,
        signal,
        async (ctx) => {
          // What a 504 names: the workflow, and (from the model client) a model call in flight.
          doing.what = `workflow ${id} v${workflow.version} to finish on ${b.url}`;
          return {
            answer: await runWorkflowOnce({
              ...one,
              ...(served.servedMiss !== undefined ? { servedMiss: served.servedMiss } : {}),
              deps: {
                page: ctx.page as Page,
                signal,
                ...(ctx.llm ? { llm: ctx.llm } : {}),
                ...(ctx.variables ? { variables: ctx.variables } : {}),
                ...(ctx.checkNavigation ? { checkNavigation: ctx.checkNavigation } : {}),
                ...(ops.log ? { log: ops.log } : {}),
              },
            }),
          };
        },
        doing,
      );
    });
    return c.json({ id, ...result.answer }, 200);
  });
}
