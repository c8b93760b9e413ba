/**
 * What the model-driven page routes share (explore-route.ts, repair-route.ts, scenario-route.ts,
 * agent-route.ts): their request fields and OpenAPI answers, the guard's check of the start page and
 * of every later navigation, the model a call needs (422 without one), the fresh page on the start
 * URL, closed whatever happens, and the call's deadline.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Page } from 'playwright-core';
import { checkUrl } from '../browser/guard.ts';
import { guardedGoto } from '../browser/navigate.ts';
import { openSession } from '../browser/session.ts';
import type { LlmClient } from '../llm/types.ts';
import { OpError } from '../ops/types.ts';
import { authedResponses, type DocResponse } from './openapi-responses.ts';
import { modelFor, type OpDeps, type OpRequest } from './run-op.ts';
import { ErrorBody } from './schemas.ts';

export const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

/** Values typed as %name%: the model sees the name only. */
export const SecretVariables = z
  .record(z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'), z.string())
  .optional()
  .describe('secrets typed as %name%; never sent to the model, logged or stored');

export const TimeoutMs = z
  .number()
  .int()
  .min(1000)
  .max(900_000)
  .optional()
  .describe('answer by then (default 120 s)');

/** The tokens, model calls and time a call spent. */
export const UsageBody = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  calls: z.number(),
  ms: z.number(),
});

/** Just the fields of UsageBody, whatever else a usage record carries. */
export const usageBody = (u: z.infer<typeof UsageBody>): z.infer<typeof UsageBody> => ({
  promptTokens: u.promptTokens,
  completionTokens: u.completionTokens,
  calls: u.calls,
  ms: u.ms,
});

const errorAnswer = (description: string) => ({
  description,
  content: { 'application/json': { schema: ErrorBody } },
});

/**
 * The OpenAPI route of a page call: a JSON body in, its answer as the 200, and the errors every such
 * call can give — 400, 403 (the guard), 422 (no model), 401, 429 and the 502 / 504 of opening the
 * browser and page (a deadline inside the loop is a 200). `own` adds or rewords answers.
 */
export const pageRoute = <Req extends z.ZodType, Res extends z.ZodType>(route: {
  path: string;
  summary: string;
  request: Req;
  ok: { description: string; schema: Res };
  own?: Record<number, DocResponse>;
}) =>
  createRoute({
    method: 'post',
    path: route.path,
    summary: route.summary,
    security: [{ bearer: [] }],
    request: { body: { content: { 'application/json': { schema: route.request } }, required: true } },
    responses: {
      200: {
        description: route.ok.description,
        content: { 'application/json': { schema: route.ok.schema } },
      },
      400: errorAnswer('invalid request'),
      403: errorAnswer('URL blocked by the network guard'),
      422: errorAnswer('no model configured'),
      ...route.own,
      ...authedResponses({}, { limit: 'calls', deadline: true }),
    },
  });

/** The guard's verdict on a page the call opens or navigates to: a refusal is a 403. */
export async function admitUrl(url: string, deps: Pick<OpDeps, 'policy'>): Promise<void> {
  const verdict = await checkUrl(url, deps.policy);
  if (!verdict.ok) throw new OpError('blocked', verdict.message);
}

/** The check a page's later navigations go through. */
export const navigationGuard =
  (deps: Pick<OpDeps, 'policy'>) =>
  (url: string): Promise<void> =>
    admitUrl(url, deps);

/** The model the call asks for, else the operator's; none configured is a 422 saying who `needs` it. */
export async function requireModel(body: OpRequest, deps: OpDeps, needs: string): Promise<LlmClient> {
  const llm = await modelFor(body, deps);
  if (llm) return llm;
  const { noModelError } = await import('../llm/config.ts');
  throw new OpError('no_model', `${needs} a model. ${noModelError().message}`);
}

/** When a call must answer by: its own timeoutMs, else the server's request deadline (default 120 s). */
export const deadlineOf = (body: { timeoutMs?: number | undefined }, deps: { requestTimeoutMs?: number }) =>
  Date.now() + (body.timeoutMs ?? deps.requestTimeoutMs ?? 120_000);

/**
 * `work` on a fresh browser context opened on `url` (guarded, loaded), closed whatever happens. The
 * URL is checked by the caller first, so a refusal costs no browser.
 */
export async function onFreshPage<T>(
  url: string,
  deps: OpDeps,
  work: (page: Page) => Promise<T>,
): Promise<T> {
  const browser = deps.browser ? await deps.browser() : undefined;
  const session = await openSession({ ...(browser ? { browser } : {}), policy: deps.policy });
  try {
    await guardedGoto(session.page, url);
    await session.page.waitForLoadState('load', { timeout: 10_000 }).catch(() => undefined);
    return await work(session.page);
  } finally {
    await session.close();
  }
}
