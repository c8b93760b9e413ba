import { handle } from 'hono/aws-lambda';
import { createApp } from '../lib/api/app.ts';
import { keysFromEnv } from '../lib/api/auth.ts';
import { policyFromEnv } from '../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../lib/browser/guard-proxy.ts';
import { closeSharedBrowser, sharedBrowser } from '../lib/browser/session.ts';

/**
 * Lambda entry for API Gateway (HTTP API, payload v2) and Function URLs. The browser stays warm
 * between invocations of the same container; each request gets its own context.
 */
export const app = createApp({
  keys: keysFromEnv(),
  policy: policyFromEnv(),
  browser: sharedBrowser,
  requestTimeoutMs: Number(process.env.BROWSERFN_REQUEST_TIMEOUT_MS ?? 25_000),
  log: (e) => console.log(JSON.stringify(e)),
});

export const handler = handle(app);

/**
 * Closes the warm browser and the guard proxy with every connection it holds, after which nothing
 * of ours keeps the process alive (Lambda shutdown, tests, embedders).
 */
export async function shutdown(): Promise<void> {
  await closeSharedBrowser();
  await closeGuardProxies();
}
