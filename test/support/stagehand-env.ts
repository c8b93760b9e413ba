import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stagehand } from '@browserbasehq/stagehand';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll } from 'vitest';
import WebSocket from 'ws';
import { createApp } from '../../lib/api/app.ts';
import { type DebuggableBrowser, launchDebuggableBrowser } from '../../lib/api/stagehand/browser.ts';
import {
  createStagehandService,
  type StagehandDeps,
  type StagehandService,
} from '../../lib/api/stagehand/index.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { type FixtureServer, startFixtureServer } from './fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from './llm-server.ts';

/**
 * browserfn serving the Stagehand protocol on loopback, as `npm start` does (the hono app plus the
 * CDP upgrade), with the two variables the SDK reads pointed at it. Keys: key-a, key-b, key-c.
 */
export interface StagehandEnv {
  site: FixtureServer;
  llm: ScriptedModel;
  dbg: DebuggableBrowser;
  service: StagehandService;
  /** `http://127.0.0.1:PORT/stagehand`: STAGEHAND_API_URL and BROWSERBASE_BASE_URL. */
  base: string;
  /** A call to the protocol with a key, as the SDK would make it. */
  call(path: string, key: string, init?: RequestInit): Promise<Response>;
  connectUrlOf(sessionId: string, key: string): Promise<string>;
  close(): Promise<void>;
}

/** A Stagehand instance on browserfn with the caller's model key, as a user would write it. */
export const sdkFor = (apiKey: string) =>
  new Stagehand({
    env: 'BROWSERBASE',
    apiKey,
    model: { modelName: 'openai/gpt-4.1-mini', apiKey: 'sk-test' },
    verbose: 0,
    disablePino: true,
    logger: () => {},
  });

export async function listen(
  svc: StagehandService,
  keys: Map<string, string>,
  env: Record<string, string>,
  port: number,
) {
  const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${port}`] };
  const app = createApp({ keys, policy, env, stagehand: svc });
  const srv = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  srv.on('upgrade', (req, socket, head) => {
    if (!svc.handleUpgrade(req, socket, head)) socket.destroy();
  });
  return { srv, url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}${svc.prefix}` };
}

export async function startStagehandEnv(
  opts: { cacheFor?: StagehandDeps['cacheFor']; requestTimeoutMs?: number; agentFinishMs?: number } = {},
): Promise<StagehandEnv> {
  const [site, llm, dbg] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    launchDebuggableBrowser(),
  ]);
  const keys = new Map([
    ['key-a', 'tenant-a'],
    ['key-b', 'tenant-b'],
    ['key-c', 'tenant-c'],
  ]);
  // Only the fixture's first origin is allowed; its second origin is loopback the guard refuses.
  const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
  // The server holds no model key of its own: the SDK's x-model-api-key decides.
  const env = { OPENAI_BASE_URL: llm.openaiBaseURL, BROWSERFN_MODEL_MAX_RETRIES: '0' };
  const service = createStagehandService({
    keys,
    policy,
    env,
    debuggableBrowser: async () => dbg,
    maxSessionsPerTenant: 2,
    ...(opts.cacheFor ? { cacheFor: opts.cacheFor } : {}),
    ...(opts.requestTimeoutMs ? { requestTimeoutMs: opts.requestTimeoutMs } : {}),
    ...(opts.agentFinishMs ? { agentFinishMs: opts.agentFinishMs } : {}),
  });
  const { srv, url: base } = await listen(service, keys, env, site.port);
  const saved = [process.env.STAGEHAND_API_URL, process.env.BROWSERBASE_BASE_URL];
  process.env.STAGEHAND_API_URL = base;
  process.env.BROWSERBASE_BASE_URL = base;
  // agent().execute() keeps its checkpoints and evidence in the configured stores: a temp folder here.
  const stateDir = await mkdtemp(join(tmpdir(), 'bfn-stagehand-'));
  process.env.BROWSERFN_RUNS_DIR = join(stateDir, 'runs');
  process.env.BROWSERFN_EVIDENCE_DIR = join(stateDir, 'evidence');
  const call = (path: string, key: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { 'x-bb-api-key': key, 'content-type': 'application/json', ...(init.headers ?? {}) },
    });
  return {
    site,
    llm,
    dbg,
    service,
    base,
    call,
    connectUrlOf: async (id, key) =>
      ((await (await call(`/v1/sessions/${id}`, key)).json()) as { connectUrl: string }).connectUrl,
    async close() {
      await service.close();
      srv.close();
      await closeGuardProxies();
      await dbg.browser.close();
      await site.close();
      await llm.close();
      await rm(stateDir, { recursive: true, force: true });
      if (saved[0] === undefined) delete process.env.STAGEHAND_API_URL;
      else process.env.STAGEHAND_API_URL = saved[0];
      if (saved[1] === undefined) delete process.env.BROWSERBASE_BASE_URL;
      else process.env.BROWSERBASE_BASE_URL = saved[1];
    },
  };
}

export type CdpReply = { result?: Record<string, unknown>; error?: { message: string } };

/** A raw CDP client: what any tool handed the session's connectUrl can send. */
export async function cdpClient(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const waiting = new Map<number, (m: CdpReply) => void>();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString());
    if (typeof m.id === 'number') waiting.get(m.id)?.(m);
  });
  return {
    send(method: string, params: Record<string, unknown> = {}, sessionId?: string) {
      const n = ++id;
      ws.send(JSON.stringify({ id: n, method, params, ...(sessionId ? { sessionId } : {}) }));
      return new Promise<CdpReply>((r) => waiting.set(n, r));
    },
    close: () => ws.close(),
  };
}

export const pageIdsOf = (s: Stagehand) => s.context.pages().map((p) => p.mainFrameId());

/**
 * A test file's environment and SDK instance (key-a unless `make` says otherwise): started before
 * its tests and handed to `ready`, closed after them.
 */
export function stagehandSuite(
  opts: Parameters<typeof startStagehandEnv>[0],
  ready: (env: StagehandEnv, sh: Stagehand) => void,
  make: () => Stagehand = () => sdkFor('key-a'),
): void {
  let env: StagehandEnv | undefined;
  let sh: Stagehand | undefined;
  beforeAll(async () => {
    env = await startStagehandEnv(opts);
    sh = make();
    await sh.init();
    ready(env, sh);
  });
  afterAll(async () => {
    await sh?.close();
    await env?.close();
  });
}
