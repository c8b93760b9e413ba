import type { Context } from 'hono';
import { Hono } from 'hono';
import type { z } from 'zod';
import { DEFAULT_WALL_CLOCK_MS } from '../../agent/state.ts';
import { NetworkBlockedError } from '../../browser/guard.ts';
import { OpError } from '../../ops/types.ts';
import { type KeyRing, tenantForKey } from '../auth.ts';
import { limitBody } from '../body-limit.ts';
import { toErrorResponse } from '../errors.ts';
import type { OpDeps } from '../run-op.ts';
import { NoModelError } from './agent.ts';
import type { DebuggableBrowser } from './browser.ts';
import { openSessionContext, pageFor, type SessionContext, targetIdOf } from './context.ts';
import { chooseModel } from './models.ts';
import { type CallEnv, runAct, runAgentExecute, runExtract, runNavigate, runObserve } from './ops.ts';
import { SessionLimitError, type SessionRegistry, type StagehandSession } from './sessions.ts';
import { type Failure, respond } from './sse.ts';
import {
  ActBody,
  AgentExecuteBody,
  BrowserbaseCreateBody,
  ExtractBody,
  NavigateBody,
  ObserveBody,
  ReleaseBody,
  SessionStartBody,
  WireError,
} from './wire.ts';

export interface StagehandRouteDeps extends OpDeps {
  keys: KeyRing;
  debuggableBrowser: () => Promise<DebuggableBrowser>;
  registry: SessionRegistry<SessionContext>;
  /** Where the app is mounted, e.g. `/stagehand` (the CDP URL is built under it). */
  prefix: string;
  /** Public base URL (`https://host`), when the server sits behind a proxy that rewrites Host/scheme. */
  publicUrl?: string;
  requestTimeoutMs?: number;
  agentFinishMs?: number;
  maxBodyBytes?: number;
}

type Env = { Variables: { tenant: string } };
type Session = StagehandSession<SessionContext>;

const fail = (c: Context, status: 400 | 401 | 404 | 413 | 429, kind: string, message: string, extra = {}) =>
  // `success`/`message` are what the SDK reads from a failed start; `error` is our usual shape.
  c.json({ success: false, message, error: { kind, message, ...extra } }, status);

/**
 * A refused session start. The SDK turns any status but 200 and 401 into "Unknown error: <status>"
 * and keeps the reason for its log, but throws a 200 with `success: false` as an error carrying our
 * message. So the SDK (it names itself in `x-sdk-version`) gets the latter; other clients the status.
 */
const refuseStart = (c: Context, status: 400 | 404 | 429, kind: string, message: string) =>
  c.req.header('x-sdk-version')
    ? c.json({ success: false, message, error: { kind, message } }, 200)
    : fail(c, status, kind, message);

