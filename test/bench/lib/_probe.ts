import { createServer } from 'node:http';
import { Stagehand } from '@browserbasehq/stagehand';
import { chromiumArgs, embeddedExecutablePath } from '../../../lib/browser/launch.ts';

const html = `<html><body><h1>Hi</h1><form><label>Email <input name=e></label><button>Sign in</button><a href="/x">Link</a><select><option>A</option><option>B</option></select></form></body></html>`;
const srv = createServer((_q, r) => {
  r.setHeader('content-type', 'text/html');
  r.end(html);
});
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const port = (srv.address() as { port: number }).port;
const t0 = performance.now();
const executablePath = await embeddedExecutablePath();
const args = chromiumArgs().filter((a) => !a.startsWith('--headless'));
const sh = new Stagehand({
  env: 'LOCAL',
  verbose: 0,
  disablePino: true,
  logger: () => {},
  localBrowserLaunchOptions: {
    executablePath,
    headless: true,
    args: [...args, '--disable-gpu', '--disable-dev-shm-usage'],
    viewport: { width: 1280, height: 800 },
  },
});
await sh.init();
console.log('init ms', performance.now() - t0);
const page = await sh.context.newPage(`http://127.0.0.1:${port}/`);
await page.waitForLoadState('load');
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  const s = await page.snapshot();
  console.log('snap ms', performance.now() - t);
  if (i === 0) {
    console.log(s.formattedTree);
    console.log(Object.keys(s.xpathMap).length, s.xpathMap, s.urlMap);
  }
}
console.log(sh.context.pages().length);
await page.close();
await sh.close();
srv.close();
