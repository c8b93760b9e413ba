import { createRoute, OpenAPIHono, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { act } from '../ops/act.ts';
import { extract } from '../ops/extract.ts';
import { observe } from '../ops/observe.ts';
import { OpError } from '../ops/types.ts';
import { type AgentRouteDeps, registerAgentRoute } from './agent-route.ts';
import { type KeyRing, tenantFor } from './auth.ts';
import { toErrorResponse } from './errors.ts';
import { type OpDeps, withPage } from './run-op.ts';
import {
  ActRequest,
  ActResponse,
  ErrorBody,
  ExtractRequest,
  ExtractResponse,
  ObserveRequest,
  ObserveResponse,
} from './schemas.ts';

export interface AppDeps extends OpDeps, Pick<AgentRouteDeps, 'agentStores'> {
  keys: KeyRing;
  /** Whole-request deadline (default 120 s). */
  requestTimeoutMs?: number;
  /** Largest accepted body (default 1 MiB). */
  maxBodyBytes?: number;
}

type Env = { Variables: { tenant: string } };

const errorResponses = {
  400: { description: 'invalid request', content: { 'application/json': { schema: ErrorBody } } },
  401: { description: 'missing or unknown API key', content: { 'application/json': { schema: ErrorBody } } },
  403: {
    description: 'URL blocked by the network guard',
    content: { 'application/json': { schema: ErrorBody } },
  },
  422: {
    description: 'could not resolve the instruction',
    content: { 'application/json': { schema: ErrorBody } },
  },
};

const route = <Req extends z.ZodType, Res extends z.ZodType>(
  path: string,
  summary: string,
  request: Req,
  response: Res,
) =>
  createRoute({
    method: 'post',
    path,
    summary,
    security: [{ bearer: [] }],
    request: { body: { content: { 'application/json': { schema: request } }, required: true } },
    responses: {
      200: { description: 'done', content: { 'application/json': { schema: response } } },
      ...errorResponses,
    },
  });

/** Runs `fn` under the request deadline; on timeout the page is closed and a 504 goes back. */
async function deadline<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new OpError('timeout', `request took longer than ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The HTTP API as one hono app: the same object serves Node (`npm start`) and Lambda.
 * Validation errors name the field; every /v1 call needs a bearer key mapped to a tenant.
 */
export function createApp(deps: AppDeps): OpenAPIHono<Env> {
  const app = new OpenAPIHono<Env>({
    defaultHook: (result, c) => {
      if (result.success) return;
      const issues = result.error.issues.map((i) => ({
        path: i.path.map(String).join('.') || '(body)',
        message: i.message,
      }));
      const first = issues[0];
      return c.json(
        {
          error: {
            kind: 'invalid',
            message: first ? `${first.path}: ${first.message}` : 'invalid body',
            issues,
          },
        },
        400,
      );
    },
  });
  const timeoutMs = deps.requestTimeoutMs ?? 120_000;

  app.get('/healthz', (c) => c.json({ ok: true }));
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.doc31('/openapi.json', { openapi: '3.1.0', info: { title: 'browserfn', version: '0.1.0' } });

  app.use('/v1/*', async (c, next) => {
    const tenant = tenantFor(deps.keys, c.req.header('authorization'));
    if (!tenant)
      return c.json(
        {
          error: {
            kind: 'unauthorized',
            message: 'send Authorization: Bearer <API key> (keys come from BROWSERFN_API_KEYS)',
          },
        },
        401,
      );
    c.set('tenant', tenant);
    await next();
  });
  app.use(
    '/v1/*',
    bodyLimit({
      maxSize: deps.maxBodyBytes ?? 1024 * 1024,
      onError: (c) =>
        c.json(
          {
            error: { kind: 'invalid', message: `body larger than ${deps.maxBodyBytes ?? 1024 * 1024} bytes` },
          },
          413,
        ),
    }),
  );
  app.onError((err, c) => {
    const { status, body } = toErrorResponse(err);
    if (status >= 500)
      deps.log?.({ level: 'warn', msg: 'request failed', path: c.req.path, error: String(err) });
    return c.json(body, status);
  });
  app.notFound((c) =>
    c.json({ error: { kind: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );

  const run = <T>(
    c: Context<Env>,
    body: Parameters<typeof withPage>[0],
    op: Parameters<typeof withPage<T>>[4],
  ) => deadline(timeoutMs, (signal) => withPage(body, c.get('tenant'), deps, signal, op));

  app.openapi(
    route('/v1/act', 'Do what an instruction says on a page', ActRequest, ActResponse),
    async (c) => {
      const body = c.req.valid('json');
      const input = body.instruction ?? body.action!;
      const target = body.action && 'target' in body.action ? body.action.target : undefined;
      if (target && 'id' in target && !body.cdpUrl)
        return c.json(
          {
            error: {
              kind: 'invalid',
              message:
                'action.target.id: an element id only means something on the page it came from; with url, send target.locator (the selector from observe)',
              issues: [
                {
                  path: 'action.target.id',
                  message: 'use target.locator, or cdpUrl to stay on the same page',
                },
              ],
            },
          },
          400,
        );
      const result = await run(c, body, (ctx) => act(ctx, input as Parameters<typeof act>[1]));
      return c.json(result as never, 200);
    },
  );
  app.openapi(
    route('/v1/observe', 'List elements matching an instruction', ObserveRequest, ObserveResponse),
    async (c) => {
      const body = c.req.valid('json');
      const result = await run(c, body, (ctx) => observe(ctx, body.instruction));
      return c.json(result as never, 200);
    },
  );
  app.openapi(
    route('/v1/extract', 'Read typed data from a page', ExtractRequest, ExtractResponse),
    async (c) => {
      const body = c.req.valid('json');
      const result = await run(c, body, (ctx) => extract(ctx, body.instruction, body.schema));
      return c.json(result as never, 200);
    },
  );
  registerAgentRoute(app, deps);
  return app;
}
