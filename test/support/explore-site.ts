import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A small app to explore, on 127.0.0.1: a home page linking to Notes (add a note), Settings (turn
 * dark mode on and save) and a Members area behind a login (`/members`: e-mail + password; the
 * test account is ada@example.com / hunter2, which leads to `/members/home`); `/contact` has a
 * reCAPTCHA box.
 */
export interface ExploreSite {
  url: string;
  port: number;
  close(): Promise<void>;
}

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`;

const PAGES: Record<string, string> = {
  '/': page(
    'Tidy',
    `<main><h1>Tidy</h1><nav><a href="/notes">Notes</a> <a href="/settings">Settings</a> <a href="/members">Members area</a></nav></main>`,
  ),
  '/notes': page(
    'Notes',
    `<main><h1>Notes</h1><label for="n">New note</label> <input id="n">
<button id="add" type="button">Add note</button><ul id="notes" aria-label="Saved notes"></ul></main>
<script>document.getElementById('add').onclick = () => { const v = document.getElementById('n').value.trim();
if (!v) return; const li = document.createElement('li'); li.textContent = v; document.getElementById('notes').appendChild(li);
document.getElementById('n').value = ''; };</script>`,
  ),
  '/settings': page(
    'Settings',
    `<main><h1>Settings</h1><label><input type="checkbox" id="dark"> Dark mode</label>
<button id="save" type="button">Save settings</button><p id="saved" role="status"></p></main>
<script>document.getElementById('save').onclick = () => { document.getElementById('saved').textContent =
document.getElementById('dark').checked ? 'Saved: dark mode on' : 'Saved'; };</script>`,
  ),
  '/members': page(
    'Sign in',
    `<main><h1>Members area</h1><form id="f"><label for="e">E-mail</label> <input id="e" type="email">
<label for="p">Password</label> <input id="p" type="password"><button type="submit">Sign in</button>
<p id="err" role="alert"></p></form></main>
<script>document.getElementById('f').onsubmit = (ev) => { ev.preventDefault();
if (document.getElementById('e').value === 'ada@example.com' && document.getElementById('p').value === 'hunter2') location.href = '/members/home';
else document.getElementById('err').textContent = 'Wrong e-mail or password'; };</script>`,
  ),
  '/contact': page(
    'Contact',
    `<main><h1>Contact us</h1><textarea aria-label="Message"></textarea>
<div class="g-recaptcha" data-sitekey="x" style="width:300px;height:74px;border:1px solid #ccc">I'm not a robot</div>
<button type="button">Send</button></main>`,
  ),
  '/members/home': page(
    'Members',
    `<main><h1>Welcome, member</h1><p id="news">Member news: the spring sale starts Monday.</p></main>`,
  ),
};

export async function startExploreSite(): Promise<ExploreSite> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const html = PAGES[path];
    res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html ?? page('Not found', '<h1>Not found</h1>'));
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