async function parse<T extends z.ZodType>(c: Context, schema: T, refuse: typeof refuseStart = fail) {
  let raw: unknown;
  const text = await c.req.text();
  try {
    raw = text.trim() ? JSON.parse(text) : {};
  } catch {
    return { error: refuse(c, 400, 'invalid', '(body): not valid JSON') };
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return { value: parsed.data as z.infer<T> };
  const issues = parsed.error.issues.map((i) => ({
    path: i.path.map(String).join('.') || '(body)',
    message: i.message,
  }));
  const first = `${issues[0]!.path}: ${issues[0]!.message}`;
  return {
    error: refuse === fail ? fail(c, 400, 'invalid', first, { issues }) : refuse(c, 400, 'invalid', first),
  };
}

export function toFailure(err: unknown, log: OpDeps['log']): Failure {
  if (err instanceof NoModelError) return { status: 422, kind: err.kind, message: err.message };
  if (err instanceof WireError) return { status: 400, kind: 'invalid', message: err.message };
  if (err instanceof NetworkBlockedError) return { status: 403, kind: 'blocked', message: err.message };
  const { status, body } = toErrorResponse(err);
  if (status >= 500 && body.error.kind === 'internal')
    log?.({ level: 'warn', msg: 'stagehand call failed', error: String(err) });
  return { status, kind: body.error.kind, message: body.error.message };
}

/** Calls without a `timeout` of their own. */
const CALL_MS = 120_000;
/** `agent().execute()` has no timeout in the SDK: the agent's own wall clock, plus room to finish. */
export const AGENT_CALL_MS = DEFAULT_WALL_CLOCK_MS + 60_000;
/** How long before its hard deadline an agent stops starting steps and answers with what it has. */
export const AGENT_FINISH_MS = 60_000;

/** The hard deadline of one call: its own `timeout`, else the server's, else the default per kind. */
export function callDeadlineMs(
  op: string,
  timeout: number | undefined,
  serverMs: number | undefined,
): number {
  return timeout ?? serverMs ?? (op === 'agentExecute' ? AGENT_CALL_MS : CALL_MS);
}

/**
 * Runs `fn` until `ms` pass; the signal it gets is aborted then, or when the client goes away, so
 * nothing is done on the page after the caller has its answer.
 */
async function withDeadline<T>(
  ms: number,
  clientGone: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const expired = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      expired.abort();
      reject(new OpError('timeout', `the call took longer than ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([fn(AbortSignal.any([expired.signal, clientGone])), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The Stagehand API and the slice of the Browserbase sessions API the SDK calls, on one base URL. */
export function stagehandRoutes(deps: StagehandRouteDeps): Hono<Env> {
  const { registry } = deps;
  const app = new Hono<Env>();
  const maxBody = deps.maxBodyBytes ?? 1024 * 1024;
  const agentFinishMs = deps.agentFinishMs ?? AGENT_FINISH_MS;

  app.use('*', async (c, next) => {
    const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
    const tenant = tenantForKey(deps.keys, c.req.header('x-bb-api-key') ?? bearer);
    if (!tenant)
      return fail(
        c,
        401,
        'unauthorized',
        'send x-bb-api-key: <browserfn API key> (the SDK sends BROWSERBASE_API_KEY; keys come from BROWSERFN_API_KEYS)',
      );
    c.set('tenant', tenant);
    await next();
  });
  app.use(
    '*',
    limitBody(maxBody, (c) => fail(c, 413, 'invalid', `body larger than ${maxBody} bytes`)),
  );
  app.onError((err, c) => {
    const f = toFailure(err, deps.log);
    return c.json(
      { success: false, message: f.message, error: { kind: f.kind, message: f.message } },
      f.status,
    );
  });

  const connectUrl = (c: Context, s: Session) => {
    const base = new URL(deps.publicUrl ?? c.req.url);
    const scheme = base.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${base.host}${deps.prefix}/cdp/${s.id}?token=${s.token}`;
  };
  const bbSession = (c: Context, s: Session) => ({
    id: s.id,
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.lastActive).toISOString(),
    startedAt: new Date(s.createdAt).toISOString(),
    ...(s.endedAt ? { endedAt: new Date(s.endedAt).toISOString() } : {}),
    expiresAt: new Date(s.lastActive + registry.idleMs).toISOString(),
    keepAlive: false,
    projectId: '',
    proxyBytes: 0,
    region: 'local',
    status: s.status,
    connectUrl: s.status === 'RUNNING' ? connectUrl(c, s) : '',
    seleniumRemoteUrl: '',
    signingKey: '',
  });
  const missing = (c: Context) => fail(c, 404, 'not_found', `no session ${c.req.param('id')} for this key`);

  const open = async (
    c: Context<Env>,
    modelName: string | undefined,
    viewport?: { width: number; height: number },
    refuse: typeof refuseStart = fail,
  ) => {
    try {
      const s = await registry.open(c.get('tenant'), modelName, async () =>
        openSessionContext(await deps.debuggableBrowser(), deps.policy, viewport),
      );
      deps.log?.({ level: 'info', msg: 'stagehand session started', session: s.id, tenant: s.tenant });
      // A context that goes away underneath (browser crash) takes its session with it.
      s.resources.context.once('close', () => void registry.end(s, 'browser context closed'));
      return s;
    } catch (err) {
      if (err instanceof SessionLimitError) return refuse(c, 429, 'limit', err.message);
      throw err;
    }
  };

  // Stagehand API: start. Registered before the Browserbase `POST /v1/sessions/:id`.
  app.post('/v1/sessions/start', async (c) => {
    const body = await parse(c, SessionStartBody, refuseStart);
    if (body.error) return body.error;
    // A model the caller holds a key for but we cannot serve is an error now, not at the first act.
    try {
      await chooseModel(
        { call: undefined, session: body.value.modelName, headerKey: c.req.header('x-model-api-key') },
        deps,
      );
    } catch (err) {
      return refuseStart(c, 400, 'invalid', `modelName: ${(err as Error).message.replace(/^model: /, '')}`);
    }
    const resume = body.value.browserbaseSessionID;
    if (resume) {
      const s = registry.get(resume, c.get('tenant'));
      if (!s)
        return refuseStart(c, 404, 'not_found', `browserbaseSessionID: no session ${resume} for this key`);
      // A script that resumes with another model (or prompt) means that one from now on.
      if (body.value.modelName) s.modelName = body.value.modelName;
      if (body.value.systemPrompt) s.systemPrompt = body.value.systemPrompt;
      return c.json({ success: true, data: { sessionId: s.id, available: true, cdpUrl: connectUrl(c, s) } });
    }
    const viewport = body.value.browserbaseSessionCreateParams?.browserSettings?.viewport;
    const s = await open(c, body.value.modelName, viewport, refuseStart);
    if (s instanceof Response) return s;
    if (body.value.systemPrompt) s.systemPrompt = body.value.systemPrompt;
    return c.json({ success: true, data: { sessionId: s.id, available: true, cdpUrl: connectUrl(c, s) } });
  });

  // Browserbase API: create (the SDK's disableAPI mode), retrieve, debug, release.
  app.post('/v1/sessions', async (c) => {
    const body = await parse(c, BrowserbaseCreateBody);
    if (body.error) return body.error;
    const s = await open(c, undefined, body.value.browserSettings?.viewport);
    if (s instanceof Response) return s;
    return c.json(bbSession(c, s), 201);
  });
  app.get('/v1/sessions/:id', (c) => {
    const s = registry.get(c.req.param('id'), c.get('tenant'));
    return s ? c.json(bbSession(c, s)) : missing(c);
  });
  app.get('/v1/sessions/:id/debug', async (c) => {
    const s = registry.get(c.req.param('id'), c.get('tenant'));
    if (!s) return missing(c);
    const pages = await Promise.all(
      s.resources.context.pages().map(async (p) => ({
        id: await targetIdOf(p).catch(() => ''),
        url: p.url(),
        title: await p.title().catch(() => ''),
        debuggerUrl: '',
        debuggerFullscreenUrl: '',
        faviconUrl: '',
      })),
    );
    return c.json({ debuggerUrl: '', debuggerFullscreenUrl: '', wsUrl: connectUrl(c, s), pages });
  });
  app.post('/v1/sessions/:id', async (c) => {
    const body = await parse(c, ReleaseBody);
    if (body.error) return body.error;
    const s = registry.get(c.req.param('id'), c.get('tenant'));
    if (!s) return missing(c);
    await registry.end(s, 'released by the client');
    deps.log?.({ level: 'info', msg: 'stagehand session released', session: s.id });
    return c.json(bbSession(c, s));
  });

  app.post('/v1/sessions/:id/end', async (c) => {
    const s = registry.get(c.req.param('id'), c.get('tenant'));
    if (!s) return missing(c);
    await registry.end(s, 'ended by the client');
    return c.json({ success: true });
  });

  app.get('/v1/sessions/:id/replay', (c) => {
    const s = registry.get(c.req.param('id'), c.get('tenant'));
    if (!s) return missing(c);
    const pages: { url: string; timestamp: number; duration: number; actions: typeof s.replay }[] = [];
    for (const a of s.replay) {
      const last = pages[pages.length - 1];
      if (last && last.url === a.url) {
        last.actions.push(a);
        last.duration = a.timestamp - last.timestamp;
      } else pages.push({ url: a.url, timestamp: a.timestamp, duration: 0, actions: [a] });
    }
    return c.json({ success: true, data: { pages } });
  });

  const OPS = {
    navigate: [NavigateBody, runNavigate],
    act: [ActBody, runAct],
    observe: [ObserveBody, runObserve],
    extract: [ExtractBody, runExtract],
    agentExecute: [AgentExecuteBody, runAgentExecute],
  } as const;

  for (const [name, [schema, run]] of Object.entries(OPS)) {
    app.post(`/v1/sessions/:id/${name}`, async (c) => {
      const s = registry.get(c.req.param('id'), c.get('tenant'));
      if (!s) return missing(c);
      const body = await parse(c, schema);
      if (body.error) return body.error;
      const frameId = (body.value as { frameId?: string }).frameId;
      const page = await pageFor(s.resources.context, frameId);
      if (!page)
        return fail(c, 404, 'not_found', `frameId: no page ${frameId ?? '(any)'} in session ${s.id}`);
      const options = (body.value as { options?: { timeout?: number } }).options;
      const timeoutMs = callDeadlineMs(name, options?.timeout, deps.requestTimeoutMs);
      const headerKey = c.req.header('x-model-api-key');
      // The SDK's `serverCache: false` (on the instance or the call).
      const serverCache = c.req.header('browserbase-cache-bypass') !== 'true';
      const started = Date.now();
      return respond(
        c.req.header('x-stream-response') === 'true',
        (emit) =>
          registry.using(s, () =>
            withDeadline(timeoutMs, emit.signal, (signal) => {
              const env: CallEnv = {
                session: s,
                page,
                deps,
                headerKey,
                serverCache,
                emit,
                signal,
                // The agent hands back what it has before the hard deadline, when there is room to.
                ...(timeoutMs >= 2 * agentFinishMs ? { finishBy: started + timeoutMs - agentFinishMs } : {}),
              };
              return (run as (e: CallEnv, b: unknown) => Promise<unknown>)(env, body.value);
            }),
          ),
        (err) => toFailure(err, deps.log),
      );
    });
  }
  return app;
}
