import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Two loopback sites for "honest failure" tests: `secret` (never allow-listed: every request
 * that reaches it is a guard failure, recorded in `secretHits`) and `site`, whose pages try to
 * leave for `secret` after they load, in every way a page can, plus HTTP error pages and a route
 * that holds its answer until released.
 */
export interface TrapSites {
  origin: string;
  port: number;
  secretOrigin: string;
  secretHits: string[];
  /** Paths requested on the allowed site, in order. */
  hits: string[];
  /** A loopback port with nothing listening (closed right after it was opened). */
  closedPort: number;
  close(): Promise<void>;
}

const page = (body: string, head = '') =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>trap</title>${head}</head><body>${body}</body></html>`;

function listen(
  handler: http.RequestListener,
): Promise<{ server: http.Server; port: number; sockets: Set<Socket> }> {
  const server = http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, port: (server.address() as AddressInfo).port, sockets }),
    ),
  );
}

export async function startTrapSites(): Promise<TrapSites> {
  const secretHits: string[] = [];
  const hits: string[] = [];
  const spare = await listen(() => undefined);
  const closedPort = spare.port;
  await new Promise<void>((r) => spare.server.close(() => r()));
  const secret = await listen((req, res) => {
    secretHits.push(req.url ?? '');
    res.end('SECRET');
  });
  const s = `http://127.0.0.1:${secret.port}`;
  const html = (
    res: http.ServerResponse,
    body: string,
    status = 200,
    headers: Record<string, string> = {},
  ) => {
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    });
    res.end(body);
  };
  const main = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url.pathname);
    switch (url.pathname) {
      case '/meta-refresh':
        return html(res, page('<p>moving on</p>', `<meta http-equiv="refresh" content="0;url=${s}/meta">`));
      case '/refresh-header':
        return html(res, page('<p>moving on</p>'), 200, { refresh: `0; url=${s}/header` });
      case '/js-location':
        return html(
          res,
          page(`<p>moving on</p><script>setTimeout(() => { location.href = '${s}/js'; }, 50)</script>`),
        );
      case '/links':
        return html(
          res,
          page(
            `<a href="${s}/link">Secret report</a>
             <form action="${s}/form" method="post"><input name="q" aria-label="Query"><button type="submit">Send</button></form>
             <button type="button" onclick="location.href='${s}/button'">Go away</button>
             <a href="/fine">Fine page</a> <a href="http://127.0.0.1:${closedPort}/gone">Gone page</a>`,
          ),
        );
      case '/fine':
        return html(res, page('<h1>Fine</h1><button type="button">Ok</button>'));
      case '/missing':
        return html(res, page('<h1>Not here</h1><a href="/fine">Home</a>'), 404);
      case '/broken':
        return html(res, page('<h1>Server trouble</h1><a href="/fine">Home</a>'), 500);
      case '/to-file':
        return html(
          res,
          page(
            `<a href="file:///etc/hostname">Local file</a><script>setTimeout(() => { location.href = 'file:///etc/hostname'; }, 50)</script>`,
          ),
        );
      case '/redirect-file':
        res.writeHead(302, { location: 'file:///etc/hostname' });
        return res.end();
      case '/slow-image':
        return html(
          res,
          page(`<h1>Pictures</h1><img src="/slow?ms=${url.searchParams.get('ms') ?? '2000'}" alt="late">`),
        );
      case '/slow': {
        const ms = Math.min(Number(url.searchParams.get('ms') ?? 1000), 10_000);
        return void setTimeout(() => html(res, page(`<p>slow ${ms}</p>`)), ms);
      }
      default:
        return html(res, page(`<p>page ${url.pathname}</p>`));
    }
  });
  return {
    origin: `http://127.0.0.1:${main.port}`,
    port: main.port,
    secretOrigin: s,
    secretHits,
    hits,
    closedPort,
    close: async () => {
      for (const x of [main, secret]) {
        for (const sock of x.sockets) sock.destroy();
        await new Promise<void>((r) => x.server.close(() => r()));
      }
    },
  };
}
