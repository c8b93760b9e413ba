import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { spentOn } from '../llm/spent.ts';
import type { Usage } from '../llm/types.ts';
import { OpError } from '../ops/types.ts';

const STATUS: Record<string, ContentfulStatusCode> = {
  invalid: 400,
  blocked: 403,
  no_model: 422,
  not_found: 422,
  not_actionable: 422,
  navigation: 502,
  unreachable: 502,
  model: 502,
  browser_crashed: 503,
  timeout: 504,
};

export interface ErrorPayload {
  error: {
    kind: string;
    message: string;
    issues?: { path: string; message: string }[];
    candidates?: unknown[];
    /** The URL a blocked or unreachable navigation was headed for. */
    url?: string;
    /** The same request may well work if sent again. */
    retryable?: boolean;
    /** Tokens the failed call had spent (model replies are billed even when they did not fit). */
    usage?: Usage;
  };
}

/** The failed call's spend on the payload, when it spent anything. */
function withUsage(body: ErrorPayload, err: unknown): ErrorPayload {
  const spent = spentOn(err);
  if (spent && spent.promptTokens + spent.completionTokens > 0) body.error.usage = spent;
  return body;
}

/** Any failure as `{ error: { kind, message } }` with a status a client can branch on. */
export function toErrorResponse(err: unknown): { status: ContentfulStatusCode; body: ErrorPayload } {
  if (err instanceof OpError) {
    const body: ErrorPayload = { error: { kind: err.kind, message: err.message } };
    if (err.url) body.error.url = err.url;
    if (err.kind === 'browser_crashed') body.error.retryable = true;
    if (err.candidates?.length) body.error.candidates = err.candidates;
    return { status: STATUS[err.kind] ?? 500, body: withUsage(body, err) };
  }
  if (err instanceof HTTPException) {
    const status = err.status as ContentfulStatusCode;
    if (status === 415)
      return {
        status,
        body: {
          error: { kind: 'invalid', message: 'send the body as JSON with content-type: application/json' },
        },
      };
    return { status, body: { error: { kind: status === 400 ? 'invalid' : 'http', message: err.message } } };
  }
  const e = err as Error & { kind?: string };
  if (e?.name === 'LlmError') {
    const kind = e.kind === 'no_model' ? 'no_model' : 'model';
    return { status: STATUS[kind] ?? 502, body: withUsage({ error: { kind, message: e.message } }, err) };
  }
  if (e?.name === 'SnapshotError')
    return { status: 400, body: { error: { kind: 'invalid', message: e.message } } };
  return { status: 500, body: { error: { kind: 'internal', message: 'internal error' } } };
}
