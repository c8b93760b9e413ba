/**
 * A small shop on 127.0.0.1 for the static-read tests: `/p/<id>` serves a product page either with
 * its data in the served HTML (`ssr`) or filled in by script after load (`script`, the HTML holds
 * empty slots), and with `?busy=N` answers its first N requests 429 (Retry-After: 1); a gzipped page and a gzip bomb; plus the odd answers a static fetch must not take as a page (a redirect, JSON, a
 * 404, a page over the size limit, a server that never answers). Every request is counted.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';

export type ShopMode = 'ssr' | 'script';

export interface StaticShop {
  url: string;
  port: number;
  mode: ShopMode;
  setMode(m: ShopMode): void;
  /** Paths requested, in order. */
  hits: string[];
  /** Headers of the last request. */
  lastHeaders?: http.IncomingHttpHeaders;
  close(): Promise<void>;
}

export const shopProduct = (id: number) => ({
  name: `Walnut Chair ${id}`,
  price: 40 + id + 0.5,
  sku: `WC-${1000 + id}`,
  inStock: id % 3 !== 0,
});

const PAGE = (body: string, script = '') => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Shop</title>
<style>.badge{text-transform:none}</style></head>
<body><header><a href="/">Shop</a></header>
<main><article class="product">${body}</article></main>${script}</body></html>`;

function productPage(id: number, mode: ShopMode): string {
  const p = shopProduct(id);
  const stock = p.inStock ? 'In stock' : 'Out of stock';
  if (mode === 'ssr')
    return PAGE(`<h1 class="name">${p.name}</h1>
<p class="price">$${p.price.toFixed(2)}</p>
<p class="sku-line">SKU: <span class="sku">${p.sku}</span></p>
<p class="stock">${stock}</p>
<table class="specs"><tr><td>Wood</td><td class="wood">Walnut</td></tr></table>`);
  // The same markup with empty slots, filled from data after load (a client-rendered page).
  return PAGE(
    `<h1 class="name"></h1>
<p class="price"></p>
<p class="sku-line">SKU: <span class="sku"></span></p>
<p class="stock"></p>
<table class="specs"><tr><td>Wood</td><td class="wood"></td></tr></table>`,
    `<script>
const d = ${JSON.stringify({ ...p, price: `$${p.price.toFixed(2)}`, stock })};
addEventListener('DOMContentLoaded', () => setTimeout(() => {
  document.querySelector('.name').textContent = d.name;
  document.querySelector('.price').textContent = d.price;
  document.querySelector('.sku').textContent = d.sku;
  document.querySelector('.stock').textContent = d.stock;
  document.querySelector('.wood').textContent = 'Walnut';
}, 20));
</script>`,
  );
}

export async function startStaticShop(): Promise<StaticShop> {
  const sockets = new Set<Socket>();
  const shop = {
    mode: 'ssr' as ShopMode,
    hits: [] as string[],
    lastHeaders: undefined as http.IncomingHttpHeaders | undefined,
  };
  const asked = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop.local');
    shop.hits.push(url.pathname + url.search);
    shop.lastHeaders = req.headers;
    const html = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(body);
    };
    const m = /^\/p\/(\d+)$/.exec(url.pathname);
    const busy = Number(url.searchParams.get('busy') ?? 0);
    if (m && busy > 0) {
      const key = url.pathname + url.search;
      const seen = (asked.get(key) ?? 0) + 1;
      asked.set(key, seen);
      if (seen <= busy) {
        res.writeHead(429, { 'content-type': 'text/html', 'retry-after': '1' });
        return res.end('<h1>Too many requests</h1>');
      }
    }
    if (m) return html(200, productPage(Number(m[1]), shop.mode));
    if (url.pathname === '/redirect') {
      res.writeHead(302, { location: url.searchParams.get('to') ?? '/' });
      return res.end();
    }
    if (url.pathname === '/json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end('{"name":"Walnut Chair 1"}');
    }
    if (url.pathname === '/gz') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
      return res.end(gzipSync(productPage(3, 'ssr')));
    }
    if (url.pathname === '/bomb') {
      // A few kilobytes that unpack to 8 MB.
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
      return res.end(gzipSync(Buffer.alloc(8 * 1024 * 1024, 32)));
    }
    if (url.pathname === '/big') return html(200, PAGE(`<p>${'x'.repeat(300_000)}</p>`));
    if (url.pathname === '/slow') return; // never answers
    html(404, PAGE('<h1>Not found</h1>'));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    get mode() {
      return shop.mode;
    },
    setMode(m: ShopMode) {
      shop.mode = m;
    },
    hits: shop.hits,
    get lastHeaders() {
      return shop.lastHeaders;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
