import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { type GuardPolicy, mergePolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { resolveModelConfig } from '../llm/config.ts';
import type { OpLog } from '../ops/types.ts';
import { jsonLog, type LogLevel, linesTo, logLevelFrom } from '../runs/json-log.ts';
import { storesFromEnv } from '../store/config.ts';
import { createApp } from './app.ts';
import { keysFromEnv } from './auth.ts';
import { DEMO_PATH, DEMO_PATHS } from './demo.ts';
import { requestTimeouts } from './http-limits.ts';
import { localRunsApi } from './runs-local.ts';
import { closeSharedDebuggableBrowser, sharedDebuggableBrowser } from './stagehand/browser.ts';
import { createStagehandService } from './stagehand/index.ts';
import { localTenantCaches } from './tenant-caches.ts';
import { callRateFromEnv } from './tenant-gate.ts';

/** Runs one key may have in progress on this server, and samples at once per run (defaults). */
const DEFAULT_RUNS_PER_KEY = 3;
const DEFAULT_RUN_CONCURRENCY = 8;
/**
 * Samples one run may have on this shared server: each is a file pair on this disk and a line of the
 * merge, so one key's huge run cannot take the disk and memory every tenant needs. Bigger runs belong
 * on AWS (Distributed Map) or split over several runs.
 */
const DEFAULT_SAMPLES_PER_RUN = 2000;
const isLoopbackHost = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');
const positive = (v: string | undefined) => (Number(v) > 0 ? Math.floor(Number(v)) : undefined);

export interface ServeOptions {
  port?: number;
  host?: string;
  cacheDir?: string;
  print?: (line: string) => void;
  /** Lowest level logged to stderr (default BROWSERFN_LOG_LEVEL, else info; `serve --verbose`: debug). */
  logLevel?: LogLevel;
}

/**
 * Serves the API on Node with the embedded browser. With no keys configured it binds to loopback
 * only and makes up a key for this run, so trying it locally takes one command and exposes nothing.
 */
export async function startServer(options: ServeOptions = {}) {
  const print = options.print ?? ((l: string) => process.stdout.write(`${l}\n`));
  const keys = keysFromEnv();
  let generated: string | undefined;
  if (keys.size === 0) {
    generated = `bfn_${randomBytes(18).toString('base64url')}`;
    keys.set(generated, 'local');
  }
  const host = options.host ?? process.env.HOST ?? (generated ? '127.0.0.1' : '0.0.0.0');
  const port = options.port ?? Number(process.env.PORT ?? 8787);
  const cacheDir =
    options.cacheDir ?? process.env.BROWSERFN_CACHE_DIR ?? join(process.cwd(), '.browserfn', 'cache');
  const policy = policyFromEnv();
  // Pages reach this server at a loopback address whatever it binds to; only the demo page is
  // opened to them, never the API itself.
  const pageHost =
    host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const demo = { url: '', pages: [] as string[] };
  // What pages of calls and of the runs this server starts may open: the operator's policy, plus the
  // demo pages once the port is known (so the README's try-it works offline for runs too). Exact
  // paths: the API and anything else on loopback stay closed.
  const pagePolicy: GuardPolicy = { ...policy };
  // One JSON line per event on stderr (each act / observe / extract call, run slices, failures).
  const log: OpLog = jsonLog(
    linesTo('stderr'),
    options.logLevel ?? logLevelFrom(process.env.BROWSERFN_LOG_LEVEL),
  );
  const cacheFor = localTenantCaches(cacheDir, (err) =>
    log({ level: 'warn', msg: 'action cache failed', error: String(err) }),
  );
  const env = process.env;
  const stagehand = createStagehandService({
    keys,
    policy,
    cacheFor,
    log,
    debuggableBrowser: sharedDebuggableBrowser,
    ...(Number(env.BROWSERFN_STAGEHAND_IDLE_MS) > 0
      ? { idleMs: Number(env.BROWSERFN_STAGEHAND_IDLE_MS) }
      : {}),
    ...(Number(env.BROWSERFN_STAGEHAND_MAX_SESSIONS) > 0
      ? { maxSessionsPerTenant: Number(env.BROWSERFN_STAGEHAND_MAX_SESSIONS) }
      : {}),
    ...(env.BROWSERFN_PUBLIC_URL ? { publicUrl: env.BROWSERFN_PUBLIC_URL } : {}),
  });
  // One browser for both: Stagehand sessions need its CDP port (loopback, reached only through the
  // proxy), the stateless API only its contexts.
  const browser = async () => (await sharedDebuggableBrowser()).browser;
  const stores = storesFromEnv();
  const callRate = callRateFromEnv(env.BROWSERFN_CALLS_PER_SECOND_PER_KEY, stores.runs);
  const runs = localRunsApi({
    runStore: stores.runs,
    evidence: stores.evidence,
    workflows: stores.workflows,
    runMemory: stores.runMemory,
    browser,
    policy: pagePolicy,
    log,
    limits: {
      runsPerTenant: positive(env.BROWSERFN_MAX_RUNS_PER_KEY) ?? DEFAULT_RUNS_PER_KEY,
      concurrency: positive(env.BROWSERFN_RUN_MAX_CONCURRENCY) ?? DEFAULT_RUN_CONCURRENCY,
      samplesPerRun: positive(env.BROWSERFN_RUN_MAX_SAMPLES) ?? DEFAULT_SAMPLES_PER_RUN,
    },
  });
  const app = createApp({
    keys,
    policy: pagePolicy,
    browser,
    cacheFor,
    log,
    stagehand,
    runs,
    workflows: stores.workflows,
    ...(positive(env.BROWSERFN_MAX_CALLS_PER_KEY)
      ? { maxCallsPerTenant: positive(env.BROWSERFN_MAX_CALLS_PER_KEY)! }
      : {}),
    ...(callRate ? { callRate } : {}),
    ...(positive(env.BROWSERFN_MAX_READS_PER_KEY)
      ? { maxReadsPerTenant: positive(env.BROWSERFN_MAX_READS_PER_KEY)! }
      : {}),
  });
  // Warm the browser while the first caller is still typing.
  void browser().catch((err) => print(`browser failed to start: ${(err as Error).message}`));
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port, hostname: host, serverOptions: requestTimeouts(env) }, () =>
      resolve(s),
    );
    s.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} on ${host} is already in use: stop what is listening there, or pick another port with --port N (or PORT=N)`,
            )
          : err.code === 'EACCES'
            ? new Error(
                `not allowed to listen on port ${port} on ${host}: pick a port above 1023 with --port N`,
              )
            : err,
      ),
    );
  });
  // The CDP proxy for Stagehand sessions is a WebSocket: hono's fetch handler never sees upgrades.
  server.on('upgrade', (req, socket, head) => {
    if (!stagehand.handleUpgrade(req, socket, head)) socket.destroy();
  });
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const base = `http://${host === '0.0.0.0' ? 'localhost' : host}:${actualPort}`;
  demo.url = `http://${pageHost}:${actualPort}${DEMO_PATH}`;
  demo.pages = DEMO_PATHS.map((p) => `http://${pageHost}:${actualPort}${p}`);
  pagePolicy.allowUrls = mergePolicy(policy, { allowUrls: demo.pages }).allowUrls ?? [];
  print(`browserfn API listening on ${base}  (OpenAPI: ${base}/openapi.json, demo page: ${demo.url})`);
  print(startBanner(policy, demo.url));
  if (generated)
    print(
      isLoopbackHost(host)
        ? `no BROWSERFN_API_KEYS set: bound to loopback only; key for this run: ${generated}`
        : `no BROWSERFN_API_KEYS set, listening on ${host} as asked; key for this run: ${generated}`,
    );
  print(
    `try: curl -s ${base}/v1/act -H 'authorization: Bearer ${generated ?? '<your key>'}' ` +
      `-H 'content-type: application/json' -d '{"url":"${demo.url}","instruction":"click the Sign in button"}'`,
  );
  print(
    `Stagehand scripts: STAGEHAND_API_URL=${base}${stagehand.prefix} BROWSERBASE_BASE_URL=${base}${stagehand.prefix} ` +
      `BROWSERBASE_API_KEY=${generated ?? '<your key>'}`,
  );
  const close = async () => {
    await stagehand.close();
    await new Promise<void>((r) => server.close(() => r()));
    await closeSharedDebuggableBrowser();
  };
  return { url: base, port: actualPort, key: generated, close };
}

/** What the server will do with a call: the model it asks, and what pages may open besides public sites. */
function startBanner(policy: { allowPrivate: boolean; allowHosts: string[] }, demoUrl: string): string {
  let model: string;
  try {
    const config = resolveModelConfig(undefined);
    model = config
      ? `${config.provider}/${config.model}`
      : 'none (zero-token tier only; set BROWSERFN_MODEL, or send "model" with a call)';
  } catch (err) {
    model = `misconfigured: ${(err as Error).message.split('\n')[0]}`;
  }
  const hosts = policy.allowPrivate
    ? 'every address (BROWSERFN_ALLOW_PRIVATE=1)'
    : `public sites${policy.allowHosts.length ? ` + ${policy.allowHosts.join(', ')}` : ''} + the demo pages under ${demoUrl}`;
  return `model: ${model}; pages may open: ${hosts}`;
}
