/**
 * A generated shop catalogue on 127.0.0.1 for workflow tests and `bench:workflows`: list pages
 * (`/catalogue?page=N`, 20 products each), detail pages (`/product/<id>`) with a buy form, and the
 * cart page the form leads to (`/cart?id=…&qty=…&gift=yes`). `setTemplate('v2')` switches every page
 * to the redesign (test/fixtures/catalogue/templates.ts lists its changes); `trap` puts a
 * look-alike "Add to cart" before the real one. Every cart request is recorded, so a test can prove
 * which product (if any) a replay added.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { product } from '../fixtures/catalogue/products.ts';
import { cartPage, detailPage, listPage, type Template } from '../fixtures/catalogue/templates.ts';

export type { Product } from '../fixtures/catalogue/products.ts';
export { price, product, products } from '../fixtures/catalogue/products.ts';
export type { Template } from '../fixtures/catalogue/templates.ts';
export { PAGE_SIZE } from '../fixtures/catalogue/templates.ts';

export interface CartRequest {
  id: number;
  qty: number;
  gift: boolean;
  template: Template;
}

export interface CatalogueSite {
  /** `http://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** How many products the catalogue holds. */
  total: number;
  template: Template;
  setTemplate(t: Template): void;
  /** Every /cart request with an id, in order. */
  carts: CartRequest[];
  /** Every path requested, in order. */
  hits: string[];
  close(): Promise<void>;
}

export async function startCatalogueSite(
  opts: { products?: number; template?: Template } = {},
): Promise<CatalogueSite> {
  const total = opts.products ?? 60;
  const carts: CartRequest[] = [];
  const hits: string[] = [];
  const sockets = new Set<Socket>();
  const site = { template: opts.template ?? ('v1' as Template) };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://catalogue.local');
    hits.push(url.pathname + url.search);
    // The v2 consent banner shows until it was answered (a cookie), as on real sites.
    const banner = !/(?:^|;\s*)consent=/.test(req.headers.cookie ?? '');
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(body);
    };
    const t = site.template;
    if (url.pathname === '/' || url.pathname === '/catalogue') {
      const page = Math.max(1, Number(url.searchParams.get('page') ?? 1) || 1);
      return send(200, listPage(t, total, page, banner));
    }
    const detail = /^\/product\/(\d+)$/.exec(url.pathname);
    if (detail) {
      const id = Number(detail[1]);
      if (id < 1 || id > total) return send(404, '<h1>Not found</h1>');
      return send(200, detailPage(t, id, total, banner));
    }
    if (url.pathname === '/cart') {
      const id = Number(url.searchParams.get('id') ?? 0);
      if (!id || id > total) return send(200, '<main><h1>Your cart</h1><p>Your cart is empty.</p></main>');
      const qty = Number(url.searchParams.get('qty') ?? url.searchParams.get('amount') ?? 1) || 1;
      const gift = url.searchParams.get('gift') === 'yes';
      carts.push({ id, qty, gift, template: t });
      return send(200, cartPage(t, product(id).id, qty, gift, banner));
    }
    send(404, '<h1>Not found</h1>');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const port = await new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    total,
    get template() {
      return site.template;
    },
    setTemplate(t: Template) {
      site.template = t;
    },
    carts,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
