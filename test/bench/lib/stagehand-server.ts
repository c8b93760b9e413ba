/**
 * browserfn's HTTP server as its own process, for bench:stagehand-sdk: in API mode the SDK talks to
 * a server, not to code sharing its event loop. Configured by the parent through the environment
 * (BENCH_KEYS "key:tenant", BENCH_ALLOW_HOSTS, OPENAI_BASE_URL); prints its Stagehand base URL as
 * one line on stdout and runs until stdin closes. No action cache: the bench measures the pipeline.
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { createApp } from '../../../lib/api/app.ts';
import { launchDebuggableBrowser } from '../../../lib/api/stagehand/browser.ts';
import { createStagehandService } from '../../../lib/api/stagehand/index.ts';
import { closeGuardProxies } from '../../../lib/browser/guard-proxy.ts';

const [key, tenant] = (process.env.BENCH_KEYS ?? 'bench-key:bench').split(':');
const keys = new Map([[key!, tenant!]]);
const policy = { allowPrivate: false, allowHosts: (process.env.BENCH_ALLOW_HOSTS ?? '').split(',') };
const env = {
  OPENAI_BASE_URL: process.env.OPENAI_BASE_URL ?? '',
  BROWSERFN_MODEL_MAX_RETRIES: '0',
};
const dbg = await launchDebuggableBrowser();
const service = createStagehandService({ keys, policy, env, debuggableBrowser: async () => dbg });
const app = createApp({ keys, policy, env, stagehand: service });
const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
  const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
});
server.on('upgrade', (req, socket, head) => {
  if (!service.handleUpgrade(req, socket, head)) socket.destroy();
});
process.stdout.write(`http://127.0.0.1:${(server.address() as AddressInfo).port}${service.prefix}\n`);

process.stdin.resume();
process.stdin.on('end', async () => {
  await service.close();
  server.close();
  await closeGuardProxies();
  await dbg.browser.close();
  process.exit(0);
});
