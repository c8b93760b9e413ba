import http from 'node:http';
import net from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';

/** What a service behind the server would answer; none of it may come back to the caller. */
const BANNER = 'SECRET-INTERNAL-BANNER-7f3a';

let site: FixtureServer;
let chrome: RemoteChrome;
/** Chrome's DevTools port, reachable as 127.0.0.1:F, [::1]:F and localhost:F, with a connection count. */
let forward: { port: number; connections: number; servers: net.Server[] };
let garbageHttp: http.Server;
let garbageTcp: net.Server;
let pointer: http.Server;
const apps: Record<'closed' | 'open' | 'operator', { base: string; close: () => void }> = {} as never;

const listen = <S extends net.Server>(s: S, host = '127.0.0.1', port = 0) =>
  new Promise<S>((r) => s.listen(port, host, () => r(s)));
const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

async function startForwarder(target: number) {
  const state = { port: 0, connections: 0, servers: [] as net.Server[] };
  const make = () =>
    net.createServer((client) => {
      state.connections++;
      const up = net.connect(target, '127.0.0.1');
      client.pipe(up).pipe(client);
      client.on('error', () => up.destroy());
      up.on('error', () => client.destroy());
    });
  const v4 = await listen(make());
  state.port = portOf(v4);
  const v6 = await listen(make(), '::1', state.port);
  state.servers = [v4, v6];
  return state;
}

function startApp(env: NodeJS.ProcessEnv) {
  const app = createApp({
    keys: new Map([['key', 'tenant']]),
    policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
    env,
  });
  return new Promise<{ base: string; close: () => void }>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () =>
      resolve({ base: `http://127.0.0.1:${portOf(s as net.Server)}`, close: () => s.close() }),
    );
  });
}

beforeAll(async () => {
  [site, chrome] = await Promise.all([startFixtureServer(), startRemoteChrome()]);
  forward = await startForwarder(chrome.port);
  garbageHttp = await listen(
    http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${BANNER} {"webSocketDebuggerUrl": 1} <html>${BANNER}</html>`);
    }),
  );
  garbageTcp = await listen(net.createServer((s) => s.end(`${BANNER}\r\n\r\n${BANNER}`)));
  // An endpoint the operator allowed that names, as its WebSocket, a place the caller may not go.
  pointer = await listen(
    http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ webSocketDebuggerUrl: chrome.wsUrl }));
    }),
  );
  const F = forward.port;
  const wsPath = new URL(chrome.wsUrl).pathname;
  apps.closed = await startApp({});
  apps.open = await startApp({
    BROWSERFN_CDP_ALLOW_HOSTS: [
      `127.0.0.1:${F}`,
      `[::1]:${F}`,
      `localhost:${F}`,
      `127.0.0.1:${portOf(garbageHttp)}`,
      `127.0.0.1:${portOf(garbageTcp)}`,
      `127.0.0.1:${portOf(pointer)}`,
    ].join(','),
  });
  apps.operator = await startApp({ BROWSERFN_CDP_URL: `ws://127.0.0.1:${F}${wsPath}` });
});
afterAll(async () => {
  for (const a of Object.values(apps)) a?.close();
  for (const s of [...(forward?.servers ?? []), garbageHttp, garbageTcp, pointer]) s?.close();
  await closeGuardProxies();
  await chrome?.close();
  await site?.close();
});

const observe = async (app: keyof typeof apps, cdpUrl: unknown) => {
  const res = await fetch(`${apps[app].base}/v1/observe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer key' },
    body: JSON.stringify({ cdpUrl, url: `${site.url}/login.html` }),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
};

const spellings = () => {
  const F = forward.port;
  return [
    `http://127.0.0.1:${F}`,
    `http://[::1]:${F}`,
    `http://localhost:${F}`,
    `ws://127.0.0.1:${F}${new URL(chrome.wsUrl).pathname}`,
  ];
};

describe('cdpUrl from API callers', () => {
  it('refuses loopback browser endpoints (403) without the operator list, before connecting', async () => {
    const F = forward.port;
    const more = [`http://0x7f.1:${F}`, `http://2130706433:${F}`, `ws://[::ffff:127.0.0.1]:${F}/`];
    for (const cdpUrl of [...spellings(), ...more]) {
      const r = await observe('closed', cdpUrl);
      expect(r.status, cdpUrl).toBe(403);
      expect(r.json.error.kind).toBe('blocked');
      expect(r.json.error.message).toMatch(/^cdpUrl: .*BROWSERFN_CDP_ALLOW_HOSTS/);
    }
    expect(forward.connections).toBe(0);
  });

  it('holds for the agent route too: no connection to an unlisted endpoint', async () => {
    for (const cdpUrl of spellings()) {
      const res = await fetch(`${apps.closed.base}/v1/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key' },
        body: JSON.stringify({ cdpUrl, goal: 'read the page' }),
      });
      expect(res.status, cdpUrl).toBe(403);
      expect(((await res.json()) as { error: { kind: string } }).error.kind).toBe('blocked');
    }
    expect(forward.connections).toBe(0);
  });

  it('answers 400 naming cdpUrl for a malformed value or another scheme', async () => {
    for (const cdpUrl of [
      'not a url',
      'file:///etc/passwd',
      `ftp://127.0.0.1:${forward.port}/`,
      'javascript:1',
      42,
    ]) {
      const r = await observe('open', cdpUrl);
      expect(r.status, String(cdpUrl)).toBe(400);
      expect(r.json.error.kind).toBe('invalid');
      expect(r.json.error.issues[0].path).toBe('cdpUrl');
    }
    expect(forward.connections).toBe(0);
  });

  it('connects to every loopback spelling the operator listed', async () => {
    for (const cdpUrl of spellings()) {
      const r = await observe('open', cdpUrl);
      expect(r.status, `${cdpUrl}: ${r.text}`).toBe(200);
      expect(r.json.elements.some((e: { name: string }) => e.name === 'Email')).toBe(true);
    }
    expect(forward.connections).toBeGreaterThanOrEqual(4);
  });

  it('refuses the server own browser (BROWSERFN_CDP_URL) unless listed: it runs the jobs of every tenant', async () => {
    const before = forward.connections;
    const own = await observe('operator', `ws://127.0.0.1:${forward.port}${new URL(chrome.wsUrl).pathname}`);
    expect(own.status, own.text).toBe(403);
    expect(own.json.error.message).toMatch(/^cdpUrl: .* is not one of the operator's browser endpoints/);
    expect(forward.connections).toBe(before);
  });

  it('never echoes what an endpoint answered, and checks the WebSocket URL an endpoint names', async () => {
    const before = forward.connections;
    for (const port of [portOf(garbageHttp), portOf(garbageTcp)])
      for (const cdpUrl of [`http://127.0.0.1:${port}`, `ws://127.0.0.1:${port}/devtools/browser/x`]) {
        const r = await observe('open', cdpUrl);
        expect(r.status, cdpUrl).toBe(502);
        expect(r.json.error.message).toMatch(/^cdpUrl: could not connect to the browser at /);
        expect(r.text).not.toContain('SECRET');
      }
    // The pointer names Chrome's own port, which is not on the list: refused, and Chrome never hears of it.
    const r = await observe('open', `http://127.0.0.1:${portOf(pointer)}`);
    expect(r.status, r.text).toBe(403);
    expect(r.json.error.message).toContain(`127.0.0.1:${chrome.port}`);
    expect(forward.connections).toBe(before);
  });
});
