/**
 * Signed report links (issue 28 item 6): `POST /v1/runs/{id}/report-link` answers a short-lived URL
 * of the run's report that opens in a browser without an Authorization header. The token in its
 * query is bound to tenant + run + expiry and signed with HMAC-SHA256; the report GET accepts it in
 * place of the Bearer key, and only there. An expired, tampered or other-run token is a 401.
 *
 * The signing key comes from `BROWSERFN_REPORT_LINK_KEY`; without it each process makes a random
 * one, so links end with the process (and one instance's links fail on another): set the key
 * wherever more than one instance serves the API.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import type { RunStore } from '../store/ports.ts';
import { authedResponses } from './openapi-responses.ts';

export const DEFAULT_LINK_SECONDS = 15 * 60;
export const MAX_LINK_SECONDS = 24 * 60 * 60;
/** Shortest configured key accepted: 32 characters (a 128-bit random key, hex-encoded). */
const MIN_KEY_CHARS = 32;

export class ReportLinkKeyError extends Error {
  override name = 'ReportLinkKeyError';
}

let processKey: Uint8Array | undefined;

/** The signing key: the configured one, else one made for this process (the same for its lifetime). */
export function reportLinkKey(env: NodeJS.ProcessEnv = process.env): Uint8Array {
  const configured = env.BROWSERFN_REPORT_LINK_KEY;
  if (configured !== undefined && configured !== '') {
    if (configured.length < MIN_KEY_CHARS)
      throw new ReportLinkKeyError(
        `BROWSERFN_REPORT_LINK_KEY: at least ${MIN_KEY_CHARS} characters (e.g. openssl rand -hex 32)`,
      );
    return new TextEncoder().encode(configured);
  }
  processKey ??= randomBytes(32);
  return processKey;
}

export interface LinkClaims {
  tenant: string;
  runId: string;
  /** Expiry, seconds since the epoch. */
  exp: number;
}

const mac = (key: Uint8Array, payload: string) => createHmac('sha256', key).update(payload).digest();

/** A token for these claims (pure): base64url(JSON claims) "." base64url(HMAC). */
export function signReportToken(claims: LinkClaims, key: Uint8Array): string {
  const payload = Buffer.from(JSON.stringify({ t: claims.tenant, r: claims.runId, e: claims.exp })).toString(
    'base64url',
  );
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/**
 * The tenant a token grants the report of `runId` to at `nowS`, or why it grants nothing (pure).
 * The signature is checked first, in constant time, so a forged token learns nothing else.
 */
export function verifyReportToken(
  token: string,
  runId: string,
  key: Uint8Array,
  nowS: number,
): { tenant: string } | { problem: 'malformed' | 'signature' | 'expired' | 'other-run' } {
  const [payload, sig, extra] = token.split('.');
  if (!payload || !sig || extra !== undefined) return { problem: 'malformed' };
  // Compared as text: base64url has several spellings of the same bytes (the last character's spare
  // bits), and a token that was changed at all is refused, not decoded to the one it was.
  const given = Buffer.from(sig, 'utf8');
  const want = Buffer.from(mac(key, payload).toString('base64url'), 'utf8');
  if (given.length !== want.length || !timingSafeEqual(given, want)) return { problem: 'signature' };
  let claims: { t?: unknown; r?: unknown; e?: unknown };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return { problem: 'malformed' };
  }
  if (typeof claims.t !== 'string' || typeof claims.r !== 'string' || typeof claims.e !== 'number')
    return { problem: 'malformed' };
  if (claims.r !== runId) return { problem: 'other-run' };
  if (claims.e <= nowS) return { problem: 'expired' };
  return { tenant: claims.t };
}

const REPORT_PATH = /^\/v1\/runs\/([^/]+)\/report$/;

/**
 * For the auth middleware: a request that may be let in by its link token (a GET or HEAD of a run's
 * report carrying `?token=`) gets its tenant, or the one-line reason it is refused; any other
 * request gets `undefined` and needs the Bearer key as usual.
 */
export function reportLinkAuth(
  method: string,
  path: string,
  token: string | undefined,
  key: Uint8Array,
  nowS = Math.floor(Date.now() / 1000),
): { tenant: string } | { refused: string } | undefined {
  if (token === undefined || (method !== 'GET' && method !== 'HEAD')) return undefined;
  const m = REPORT_PATH.exec(path);
  if (!m) return undefined;
  let runId: string;
  try {
    runId = decodeURIComponent(m[1]!);
  } catch {
    return { refused: 'this report link is not valid' };
  }
  const v = verifyReportToken(token, runId, key, nowS);
  if ('tenant' in v) return v;
  return {
    refused:
      v.problem === 'expired'
        ? 'this report link has expired; ask for a new one (POST /v1/runs/{id}/report-link)'
        : 'this report link is not valid for this run; ask for a new one (POST /v1/runs/{id}/report-link)',
  };
}

const LinkBody = z
  .object({
    expiresInSeconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_LINK_SECONDS)
      .optional()
      .describe(`how long the link works (default ${DEFAULT_LINK_SECONDS} s, at most ${MAX_LINK_SECONDS} s)`),
  })
  .strict();

type Env = { Variables: { tenant: string } };
type Registry = { registerPath(route: Record<string, unknown>): void };

export function registerReportLinkRoute(
  app: Hono<Env>,
  deps: { runStore: RunStore; key: Uint8Array; now?: () => number },
): void {
  if ('openAPIRegistry' in app)
    (app.openAPIRegistry as Registry).registerPath({
      method: 'post',
      path: '/v1/runs/{id}/report-link',
      summary:
        'A short-lived signed URL of the run report that opens in a browser without the API key (?token=…)',
      security: [{ bearer: [] }],
      request: {
        params: z.object({ id: z.string().describe('run id') }),
        body: { content: { 'application/json': { schema: LinkBody } }, required: false },
      },
      responses: authedResponses({
        200: {
          description: '{ url, expiresAt }',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        400: {
          description: 'bad expiresInSeconds',
          content: { 'application/json': { schema: { type: 'object' } } },
        },
        404: { description: 'no such run for this key' },
      }),
    });

  app.post('/v1/runs/:id/report-link', async (c: Context<Env>) => {
    const runId = c.req.param('id') ?? '';
    const text = await c.req.text();
    let body: unknown = {};
    if (text.trim() !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        return c.json({ error: { kind: 'invalid', message: 'body must be JSON (or empty)' } }, 400);
      }
    }
    const parsed = LinkBody.safeParse(body);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      const path = i?.path.join('.') || '(body)';
      const message = `${path}: ${path === 'expiresInSeconds' ? `a whole number of seconds from 1 to ${MAX_LINK_SECONDS}` : i?.message}`;
      return c.json({ error: { kind: 'invalid', message, issues: [{ path, message }] } }, 400);
    }
    const tenant = c.get('tenant');
    if (!(await deps.runStore.getRun(tenant, runId)))
      return c.json({ error: { kind: 'not_found', message: `no run "${runId}"` } }, 404);
    const nowS = Math.floor((deps.now?.() ?? Date.now()) / 1000);
    const exp = nowS + (parsed.data.expiresInSeconds ?? DEFAULT_LINK_SECONDS);
    const token = signReportToken({ tenant, runId, exp }, deps.key);
    const url = new URL(`/v1/runs/${encodeURIComponent(runId)}/report`, c.req.url);
    url.searchParams.set('token', token);
    return c.json({ url: url.toString(), expiresAt: new Date(exp * 1000).toISOString() }, 200);
  });
}
