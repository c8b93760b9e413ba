import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import { createCdpUpgradeHandler } from '../../lib/api/stagehand/cdp-proxy.ts';
import { cdpClient } from '../support/stagehand-env.ts';

/**
 * The proxy's half of issue 21 item 2, against a browser that keeps a target paused after a detach.
 * This machine's Chromium happens to resume a waiting target when its last session detaches (the
 * two-tenant test in hardening-cdp.test.ts shows the other tenant's page answering); remote CDP
 * endpoints and other builds need not. So a loopback CDP endpoint plays that browser and records
 * what the proxy sends it: a foreign target attached in the waiting state must be released
 * (`Runtime.runIfWaitingForDebugger` on its session) before the proxy detaches from it.
 */

let browser: WebSocketServer;
let proxy: Server;
let proxyUrl: string;
const received: { method: string; sessionId?: string; params?: Record<string, unknown> }[] = [];

beforeAll(async () => {
  browser = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => browser.once('listening', () => r()));
  browser.on('connection', (ws: WebSocket) => {
    ws.on('message', (data) => {
      const cmd = JSON.parse(data.toString()) as { id: number; method: string; sessionId?: string };
      received.push(cmd);
      ws.send(
        JSON.stringify({ id: cmd.id, result: {}, ...(cmd.sessionId ? { sessionId: cmd.sessionId } : {}) }),
      );
      if (cmd.method === 'Target.setAutoAttach') {
        // Another tenant's new page, held for the debugger by this attach; then one of ours.
        for (const [sid, ctx] of [
          ['S-OTHER', 'CTX-OTHER'],
          ['S-MINE', 'CTX-MINE'],
        ] as const)
          ws.send(
            JSON.stringify({
              method: 'Target.attachedToTarget',
              params: {
                sessionId: sid,
                targetInfo: { targetId: `T-${sid}`, type: 'page', browserContextId: ctx, url: 'about:blank' },
                waitingForDebugger: true,
              },
            }),
          );
      }
    });
  });
  const wsEndpoint = `ws://127.0.0.1:${(browser.address() as AddressInfo).port}/devtools/browser/x`;
  const upgrade = createCdpUpgradeHandler({
    resolve: () => ({
      wsEndpoint,
      contextId: 'CTX-MINE',
      policy: { allowPrivate: false, allowHosts: [] },
      onActivity: () => undefined,
      track: () => () => undefined,
    }),
  });
  proxy = createServer((_req, res) => res.end());
  proxy.on('upgrade', upgrade);
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
  proxyUrl = `ws://127.0.0.1:${(proxy.address() as AddressInfo).port}/cdp`;
});

afterAll(async () => {
  proxy?.close();
  browser?.close();
});

describe('the CDP proxy and waitForDebuggerOnStart', () => {
  it("releases another context's waiting target before leaving it, and leaves ours to the client", async () => {
    const client = await cdpClient(proxyUrl);
    try {
      const reply = await client.send('Target.setAutoAttach', {
        autoAttach: true,
        waitForDebuggerOnStart: true,
        flatten: true,
      });
      expect(reply.error).toBeUndefined();
      // The proxy answers the events at once; wait until both have been dealt with.
      for (let i = 0; i < 200 && !received.some((c) => c.method === 'Target.detachFromTarget'); i++)
        await new Promise((r) => setTimeout(r, 10));
      const other = received.filter((c) => c.sessionId === 'S-OTHER' || c.params?.sessionId === 'S-OTHER');
      expect(other.map((c) => c.method)).toEqual([
        'Runtime.runIfWaitingForDebugger',
        'Target.detachFromTarget',
      ]);
      expect(other[0]?.sessionId).toBe('S-OTHER');
      // Our own waiting page is the client's to resume: the proxy sends nothing for it.
      expect(received.filter((c) => c.sessionId === 'S-MINE' || c.params?.sessionId === 'S-MINE')).toEqual(
        [],
      );
    } finally {
      client.close();
    }
  });
});
