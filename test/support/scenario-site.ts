import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small notes app for scenario tests, on 127.0.0.1. `/notes` works; `/notes?broken=1` has an
 * "Add note" button that does nothing (a scenario must end stuck at the step that adds). `banner=`
 * puts a blocker over the page: `onetrust` (the OneTrust markup, cleared by rule), `cookies` (a generic cookie bar) or `privacy` (a
 * consent banner no rule knows: the model has to clear it once). `/checks` is one page holding a
 * case for every verification type.
 */
export interface ScenarioSite {
  url: string;
  port: number;
  close(): Promise<void>;
}

const BANNERS: Record<string, string> = {
  onetrust: `<div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk" style="position:fixed;inset:0;background:rgba(0,0,0,.6);z-index:10">
<div style="background:#fff;margin:120px auto;width:360px;padding:20px"><p>We use cookies to improve your experience.</p>
<button id="onetrust-accept-btn-handler" onclick="document.getElementById('onetrust-consent-sdk').remove()">Accept All Cookies</button></div></div></div>`,
  cookies: `<div class="cc-window" style="position:fixed;bottom:0;left:0;right:0;background:#eee;padding:12px;z-index:10">
<p>This site uses cookies.</p><button type="button" onclick="this.parentNode.remove()">Accept all</button></div>`,
  privacy: `<div id="wall" style="position:fixed;inset:0;background:rgba(0,0,0,.6);z-index:10">
<div style="background:#fff;margin:120px auto;width:360px;padding:20px"><p>We value your privacy. Read our terms before going on.</p>
<button type="button" onclick="document.getElementById('wall').remove()">Proceed to the site</button></div></div>`,
};

function notesPage(broken: boolean, banner: string | undefined): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Notes</title>
<style>.hidden{display:none} body{font-family:sans-serif}</style></head><body>
<main><h1>Notes</h1>
<label for="new-note">New note</label> <input id="new-note" name="note" placeholder="Write a note">
<button id="add" type="button">Add note</button>
<p id="count" role="status" class="counter empty">0 notes</p>
<ul id="notes" aria-label="Saved notes"></ul>
</main>
${banner ? (BANNERS[banner] ?? '') : ''}
<script>
const input = document.getElementById('new-note');
const list = document.getElementById('notes');
const count = document.getElementById('count');
document.getElementById('add').addEventListener('click', () => {
  if (${broken ? 'true' : 'false'}) return;
  const text = input.value.trim();
  if (!text) return;
  const li = document.createElement('li');
  li.textContent = text;
  list.appendChild(li);
  input.value = '';
  const n = list.children.length;
  count.textContent = n + (n === 1 ? ' note' : ' notes');
  count.classList.toggle('empty', n === 0);
});
</script></body></html>`;
}

const CHECKS_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Checks</title>
<style>.gone{display:none}</style></head><body><main>
<h1 id="title" class="headline big" data-section="intro">Welcome back</h1>
<label for="name">Name</label><input id="name" value="Ada">
<label for="empty">Comment</label><input id="empty" value="">
<button id="go" type="button">Go on</button>
<button id="stop" type="button" disabled>Stop now</button>
<label><input type="checkbox" id="yes" checked> Subscribed</label>
<label><input type="checkbox" id="no"> Archived</label>
<button id="secret" class="gone" type="button">Hidden action</button>
<ul id="items"><li><a href="#a">Item A</a></li><li><a href="#b">Item B</a></li><li><a href="#c">Item C</a></li></ul>
</main></body></html>`;

export async function startScenarioSite(): Promise<ScenarioSite> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://scenario.local');
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(body);
    };
    if (url.pathname === '/notes')
      return send(
        200,
        notesPage(url.searchParams.has('broken'), url.searchParams.get('banner') ?? undefined),
      );
    if (url.pathname === '/checks') return send(200, CHECKS_PAGE);
    send(404, '<!doctype html><title>Not found</title><p>Not found</p>');
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
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
