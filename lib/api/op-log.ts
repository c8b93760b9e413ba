/**
 * One log line per `/v1/act`, `/v1/observe` and `/v1/extract` call: which op, the HTTP status, how
 * long it took, the tokens it spent and which tier answered. Only those fields are read off the
 * answer, never the request: instructions, variables and page data stay out of the log.
 */
import type { MiddlewareHandler } from 'hono';
import type { OpLog } from '../ops/types.ts';

const LOGGED = new Set(['/v1/act', '/v1/observe', '/v1/extract']);

/** The loggable fields of an op's JSON answer (pure). */
export function opLogFields(body: unknown): { tokens?: number; resolvedBy?: string; errorKind?: string } {
  if (!body || typeof body !== 'object') return {};
  const b = body as {
    usage?: { promptTokens?: unknown; completionTokens?: unknown };
    resolvedBy?: unknown;
    error?: { kind?: unknown };
  };
  const usage = b.usage ?? (b.error as { usage?: typeof b.usage } | undefined)?.usage;
  const tokens =
    usage && typeof usage === 'object'
      ? (Number(usage.promptTokens) || 0) + (Number(usage.completionTokens) || 0)
      : undefined;
  return {
    ...(tokens !== undefined ? { tokens } : {}),
    ...(typeof b.resolvedBy === 'string' ? { resolvedBy: b.resolvedBy } : {}),
    ...(typeof b.error?.kind === 'string' ? { errorKind: b.error.kind } : {}),
  };
}

export function logOps(log: OpLog | undefined): MiddlewareHandler {
  return async (c, next) => {
    if (!log || c.req.method !== 'POST' || !LOGGED.has(c.req.path)) return next();
    const started = performance.now();
    await next();
    let body: unknown;
    if (c.res.headers.get('content-type')?.includes('application/json'))
      body = await c.res
        .clone()
        .json()
        .catch(() => undefined);
    log({
      level: c.res.status >= 500 ? 'warn' : 'info',
      msg: 'op',
      method: c.req.path.slice('/v1/'.length),
      status: c.res.status,
      ms: Math.round(performance.now() - started),
      tenant: (c.get as (k: string) => unknown)('tenant'),
      ...opLogFields(body),
    });
  };
}
