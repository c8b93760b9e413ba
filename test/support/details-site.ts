/**
 * A generated product site on 127.0.0.1 for run memory (the e2e test and `bench:memory`): `/p/<n>`
 * pages, each with four tabs (Overview, Reviews, Shipping, Details). The price shows only after a
 * click on "Details", which is last and looks no more promising than the others; `/list/<n>` links
 * the first n of them (a listing for discovery). The scripted model
 * below explores the tabs in order unless its prompt carries a hint naming the tab to click.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RecordedRequest, ScriptedReply } from './llm-server.ts';

export const TABS = ['Overview', 'Reviews', 'Shipping', 'Details'] as const;
export const priceOf = (n: number): number => 10 + ((n * 7) % 90);

function page(n: number): string {
  const panels: Record<string, string> = {
    Overview: `<p>Item ${n} is a well made thing for everyday use.</p>`,
    Reviews: '<p>Customers liked it.</p>',
    Shipping: '<p>Ships in two days.</p>',
    Details: `<p>Price: $${priceOf(n)}</p>`,
  };
  return `<!doctype html><html><head><title>Item ${n}</title></head><body>
<h1>Item ${n}</h1>
<div role="tablist">${TABS.map((t) => `<button role="tab" data-tab="${t}">${t}</button>`).join('')}</div>
<section id="panel"><p>Choose a tab.</p></section>
<script>
const panels = ${JSON.stringify(panels)};
for (const b of document.querySelectorAll('[role=tab]'))
  b.addEventListener('click', () => { document.getElementById('panel').innerHTML = panels[b.dataset.tab]; });
</script></body></html>`;
}

export interface DetailsSite {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startDetailsSite(): Promise<DetailsSite> {
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const list = /^\/list\/(\d+)$/.exec(req.url ?? '');
    if (list) {
      const links = Array.from(
        { length: Number(list[1]) },
        (_, i) => `<li><a href="/p/${i + 1}">Item ${i + 1}</a></li>`,
      );
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(`<!doctype html><title>All items</title><h1>All items</h1><ul>${links.join('')}</ul>`);
      return;
    }
    const m = /^\/p\/(\d+)$/.exec(req.url ?? '');
    if (!m) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(Number(m[1])));
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

const tabId = (text: string, name: string) => new RegExp(`\\[(\\d+)\\] tab: ${name}\\b`).exec(text)?.[1];

/**
 * The model a user would hope for: it reports the price once the page shows it; else it clicks the
 * tab a hint from earlier samples names; else it tries the tabs in order, skipping those it already
 * clicked (its recent steps say which). Other calls (a history summary, run memory) get small answers.
 */
export function detailsModel(req: RecordedRequest): ScriptedReply {
  if (req.schemaName === 'run_memory') return { json: { lines: [] } };
  if (req.schemaName !== 'next_actions') return { json: { summary: 'looked at tabs' } };
  const page = req.text.slice(req.text.lastIndexOf('Current page:'));
  const price = /Price: \$(\d+)/.exec(page)?.[1];
  const reply = (actions: unknown[], goal: string) => ({
    json: { evaluation_previous_step: 'seen', memory_update: '', next_goal: goal, actions },
  });
  if (price) return reply([{ tool: 'done', data: { price: Number(price) } }], 'report the price');
  const hinted = /Hints from earlier samples[^\n]*\n(?:- [^\n]*\n?)*/.exec(req.text)?.[0];
  const hintedTab = hinted ? /click tab "([^"]+)"/.exec(hinted)?.[1] : undefined;
  const hintedId = hintedTab ? tabId(page, hintedTab) : undefined;
  if (hintedId && !req.text.includes(`click tab "${hintedTab}" → ok`))
    return reply([{ tool: 'click', id: Number(hintedId) }], `open ${hintedTab} as earlier samples did`);
  const next = TABS.find((t) => !req.text.includes(`tab "${t}" → ok`));
  const id = next ? tabId(page, next) : undefined;
  if (!id) return reply([{ tool: 'fail', reason: 'no tab shows the price' }], 'give up');
  return reply([{ tool: 'click', id: Number(id) }], `look under ${next}`);
}
