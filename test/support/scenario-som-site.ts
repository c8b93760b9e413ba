import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Pages for the set-of-marks and coordinate-fallback scenario tests, on 127.0.0.1.
 * `/shop`: an ordinary page (a few products, a cart counter, a search field) with a footer link far
 * below the fold. `/board`: a toolbar drawn on a <canvas> — "Save" on the left half, "Discard" on
 * the right — that only a click at the right place presses; its centre is the gap between them.
 */
export interface ScenarioSomSite {
  url: string;
  close(): Promise<void>;
}

const SHOP = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Mug shop</title>
<style>body{font-family:sans-serif;margin:0;padding:16px} .card{display:inline-block;border:1px solid #ccc;padding:12px;margin:8px;width:220px}
#extra{display:none} footer{margin-top:3000px}</style></head><body>
<header><a href="#home">Home</a> · <a href="#about">About us</a>
<label for="q">Search</label> <input id="q" placeholder="Search mugs"></header>
<main><h1>Mugs</h1>
<div class="card"><h2>Red mug</h2><p>Sturdy, 300 ml.</p><button id="add-red" type="button">Add red mug</button></div>
<div class="card"><h2>Blue mug</h2><p>Light, 250 ml.</p><button id="add-blue" type="button">Add blue mug</button></div>
<p id="cart" role="status">Cart: 0 items</p>
<button id="more" type="button">Show more</button>
<div id="extra"><p id="extra-text">Free shipping on two mugs</p></div>
</main>
<footer><a href="#terms">Terms of sale</a></footer>
<script>
let n = 0;
const cart = document.getElementById('cart');
for (const id of ['add-red', 'add-blue'])
  document.getElementById(id).addEventListener('click', () => { n++; cart.textContent = 'Cart: ' + n + (n === 1 ? ' item' : ' items'); });
document.getElementById('more').addEventListener('click', () => { document.getElementById('extra').style.display = 'block'; });
</script></body></html>`;

/** Canvas at (40, 120), 600 × 120: Save drawn at x 20–200, Discard at x 400–580 (canvas pixels). */
const BOARD = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Drawing board</title>
<style>body{margin:0;font-family:sans-serif} h1{position:absolute;left:40px;top:20px;margin:0}
canvas{position:absolute;left:40px;top:120px} #status{position:absolute;left:40px;top:300px}</style></head><body>
<h1>Drawing board</h1>
<canvas id="bar" width="600" height="120" aria-label="Drawing toolbar"></canvas>
<p id="status" role="status">Nothing chosen</p>
<script>
const c = document.getElementById('bar');
const g = c.getContext('2d');
g.fillStyle = '#f4f4f4'; g.fillRect(0, 0, 600, 120);
g.fillStyle = '#2e7d32'; g.fillRect(20, 30, 180, 60);
g.fillStyle = '#c62828'; g.fillRect(400, 30, 180, 60);
g.fillStyle = '#fff'; g.font = 'bold 24px sans-serif'; g.fillText('Save', 80, 68); g.fillText('Discard', 445, 68);
c.addEventListener('click', (e) => {
  const r = c.getBoundingClientRect();
  const x = e.clientX - r.left, y = e.clientY - r.top;
  if (y < 30 || y > 90) return;
  if (x >= 20 && x <= 200) document.getElementById('status').textContent = 'Saved';
  else if (x >= 400 && x <= 580) document.getElementById('status').textContent = 'Discarded';
});
</script></body></html>`;

export async function startScenarioSomSite(): Promise<ScenarioSomSite> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://som.local').pathname;
    const body = path === '/shop' ? SHOP : path === '/board' ? BOARD : undefined;
    res.writeHead(body ? 200 : 404, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    res.end(body ?? '<!doctype html><title>Not found</title><p>Not found</p>');
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
