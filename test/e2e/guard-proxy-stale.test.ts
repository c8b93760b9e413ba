/**
 * A site that closes an idle kept-alive connection just as the guard proxy reuses it (the race
 * behind "could not reach …/login.html: read ECONNRESET" on a busy machine) is still reached: the
 * proxy sends a bodiless request again on a new connection, and never reuses a connection for a
 * request with a body.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GuardProxy, startGuardProxy } from '../../lib/browser/guard-proxy.ts';

/**
 * Answers the first request of each connection (keeping it open) and resets the connection at its
 * second: what a server does when its keep-alive timer fires as the next request arrives.
 */
function resettingServer() {
  const connections = { opened: 0, reset: 0 };
  const server = net.createServer((socket) => {
    connections.opened++;
    let seen = 0;
    let buffered = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.slice(0, end);
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      buffered = buffered.slice(end + 4 + length);
      seen++;
      if (seen > 1) {
        connections.reset++;
        socket.resetAndDestroy();
        return;
      }
      const body = `answer ${connections.opened}`;
      socket.write(
        `HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n${body}`,
      );
    });
  });
  return { server, connections };
}

/** One request through the proxy, as Chromium sends it (absolute URL to the proxy). */
function viaProxy(proxy: GuardProxy, url: string, method = 'GET', body?: string) {
  const p = new URL(proxy.url);
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = http.request(
      {
        host: p.hostname,
        port: p.port,
        method,
        path: url,
        agent: false,
        headers: body ? { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => {
          text += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

let site: ReturnType<typeof resettingServer>;
let origin: string;
let proxy: GuardProxy;

beforeAll(async () => {
  site = resettingServer();
  await new Promise<void>((r) => site.server.listen(0, '127.0.0.1', r));
  const port = (site.server.address() as net.AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  proxy = await startGuardProxy({ allowPrivate: false, allowHosts: [`127.0.0.1:${port}`] });
});

afterAll(async () => {
  await proxy.close();
  await new Promise<void>((r) => site.server.close(() => r()));
});

describe('guard proxy and a kept-alive connection the site closed', () => {
  it('a page load that picked up the dying connection is sent again and answered', async () => {
    const first = await viaProxy(proxy, `${origin}/login.html`);
    expect(first).toEqual({ status: 200, text: 'answer 1' });
    // The proxy reuses the idle connection; the site resets it; the page still loads.
    const second = await viaProxy(proxy, `${origin}/login.html`);
    expect(site.connections.reset).toBe(1);
    expect(second).toEqual({ status: 200, text: 'answer 2' });
  });

  it('a form post gets a connection of its own, so it is never caught by the race', async () => {
    const before = site.connections.reset;
    for (let i = 0; i < 3; i++) {
      const posted = await viaProxy(proxy, `${origin}/login`, 'POST', 'user=a&pass=b');
      expect(posted.status).toBe(200);
    }
    expect(site.connections.reset).toBe(before);
  });
});
