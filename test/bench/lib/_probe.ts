import { createServer } from 'node:http';
import { newJobContext, newPage } from '../../../lib/browser/context.ts';
import { chromiumArgs, embeddedExecutablePath, launchBrowser } from '../../../lib/browser/launch.ts';
import { snapshot } from '../../../lib/perception/snapshot.ts';
import {
  missingFromOurs,
  missingFromPeer,
  ourCompleteness,
  parseStagehandTree,
  stagehandInteractive,
  targetsFound,
} from './compare.ts';
import { waitQuiet } from './quiet.ts';
import { startStagehand } from './stagehand.ts';
import { tokens } from './tokens.ts';

const html = `<html><body><h1>Hi</h1><form><label>Email <input name=e></label><button>Sign in</button><a href="/x">Link</a><select><option>A</option><option>B</option></select>
<div role=button tabindex=0>Fake btn</div><span onclick="1">clicky span</span><div style="cursor:pointer" id=cp>Pointer div</div>
<details><summary>More</summary>x</details><input type=checkbox id=c><label for=c>Agree</label><textarea placeholder="Msg"></textarea>
<ul role=listbox><li role=option>Opt1</li></ul><iframe srcdoc="<button>In frame</button>"></iframe></form>
<script>document.getElementById('cp').addEventListener('click',()=>{})</script></body></html>`;
const srv = createServer((_q, r) => {
  r.setHeader('content-type', 'text/html');
  r.end(html);
});
await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(srv.address() as { port: number }).port}/`;
const executablePath = await embeddedExecutablePath();
const sh = await startStagehand({
  executablePath,
  args: [...chromiumArgs().filter((a) => !a.startsWith('--headless')), '--no-sandbox', '--disable-gpu'],
  viewport: { width: 1280, height: 800 },
  version: 'x',
});
const tab = await sh.open(url);
console.log('settle', await tab.settle());
const s = await tab.snapshot();
console.log(s.text);
const items = parseStagehandTree(s.text);
const inter = stagehandInteractive(items);
console.log(inter.map((i) => `${i.role}:${i.name}`));
const browser = await launchBrowser();
const ctx = await newJobContext(browser);
const page = await newPage(ctx);
await page.goto(url);
console.log('settle ours', await waitQuiet((e) => page.evaluate(e)));
const snap = await snapshot(page);
console.log(snap.tree);
console.log(ourCompleteness(snap), missingFromOurs(inter, snap), missingFromPeer(snap, s.text));
console.log(
  targetsFound(snap.tree, [
    { role: 'button', name: 'sign in' },
    { role: 'x', name: 'nope' },
  ]),
);
console.log(tokens(snap.tree), tokens(s.text));
await tab.close();
await sh.close();
await browser.close();
srv.close();
