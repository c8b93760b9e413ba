import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { checkUrl, type Resolver, systemResolver } from './guard.ts';
import type { GuardPolicy } from './guard-policy.ts';
import type { BlockedRequest } from './guard-route.ts';

export interface GuardProxy {
  /** `http://127.0.0.1:PORT`, for a context's `proxy.server`. */
  url: string;
  blocked: BlockedRequest[];
  /** Connections to destinations open right now (requests in flight and CONNECT tunnels). */
  openUpstreams(): number;
  close(): Promise<void>;
}

/** Marks a response the proxy made up to refuse a request, so navigation code can tell. */
export const BLOCKED_HEADER = 'x-browserfn-blocked';

/** Playwright context option: everything, loopback included, goes through the proxy. */
export const proxyOption = (proxy: GuardProxy) => ({ server: proxy.url, bypass: '<-loopback>' });

const shared = new Map<string, Promise<GuardProxy>>();

/** One proxy per policy per process: cheap to keep, and contexts come and go. */
export function guardProxyFor(policy: GuardPolicy): Promise<GuardProxy> {
  const key = JSON.stringify([
    policy.allowPrivate,
    [...policy.allowHosts].sort(),
    [...(policy.allowUrls ?? [])].sort(),
  ]);
  let p = shared.get(key);
  if (!p) {
    p = startGuardProxy(policy);
    shared.set(key, p);
  }
  return p;
}

export async function closeGuardProxies(): Promise<void> {
  const all = [...shared.values()];
  shared.clear();
  await Promise.all(all.map(async (p) => (await p).close()));
}

const HOP_BY_HOP = [
  'proxy-connection',
  'proxy-authorization',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'upgrade',
];

/** Methods a browser sends without a body, safe to send again when a stale connection failed them. */
const REPLAYABLE = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How a request fails on a kept-alive connection the other side had just closed. */
const STALE_SOCKET = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/**
 * A forward proxy that every request of a guarded context goes through, redirect hops included:
 * it resolves the host itself, checks every address against the guard, and connects to the
 * address it checked, so neither a redirect nor a DNS answer that changes between check and
 * connect can reach a private address.
 */
export async function startGuardProxy(
  policy: GuardPolicy,
  resolve: Resolver = systemResolver,
): Promise<GuardProxy> {
  const blocked: BlockedRequest[] = [];
  const sockets = new Set<Duplex>();
  /** Every connection we opened to a destination; each ends when its client side does. */
  const upstreams = new Set<{ destroy(): unknown }>();
  // Our own pool, so closing the proxy also closes the idle keep-alive connections it made.
  const agent = new http.Agent({ keepAlive: true });
  // Connections used once and closed: for requests with a body (see `replayable` below).
  const oneShot = new http.Agent({ keepAlive: false });

  /** Checks the URL and returns the address to connect to, or records why not. */
  const admit = async (url: string, kind: string): Promise<{ ip: string } | { message: string }> => {
    const verdict = await checkUrl(url, policy, resolve);
    if (!verdict.ok) {
      blocked.push({
        url: verdict.url,
        rule: verdict.rule,
        message: verdict.message,
        resourceType: kind,
        at: new Date().toISOString(),
      });
      if (blocked.length > 200) blocked.shift();
      return { message: verdict.message };
    }
    const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
    if (net.isIP(host)) return { ip: host };
    try {
      const ips = await resolve(host);
      if (!ips[0]) return { message: `cannot resolve ${host}` };
      return { ip: ips[0] };
    } catch {
      return { message: `cannot resolve ${host}` };
    }
  };

  const server = http.createServer(async (req, res) => {
    const target = req.url ?? '';
    if (!/^https?:\/\//i.test(target)) {
      res.writeHead(400).end('browserfn guard proxy: absolute URL expected');
      return;
    }
    const ok = await admit(target, 'proxy');
    if ('message' in ok) {
      res.writeHead(403, { 'content-type': 'text/plain; charset=utf-8', [BLOCKED_HEADER]: '1' });
      res.end(`browserfn network guard: ${ok.message}`);
      return;
    }
    // The page may have gone while we checked: then there is no one to fetch for.
    if (res.destroyed) return;
    const u = new URL(target);
    const headers = { ...req.headers };
    for (const h of HOP_BY_HOP) delete headers[h];
    // A request with a body is streamed through once, so it cannot be sent again: it gets a
    // connection of its own, never an idle one the destination may be closing.
    const replayable =
      REPLAYABLE.has(req.method ?? '') &&
      req.headers['content-length'] === undefined &&
      req.headers['transfer-encoding'] === undefined;
    let current: http.ClientRequest | undefined;
    // A page closed (or a context torn down) before the destination answered: without this the
    // request to a server that never answers stays open for the life of the process.
    res.on('close', () => {
      if (!res.writableFinished) current?.destroy();
    });
    const send = (retry: boolean) => {
      const upstream = http.request(
        {
          host: ok.ip,
          port: u.port || 80,
          method: req.method,
          path: `${u.pathname}${u.search}`,
          headers: { ...headers, host: u.host },
          setHost: false,
          agent: replayable ? agent : oneShot,
        },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers);
          up.pipe(res);
        },
      );
      current = upstream;
      upstreams.add(upstream);
      upstream.on('close', () => upstreams.delete(upstream));
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        if (res.destroyed) return;
        // A kept-alive connection the destination closed while it sat idle fails the request that
        // picked it up (ECONNRESET, EPIPE). Under load that race is common; the site was never
        // unreachable, so the request is sent again, once, on a new connection.
        if (retry && upstream.reusedSocket && !res.headersSent && STALE_SOCKET.has(err.code ?? '')) {
          upstreams.delete(upstream);
          send(false);
          return;
        }
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`browserfn guard proxy: ${err.message}`);
      });
      if (replayable) upstream.end();
      else req.pipe(upstream);
    };
    send(replayable);
  });

  server.on('connect', async (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const [host, port] = splitHostPort(req.url ?? '');
    const ok = await admit(`https://${host}:${port}/`, 'connect');
    if ('message' in ok) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\nbrowserfn network guard: ${ok.message}`,
      );
      return;
    }
    if (client.destroyed) return;
    // The proxy accepts connections from this machine only, but CONNECT must not become a way
    // to reach ports the guard refused: the check above ran on the exact host and port.
    const upstream = net.connect(Number(port), ok.ip, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstreams.add(upstream);
    // Either side gone ends the tunnel, connected or still connecting.
    upstream.on('close', () => {
      sockets.delete(upstream);
      upstreams.delete(upstream);
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // A proxy alone must not keep a process alive; the browsers using it do that.
  server.unref();
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    blocked,
    openUpstreams: () => upstreams.size,
    close: async () => {
      for (const s of sockets) s.destroy();
      for (const u of upstreams) u.destroy();
      agent.destroy();
      oneShot.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

function splitHostPort(authority: string): [string, string] {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(authority) ?? /^([^:]+):(\d+)$/.exec(authority);
  return m ? [m[1]!.includes(':') ? `[${m[1]}]` : m[1]!, m[2]!] : [authority, '443'];
}
