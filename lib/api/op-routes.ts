/**
 * What the act / observe / extract routes are made of, shared by the Node app (app.ts) and the
 * edge worker's (edge-app.ts): their OpenAPI entries and the answers they document, the 400 that
 * names the field, and the request deadline. No Node import: the edge bundle takes it as is.
 */
import { createRoute, type z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { LlmClient, StructuredRequest } from '../llm/types.ts';
import { OpError } from '../ops/types.ts';
import { ErrorBody } from './schemas.ts';

const answer = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody } },
});

export const opErrorResponses = {
  400: answer('invalid request'),
  401: answer('missing or unknown API key'),
  405: answer('wrong HTTP method'),
  413: answer('body too large'),
  429: answer('this API key already has its most calls in progress (limit, retryable; Retry-After)'),
  403: answer('URL (or a navigation of the page after it loaded) blocked by the network guard'),
  422: answer('could not resolve the instruction'),
  502: answer('the page could not be reached (unreachable) or the model failed'),
  503: answer('the browser died mid-request (browser_crashed, retryable)'),
  504: answer('the request deadline passed; says what it was waiting for'),
};

/** The OpenAPI route of one op: a JSON body in, its result or one of the error answers out. */
export const opRoute = <Req extends z.ZodType, Res extends z.ZodType>(
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
      ...opErrorResponses,
    },
  });

type Validated = { success: true } | { success: false; error: { issues: z.core.$ZodIssue[] } };

/** A body that fails its schema: 400 with the first field in the message and every issue listed. */
export function validationHook(result: Validated, c: Context) {
  if (result.success) return;
  const issues = result.error.issues.map((i) => ({
    path: i.path.map(String).join('.') || '(body)',
    message: i.message,
  }));
  const first = issues[0];
  return c.json(
    {
      error: { kind: 'invalid', message: first ? `${first.path}: ${first.message}` : 'invalid body', issues },
    },
    400,
  );
}

/** What a request is busy with right now, so a deadline can say what was slow. */
export interface Doing {
  what: string;
}

/** The model client, noting in `doing` while a call is out (so a 504 can say so). */
export function noting(llm: LlmClient, doing: Doing): LlmClient {
  return {
    model: llm.model,
    async generate<R>(req: StructuredRequest<R>) {
      const before = doing.what;
      doing.what = `the model ${llm.model} to answer`;
      try {
        return await llm.generate(req);
      } finally {
        doing.what = before;
      }
    },
  };
}

/**
 * Runs `fn` under the request deadline; on timeout the page is closed, the model call in flight
 * is cancelled (no more retries) and a 504 says what it was still waiting for. `started` gets the
 * work itself, which may still be closing its page after the 504 is sent.
 */
export async function deadline<T>(
  ms: number,
  fn: (signal: AbortSignal, doing: Doing) => Promise<T>,
  started: (work: Promise<unknown>) => void,
): Promise<T> {
  const controller = new AbortController();
  const doing: Doing = { what: 'the browser to start' };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const what = doing.what;
      controller.abort();
      reject(new OpError('timeout', `request took longer than ${ms} ms, waiting for ${what}`));
    }, ms);
  });
  const work = fn(controller.signal, doing);
  started(work.catch(() => undefined));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
