/**
 * What the Node app (app.ts) and the edge worker's (edge-app.ts) set up alike: the 405 that names
 * the method, /healthz, the op log, the OpenAPI document, the bearer key (401), the body limit
 * (413), the JSON error answers, and the act / observe / extract routes over each app's own way of
 * opening a page. No Node import: the edge bundle takes it as is (test/unit/edge-bundle.test.ts).
 */
import type { OpenAPIHono, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { assertKnownVariables } from '../ops/act.ts';
import type { OpLog } from '../ops/types.ts';
import { limitBody } from './body-limit.ts';
import { toErrorResponse } from './errors.ts';
import { type KeyRing, tenantFor } from './key-ring.ts';
import { logOps } from './op-log.ts';
import { opRoute } from './op-routes.ts';
import {
  ActRequest,
  ActResponse,
  ExtractRequest,
  ExtractResponse,
  ObserveRequest,
  ObserveResponse,
} from './schemas.ts';

/** What every /v1 call carries once its key is known. */
export type BaseEnv = { Variables: { tenant: string } };

export interface BaseSetup {
  keys: KeyRing;
  log?: OpLog | undefined;
  /** Largest accepted body (default 1 MiB). */
  maxBodyBytes?: number | undefined;
  /** The methods a known path answers; any other method on it is a 405. */
  methodsOf: (path: string) => string[] | undefined;
  /** The OpenAPI document's `info`. */
  info: { title: string; version: string; description?: string };
  /** Puts /healthz in the OpenAPI document (openapi-responses.ts: Node only, it names the Stagehand routes). */
  documentHealth?: (registry: OpenAPIHono['openAPIRegistry']) => void;
  /** A /v1 call without a known key: another way in (a signed link), with its tenant or why it was refused. */
  otherAuth?: (c: Context) => { tenant: string } | { refused: string } | undefined;
}

/**
 * The shared front of both apps, in the order calls meet it: 405, /healthz, the op log (first of the
 * /v1 middlewares, so a refused call gets its log line too), the document, the key, the body limit.
 * The caller adds its own gates after this, then its routes.
 */
export function setUpBase<E extends BaseEnv>(app: OpenAPIHono<E>, setup: BaseSetup): void {
  const maxBody = setup.maxBodyBytes ?? 1024 * 1024;
  app.use('*', async (c, next) => {
    const allowed = setup.methodsOf(c.req.path);
    if (allowed && !allowed.includes(c.req.method))
      return c.json(
        {
          error: {
            kind: 'method_not_allowed',
            message: `${c.req.method} ${c.req.path}: use ${allowed.filter((m) => m !== 'HEAD').join(' or ')}`,
          },
        },
        405,
        { allow: allowed.join(', ') },
      );
    await next();
  });
  app.get('/healthz', (c) => c.json({ ok: true }));
  setup.documentHealth?.(app.openAPIRegistry);
  app.use('/v1/*', logOps(setup.log));
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', { type: 'http', scheme: 'bearer' });
  app.doc31('/openapi.json', { openapi: '3.1.0', info: setup.info });
  app.use('/v1/*', async (c, next) => {
    const keyed = tenantFor(setup.keys, c.req.header('authorization'));
    const other = keyed === undefined ? setup.otherAuth?.(c) : undefined;
    const tenant = keyed ?? (other && 'tenant' in other ? other.tenant : undefined);
    if (tenant === undefined)
      return c.json(
        {
          error: {
            kind: 'unauthorized',
            message:
              other && 'refused' in other
                ? other.refused
                : 'send Authorization: Bearer <API key> (keys come from BROWSERFN_API_KEYS)',
          },
        },
        401,
      );
    (c as unknown as Context<BaseEnv>).set('tenant', tenant);
    await next();
  });
  app.use(
    '/v1/*',
    limitBody(maxBody, (c) =>
      c.json({ error: { kind: 'invalid', message: `body larger than ${maxBody} bytes` } }, 413),
    ),
  );
  app.onError((err, c) => {
    const { status, body } = toErrorResponse(err);
    if (status >= 500)
      setup.log?.({ level: 'warn', msg: 'request failed', path: c.req.path, error: String(err) });
    return c.json(body, status);
  });
  app.notFound((c) =>
    c.json({ error: { kind: 'not_found', message: `no route ${c.req.method} ${c.req.path}` } }, 404),
  );
}

/** A call refused for the key's limits: 429, retryable, with when to send it again. */
export function limitAnswer(c: Context, message: string, retryAfterS: number | string = 1): Response {
  return c.json({ error: { kind: 'limit', message, retryable: true } }, 429, {
    'retry-after': String(retryAfterS),
  });
}

type ActBody = z.infer<typeof ActRequest>;
/** What act carries out: the instruction, or the action (an observe result) to repeat. */
export type ActInput = NonNullable<ActBody['instruction']> | NonNullable<ActBody['action']>;

/** How an app carries out each op on the page a call names (its result is the 200 answer). */
export interface OpHandlers<E extends BaseEnv> {
  act(c: Context<E>, body: ActBody, input: ActInput): Promise<unknown>;
  observe(c: Context<E>, body: z.infer<typeof ObserveRequest>): Promise<unknown>;
  extract(c: Context<E>, body: z.infer<typeof ExtractRequest>): Promise<unknown>;
}

/** `/v1/act`, `/v1/observe`, `/v1/extract`: the same schemas, checks and OpenAPI entries in both apps. */
export function registerOpRoutes<E extends BaseEnv>(app: OpenAPIHono<E>, ops: OpHandlers<E>): void {
  // One concrete app type for the routes below: hono's types do not follow a generic env through.
  const base = app as unknown as OpenAPIHono<BaseEnv>;
  const ctx = (c: Context<BaseEnv>) => c as unknown as Context<E>;
  base.openapi(
    opRoute('/v1/act', 'Do what an instruction says on a page', ActRequest, ActResponse),
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
      // Checked before the page opens: nothing is loaded, let alone typed, for a misspelt name.
      assertKnownVariables(
        typeof input === 'string'
          ? input
          : ('arguments' in input ? input.arguments : (input.args ?? [])).join(' '),
        body.variables,
      );
      return c.json((await ops.act(ctx(c), body, input)) as never, 200);
    },
  );
  base.openapi(
    opRoute('/v1/observe', 'List elements matching an instruction', ObserveRequest, ObserveResponse),
    async (c) => c.json((await ops.observe(ctx(c), c.req.valid('json'))) as never, 200),
  );
  base.openapi(
    opRoute('/v1/extract', 'Read typed data from a page', ExtractRequest, ExtractResponse),
    async (c) => c.json((await ops.extract(ctx(c), c.req.valid('json'))) as never, 200),
  );
}
