/**
 * The answers every authenticated /v1 route shares, in one place, so each route's entry in
 * /openapi.json states only what is its own and the common ones (401, 429, 502, 504) stay true to
 * the middlewares in app.ts that give them.
 */
import { STAGEHAND_PREFIX } from './stagehand/index.ts';

type Registry = { registerPath(route: Record<string, unknown>): void };

export type DocResponse = { description: string; content?: Record<string, { schema: unknown }> };

const json = (description: string): DocResponse => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
});

/** Which per-key limit (app.ts / runs.ts) can turn the call away with a 429. */
export type KeyLimit = 'calls' | 'reads' | 'runs';

const LIMIT_429: Record<KeyLimit, string> = {
  calls:
    'this API key already has its most page calls in progress (BROWSERFN_MAX_CALLS_PER_KEY), or has started its calls for this second (BROWSERFN_CALLS_PER_SECOND_PER_KEY); retryable, see Retry-After',
  reads:
    'this API key already has its most run reads in progress (BROWSERFN_MAX_READS_PER_KEY), or has started its calls for this second (BROWSERFN_CALLS_PER_SECOND_PER_KEY); retryable, see Retry-After',
  runs: 'this API key already has its most runs in progress on this server; retryable, see Retry-After',
};

export interface CommonAnswers {
  /** The per-key limit the call counts against, if any. */
  limit?: KeyLimit;
  /** The call opens a page or asks a model under the request deadline (502 and 504 can happen). */
  deadline?: boolean;
}

/** `own` plus 401 (every /v1 route needs a key) and the 429 / 502 / 504 the call can meet. */
export function authedResponses(
  own: Record<number, DocResponse>,
  common: CommonAnswers = {},
): Record<number, DocResponse> {
  const deadlined: Record<number, DocResponse> = common.deadline
    ? {
        502: own[502] ?? json('the page could not be reached, or the model call failed'),
        504: own[504] ?? json('the request deadline passed; the message says what it was waiting for'),
      }
    : {};
  const answers: Record<number, DocResponse> = {
    ...own,
    401: json('missing or unknown API key (send Authorization: Bearer <API key>)'),
    ...deadlined,
  };
  if (common.limit) answers[429] = json(LIMIT_429[common.limit]);
  return answers;
}

/** Why the Stagehand protocol routes are not in this document, and where they are described. */
export const OPENAPI_INFO = {
  title: 'browserfn',
  version: '0.1.0',
  description: `The browserfn HTTP API. Excluded: the Stagehand v3 protocol routes under ${STAGEHAND_PREFIX}/ (sessions, act/observe/extract/agent streamed as server-sent events, and a CDP WebSocket at ${STAGEHAND_PREFIX}/cdp/) are not listed here: their contract is the one the @browserbasehq/stagehand 3.x SDK speaks, not ours, and the README section "Run your Stagehand scripts on browserfn" describes how to use them.`,
  'x-excluded': [
    {
      prefix: `${STAGEHAND_PREFIX}/`,
      reason: 'the Stagehand v3 SDK protocol (SSE and a CDP WebSocket), defined by that SDK',
      describedIn: 'README.md#run-your-stagehand-scripts-on-browserfn',
    },
  ],
};

/** Methods whose body app.ts's size limit reads (GET and HEAD bodies are never read). */
const WITH_BODY = new Set(['post', 'put', 'patch', 'delete']);

/** A /v1 route with a body, with the 413 the body limit answers before the route's handler runs. */
export function withBodyLimit<R extends Record<string, unknown>>(route: R): R {
  const responses = route.responses as Record<number, DocResponse> | undefined;
  if (!WITH_BODY.has(String(route.method)) || !String(route.path).startsWith('/v1/') || responses?.[413])
    return route;
  return {
    ...route,
    responses: {
      ...responses,
      413: json('the body is larger than the server takes (1 MiB by default); nothing was done'),
    },
  };
}

/**
 * GET /healthz (the one unauthenticated route besides the demo pages and this document), and the
 * 413 on every /v1 route registered after this call that takes a body: the limit is a middleware
 * no route sees, so no route's own list can be trusted to remember it.
 */
export function documentHealth(registry: Registry): void {
  const register = registry.registerPath.bind(registry);
  registry.registerPath = (route) => register(withBodyLimit(route));
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    summary: 'Liveness: the server answers (no key needed; opens no browser)',
    responses: { 200: json('{ ok: true }') },
  });
}
