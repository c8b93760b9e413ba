import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { largePage } from '../fixtures/large-page.ts';
import { storePage } from '../fixtures/store-page.ts';

export interface FixtureServer {
  url: string;
  /** A second origin (another port) serving the same files, for cross-origin iframes. */
  crossOriginUrl: string;
  port: number;
  crossOriginPort: number;
  /** Paths requested so far, in order (both origins). */
  hits: string[];
  close(): Promise<void>;
}

const SITE = fileURLToPath(new URL('../fixtures/site/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

function productPage(slug: string): string {
  const name = slug.replace(/-/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${name}</title></head>
<body><main><h1>${name}</h1><p>A fine product.</p><button type="button">Add to cart</button><a href="/products.html">Back to all products</a></main></body></html>`;
}

const productImage = (slug: string) =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="80" height="60"><rect width="80" height="60" fill="#${(slug.length * 123456).toString(16).slice(0, 6).padEnd(6, '8')}"/></svg>`;

/** Serves test/fixtures/site on two loopback origins, plus a few generated routes. */
export async function startFixtureServer(): Promise<FixtureServer> {
  const hits: string[] = [];
  const origins = { main: '', cross: '' };
  const sockets = new Set<import('node:net').Socket>();

  // `/busy/<slug>?times=N[&status=503]`: "429 Too Many Requests" (or a 503), Retry-After: 1, for the
  // first N asks, then the product page.
  const busyAsks = new Map<string, number>();
  const handler = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fixture.local');
    hits.push(url.pathname + url.search);
    const send = (status: number, type: string, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    const path = url.pathname === '/' ? '/index.html' : url.pathname;
    if (path === '/large.html') return send(200, TYPES['.html']!, largePage());
    if (path === '/store.html') return send(200, TYPES['.html']!, storePage());
    if (path === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      return res.end();
    }
    if (path === '/events') {
      // A stream that never ends, like live dashboards and chats have.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      res.write('data: hello\n\n');
      const timer = setInterval(() => res.write(': ping\n\n'), 500);
      res.on('close', () => clearInterval(timer));
      return;
    }
    if (path === '/slow') {
      const ms = Math.min(Number(url.searchParams.get('ms') ?? 500), 10_000);
      // `&button`: a page with something to do on it, which tells the server when it is done.
      const button = url.searchParams.has('button')
        ? `<button onclick="fetch('/bought')">Buy now</button>`
        : '';
      return setTimeout(() => send(200, TYPES['.html']!, `<p>slow ${ms}</p>${button}`), ms);
    }
    const busy = /^\/busy\/([\w-]+)$/.exec(path);
    if (busy) {
      const asked = (busyAsks.get(busy[1]!) ?? 0) + 1;
      busyAsks.set(busy[1]!, asked);
      if (asked <= Number(url.searchParams.get('times') ?? 1)) {
        const status = url.searchParams.get('status') === '503' ? 503 : 429;
        res.writeHead(status, { 'content-type': TYPES['.html']!, 'retry-after': '1' });
        return res.end('<h1>Too Many Requests</h1>');
      }
      return send(200, TYPES['.html']!, productPage(busy[1]!));
    }
    const product = /^\/products\/([\w-]+)\.(html|svg)$/.exec(path);
    if (product)
      return product[2] === 'svg'
        ? send(200, TYPES['.svg']!, productImage(product[1]!))
        : send(200, TYPES['.html']!, productPage(product[1]!));
    const file = normalize(join(SITE, path));
    if (!file.startsWith(SITE)) return send(403, 'text/plain', 'forbidden');
    try {
      let body: string | Buffer = await readFile(file);
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      if (extname(file) === '.html')
        body = body
          .toString('utf8')
          .replaceAll('{{CROSS_ORIGIN}}', origins.cross)
          .replaceAll('{{ORIGIN}}', origins.main);
      send(200, type, body);
    } catch {
      send(404, 'text/html', '<h1>Not found</h1>');
    }
  };

  const listen = async () => {
    const server = http.createServer((req, res) => {
      handler(req, res).catch(() => res.destroy());
    });
    server.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return server;
  };
  const main = await listen();
  const cross = await listen();
  const port = (main.address() as AddressInfo).port;
  const crossOriginPort = (cross.address() as AddressInfo).port;
  origins.main = `http://127.0.0.1:${port}`;
  origins.cross = `http://127.0.0.1:${crossOriginPort}`;
  return {
    url: origins.main,
    crossOriginUrl: origins.cross,
    port,
    crossOriginPort,
    hits,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([main, cross].map((s) => new Promise<void>((r) => s.close(() => r()))));
    },
  };
}
