/**
 * The raw-CDP page driver against the Playwright one: the same pages read and the same ops run
 * through each give the same snapshot ids, the same actions and the same data, with no model and
 * with the scripted one. The CDP side talks to a Chromium we did not launch through Playwright,
 * over a WebSocket only (the `ws` class stands in for Node 22's global WebSocket).
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { CdpConnection } from '../../lib/browser/cdp-session.ts';
import { newJobContext, newPage } from '../../lib/browser/context.ts';
import { chromiumArgs } from '../../lib/browser/launch.ts';
import type { PageDriver } from '../../lib/browser/page-driver.ts';
import { playwrightDriver } from '../../lib/browser/playwright-driver.ts';
import { actOn, type CdpPage, connectCdpDriver, extractOn, observeOn } from '../../lib/ops/portable.ts';
import type { ActResult } from '../../lib/ops/types.ts';
import { countByRole, readCandidates, resolveCandidate } from '../../lib/perception/candidates.ts';
import { readExtraction, suggestSelectors } from '../../lib/perception/extractor-dom.ts';
import { findElementById } from '../../lib/perception/locate.ts';
import { findObstacle } from '../../lib/perception/obstacles.ts';
import { recordAfter, recordBefore } from '../../lib/perception/recording.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { FIXTURE_PAGES } from '../fixtures/manifest.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { client, idInPrompt } from '../support/ops-env.ts';
import { type RemoteChrome, startRemoteChrome } from '../support/remote-chrome.ts';

let site: FixtureServer;
let llm: ScriptedModel;
let browser: Browser;
let remote: RemoteChrome;
let context: BrowserContext;
let page: Page;
let cdp: CdpPage;

const pw = () => playwrightDriver(page);
const WS = WebSocket as unknown as new (url: string) => globalThis.WebSocket;

beforeAll(async () => {
  [site, llm, browser, remote] = await Promise.all([
    startFixtureServer(),
    startScriptedModel(),
    startBrowser(),
    startRemoteChrome(),
  ]);
  context = await newJobContext(browser);
  page = await newPage(context);
  cdp = await connectCdpDriver(remote.wsUrl, { WebSocket: WS });
});

afterAll(async () => {
  await cdp?.close();
  await context?.close();
  await browser?.close();
  await remote?.close();
  await llm?.close();
  await site?.close();
});

/** Both tabs on the same page, loaded. */
async function openBoth(path: string): Promise<void> {
  await Promise.all([
    page.goto(site.url + path, { waitUntil: 'load' }),
    cdp.driver.goto(site.url + path, { timeoutMs: 30_000, waitUntil: 'load' }),
  ]);
}

/** What a snapshot promises a caller: the text, and each id's role, name, locator and frame. */
const idsOf = (s: Snapshot) =>
  s.elements.map((e) => ({ id: e.id, role: e.role, name: e.name, xpath: e.locator.xpath, frame: e.frame }));

/** An act result without what differs run to run (time, the model's token counts). */
const actShape = (r: ActResult) => ({
  success: r.success,
  message: r.message,
  actionDescription: r.actionDescription,
  actions: r.actions,
  resolvedBy: r.resolvedBy,
  url: r.url,
});

const valueIn = (driver: PageDriver, selector: string) =>
  driver.mainFrame().call((s: string) => {
    const el = document.querySelector(s) as HTMLInputElement | null;
    return el ? (el.type === 'checkbox' ? String(el.checked) : (el.value ?? el.textContent)) : null;
  }, selector);

describe('raw CDP driver vs Playwright driver', () => {
  it('reads every fixture page the same: same text, same ids, same locators, frames included', async () => {
    for (const fixture of FIXTURE_PAGES) {
      await openBoth(fixture.path);
      const [viaPlaywright, viaCdp] = await Promise.all([snapshot(page), snapshot(cdp.driver)]);
      expect(viaCdp.tree, fixture.path).toBe(viaPlaywright.tree);
      expect(idsOf(viaCdp), fixture.path).toEqual(idsOf(viaPlaywright));
      expect(viaCdp.frames.map((f) => f.xpath)).toEqual(viaPlaywright.frames.map((f) => f.xpath));
      expect(viaCdp.url).toBe(viaPlaywright.url);
    }
  }, 120_000);

  it('acts, observes and extracts the same with no model (matcher tier)', async () => {
    await openBoth('/login.html');
    const steps = [
      'type "ada@example.com" into the Email field',
      'check Remember me',
      'click the Sign in button',
    ];
    for (const step of steps) {
      const a = await actOn(pw(), step);
      const b = await actOn(cdp.driver, step);
      expect(a.resolvedBy).toBe('matcher');
      expect(actShape(b), step).toEqual(actShape(a));
    }
    expect(await valueIn(cdp.driver, '#status')).toBe('Signed in as ada@example.com');
    expect(await valueIn(cdp.driver, 'input[name=remember]')).toBe('true');
    expect(await page.locator('#status').textContent()).toBe('Signed in as ada@example.com');

    const [obsA, obsB] = [
      await observeOn(pw(), 'the Sign in button'),
      await observeOn(cdp.driver, 'the Sign in button'),
    ];
    expect(obsB.elements).toEqual(obsA.elements);
    expect(obsB.elements.map((e) => e.name)).toEqual(['Sign in']);
    const [allA, allB] = [await observeOn(pw()), await observeOn(cdp.driver)];
    expect(allB.elements).toEqual(allA.elements);

    const [textA, textB] = [await extractOn(pw()), await extractOn(cdp.driver)];
    expect(textB.data).toEqual(textA.data);
    expect(JSON.stringify(textB.data)).toContain('Signed in as ada@example.com');

    // A link that loads a new page: the act returns once the new document is there, on both.
    const [goA, goB] = [
      await actOn(pw(), 'click the Create an account link'),
      await actOn(cdp.driver, 'click the Create an account link'),
    ];
    expect(actShape(goB)).toEqual(actShape(goA));
    expect(goB.url).toBe(`${site.url}/signup.html`);
    expect((await observeOn(cdp.driver, 'the Work email field')).elements.map((e) => e.name)).toEqual([
      'Work email',
    ]);
  });

  it('acts and extracts the same with the scripted model, inside a cross-origin iframe too', async () => {
    const llmClient = client(llm, 'openai');
    await openBoth('/iframes.html');
    llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'button', 'Cross save'),
        method: 'click',
        arguments: [],
        twoStep: false,
        reason: 'the save button of the partner note',
      },
    }));
    const a = await actOn(pw(), 'save the partner note please', { llm: llmClient });
    const b = await actOn(cdp.driver, 'save the partner note please', { llm: llmClient });
    expect(a.success).toBe(true);
    expect(a.resolvedBy).toBe('llm');
    expect(actShape(b)).toEqual(actShape(a));
    const saved = (driver: PageDriver) =>
      Promise.all(
        driver
          .frames()
          .filter((f) => f.url().includes('cross-child'))
          .map((f) => f.evaluate<string>("document.getElementById('saved').textContent")),
      );
    expect(await saved(cdp.driver)).toEqual(['Saved: ']);

    await openBoth('/products.html');
    llm.setHandler((r) => ({
      json: {
        data: {
          products: [
            { name: 'Trail Runner Shoes', url: idInPrompt(r.text, 'link', 'Trail Runner Shoes') },
            { name: 'First Aid Kit', url: idInPrompt(r.text, 'link', 'First Aid Kit') },
          ],
        },
        done: true,
      },
    }));
    const schema = {
      type: 'object',
      properties: {
        products: {
          type: 'array',
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, url: { type: 'string', format: 'uri' } },
            required: ['name', 'url'],
          },
        },
      },
      required: ['products'],
    } as const;
    const [x, y] = [
      await extractOn(pw(), 'every product with its link', schema, { llm: llmClient }),
      await extractOn(cdp.driver, 'every product with its link', schema, { llm: llmClient }),
    ];
    expect(y.data).toEqual(x.data);
    expect(y.data).toEqual({
      products: [
        { name: 'Trail Runner Shoes', url: `${site.url}/products/trail-runner.html` },
        { name: 'First Aid Kit', url: `${site.url}/products/first-aid.html` },
      ],
    });
  });

  it('follows same-document moves (pushState) and goes back over them as Playwright does', async () => {
    await openBoth('/login.html');
    for (const d of [pw(), cdp.driver])
      await d.mainFrame().evaluate("history.pushState({}, '', '/login.html?step=2')");
    expect(cdp.driver.url()).toBe(`${site.url}/login.html?step=2`);
    expect(cdp.driver.url()).toBe(page.url());
    const [a, b] = [await actOn(pw(), { method: 'back' }), await actOn(cdp.driver, { method: 'back' })];
    expect(actShape(b)).toEqual(actShape(a));
    expect(b.url).toBe(`${site.url}/login.html`);
    expect(b.message).toBe('went back');
  });

  it('puts every request to the guard hook first: a refused page fails as blocked, nothing of it loads', async () => {
    const seen: string[] = [];
    const off = await cdp.driver.interceptRequests((r) => {
      seen.push(`${r.resourceType} ${new URL(r.url).pathname}`);
      return r.url.includes('/signup.html') ? { allow: false, reason: 'not on the list' } : { allow: true };
    });
    try {
      await cdp.driver.goto(`${site.url}/login.html`, { timeoutMs: 30_000, waitUntil: 'load' });
      expect(seen).toEqual(expect.arrayContaining(['Document /login.html', 'Stylesheet /style.css']));
      const hits = site.hits.length;
      const res = await actOn(cdp.driver, { method: 'goto', args: [`${site.url}/signup.html`] });
      expect(res.success).toBe(false);
      expect(res.error?.kind).toBe('blocked');
      expect(site.hits.slice(hits)).not.toContain('/signup.html');
      // The browser shows its own error page in its place (as under Playwright), never the refused one.
      expect(cdp.driver.url()).not.toContain('/signup.html');
      // A worker's requests are the page's too.
      await cdp.driver.goto(`${site.url}/login.html`, { timeoutMs: 30_000 });
      const fromWorker = await cdp.driver.mainFrame().call(
        (url: string) =>
          new Promise<string>((resolve) => {
            const src = `fetch(${JSON.stringify(url)}).then((r) => postMessage('got ' + r.status), () => postMessage('refused'))`;
            const worker = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
            worker.onmessage = (e) => resolve(String(e.data));
          }),
        `${site.url}/signup.html?from=worker`,
      );
      expect(fromWorker).toBe('refused');
      expect(site.hits).not.toContain('/signup.html?from=worker');
    } finally {
      await off();
    }
  });

  it("attaches to the browser's existing page when asked, and leaves it open on close", async () => {
    const first = await connectCdpDriver(remote.wsUrl, { WebSocket: WS, attach: 'existing' });
    await first.driver.goto(`${site.url}/dashboard.html`, { timeoutMs: 30_000 });
    await first.close();
    const again = await connectCdpDriver(remote.wsUrl, { WebSocket: WS, attach: 'existing' });
    try {
      expect(again.driver.url()).toBe(`${site.url}/dashboard.html`);
      const read = await observeOn(again.driver);
      expect(read.url).toBe(`${site.url}/dashboard.html`);
    } finally {
      await again.close();
    }
  });

  it('reads and acts inside an out-of-process iframe (site isolation on) as Playwright does in-process', async () => {
    // Only the remote browser isolates sites: the cross-origin frame lives in a process (and a CDP
    // session) of its own there, and stays in-process in the suite's Chromium.
    const isolationOff = chromiumArgs().filter((a) => /site-isolation|site-per-process/.test(a));
    const isolated = await startRemoteChrome(isolationOff, ['--site-per-process']);
    const tab = await connectCdpDriver(isolated.wsUrl, { WebSocket: WS });
    try {
      // localhost and 127.0.0.1 are different sites: the partner-notes frame is out of process.
      const url = `${site.url.replace('127.0.0.1', 'localhost')}/iframes.html`;
      await Promise.all([
        page.goto(url, { waitUntil: 'load' }),
        tab.driver.goto(url, { timeoutMs: 30_000, waitUntil: 'load' }),
      ]);
      const probe = await CdpConnection.open(isolated.wsUrl, WS);
      const { targetInfos } = await probe.send<{ targetInfos: { type: string; url: string }[] }>(
        'Target.getTargets',
      );
      probe.close();
      expect(targetInfos.filter((t) => t.type === 'iframe').map((t) => new URL(t.url).pathname)).toEqual([
        '/cross-child.html',
      ]);
      const [viaPlaywright, viaCdp] = [await snapshot(page), await snapshot(tab.driver)];
      expect(viaCdp.tree).toBe(viaPlaywright.tree);
      expect(idsOf(viaCdp)).toEqual(idsOf(viaPlaywright));
      for (const step of ['type "hello" into the Cross-origin note', 'click the Cross save button']) {
        const a = await actOn(pw(), step);
        const b = await actOn(tab.driver, step);
        expect(b.success, step).toBe(true);
        expect(actShape(b), step).toEqual(actShape(a));
      }
      const cross = tab.driver.frames().find((f) => f.url().includes('cross-child'))!;
      expect(await cross.evaluate("document.getElementById('saved').textContent")).toBe('Saved: hello');
    } finally {
      await tab.close();
      await isolated.close();
    }
  });
});

describe('perception on the port: the same answers through raw CDP as through Playwright', () => {
  const both = () => [pw(), cdp.driver] as const;

  it('reads locator candidates for an element and finds each again, and records an action', async () => {
    await openBoth('/login.html');
    const results = [];
    for (const d of both()) {
      const snap = await snapshot(d);
      const email = snap.elements.find((e) => e.role === 'textbox' && e.name === 'Email')!;
      const button = snap.elements.find((e) => e.role === 'button' && e.name === 'Sign in')!;
      const candidates = [await readCandidates(d, email.locator), await readCandidates(d, button.locator)];
      const hits = [];
      for (const c of candidates.flat()) hits.push(await resolveCandidate(d, c));
      const twins = await countByRole(d, 'button', 'Sign in');
      const pending = await recordBefore(d, email.locator);
      await d.mainFrame().call(() => {
        const el = document.querySelector('input[type=email]') as HTMLInputElement;
        el.value = 'ada@example.com';
      });
      const recorded = await recordAfter(d, pending, email.locator, d.url());
      results.push({
        candidates,
        hits,
        twins,
        recorded,
        xpaths: [email.locator.xpath, button.locator.xpath],
      });
    }
    const [a, b] = results;
    expect(b).toEqual(a);
    // Stable attributes first, the position last; every candidate finds that one element again.
    expect(a!.candidates[0]!.map((c) => c.kind)).toContain('css');
    expect(a!.candidates[0]!.at(-1)).toEqual({ kind: 'xpath', value: a!.xpaths[0] });
    expect(a!.hits.every((h) => h.count === 1)).toBe(true);
    expect(a!.hits.map((h) => h.locator?.xpath)).toEqual(
      a!.candidates.flatMap((cs, i) => cs.map(() => a!.xpaths[i])),
    );
    expect(a!.twins).toBe(1);
    expect(a!.recorded.after).toMatchObject({ navigated: false, value: 'ada@example.com' });
  });

  it('finds and replays a recorded extractor over a list the same way', async () => {
    await openBoth('/products.html');
    const name = (value: string) => [{ key: 'name', kind: 'string' as const, value }];
    const sought = { keys: ['name'], items: [name('Trail Runner Shoes'), name('Canvas Backpack')] };
    const [sa, sb] = [await suggestSelectors(pw(), sought), await suggestSelectors(cdp.driver, sought)];
    expect(sb).toEqual(sa);
    expect(sa.ok).toBe(true);
    if (!sa.ok) return;
    const spec = { item: sa.item!, fields: sa.fields };
    const [ra, rb] = [await readExtraction(pw(), spec), await readExtraction(cdp.driver, spec)];
    expect(rb).toEqual(ra);
    expect('items' in ra && ra.items.map((r) => r.name)).toEqual([
      'Trail Runner Shoes',
      'Canvas Backpack',
      'Steel Water Bottle',
      'Merino Wool Socks',
      'Rain Jacket',
      'Camping Lantern',
      'Hiking Poles',
      'Sun Hat',
      'Trail Map Set',
      'Compact Stove',
      'Sleeping Pad',
      'First Aid Kit',
    ]);
  });

  it('finds what covers an element and the control that refuses consent', async () => {
    await openBoth('/modal.html');
    const readMore = async (d: PageDriver) =>
      (await snapshot(d)).elements.find((e) => e.role === 'link' && e.name === 'Read more')!.locator.xpath;
    const covered = [];
    for (const d of both()) covered.push(await findObstacle(d, await readMore(d)));
    expect(covered[1]).toEqual(covered[0]);
    expect(covered[0]?.coveredBy).toMatch(/^div/);
    // The consent banner now covers the whole page: its "Reject all" is the way out.
    const banners = [];
    for (const d of both()) {
      const xpath = await readMore(d);
      await d.mainFrame().evaluate("document.getElementById('cookies').style.inset = '0'");
      await d.mainFrame().evaluate("document.getElementById('cookies').style.zIndex = '9'");
      banners.push(await findObstacle(d, xpath));
    }
    expect(banners[1]).toEqual(banners[0]);
    expect(banners[0]?.dismiss?.name).toBe('Reject all');
    expect(banners[0]?.coveredBy).toContain('We use cookies');
  });

  it('a field shown 300 ms late is filled and a select enabled late is chosen; a field never shown fails', async () => {
    await openBoth('/login.html');
    for (const d of both()) {
      await d.mainFrame().evaluate(`(() => {
        document.body.innerHTML = '<input id="late" style="display:none"><select id="pick" disabled><option value="a">A</option><option value="b">B</option></select><input id="never" style="display:none">';
        setTimeout(() => { document.getElementById('late').style.display = ''; document.getElementById('pick').disabled = false; }, 300);
      })()`);
      const late = (await d.mainFrame().element("document.getElementById('late')"))!;
      await late.fill('hello', { timeoutMs: 5000 });
      const pick = (await d.mainFrame().element("document.getElementById('pick')"))!;
      await pick.selectValue('b', { timeoutMs: 5000 });
      expect(await d.mainFrame().evaluate("document.getElementById('late').value"), d.kind).toBe('hello');
      expect(await d.mainFrame().evaluate("document.getElementById('pick').value"), d.kind).toBe('b');
      const never = (await d.mainFrame().element("document.getElementById('never')"))!;
      await expect(never.fill('x', { timeoutMs: 300 }), d.kind).rejects.toThrow(/Timeout 300ms exceeded/);
      expect(await d.mainFrame().evaluate("document.getElementById('never').value"), d.kind).toBe('');
    }
  });

  it('gives up on an element the page replaces at every read, with a clear error', async () => {
    await openBoth('/login.html');
    for (const d of both()) {
      // Each read of the button (its box) makes the page swap it for a copy right after.
      await d.mainFrame().evaluate(`(() => {
        document.body.innerHTML = '<button id="b" type="button">Flicker</button>';
        const arm = (el) => { el.getBoundingClientRect = function () {
          queueMicrotask(() => { if (!el.isConnected) return; const n = el.cloneNode(true); arm(n); el.replaceWith(n); });
          return Element.prototype.getBoundingClientRect.call(el);
        }; };
        arm(document.getElementById('b'));
      })()`);
      const snap = await snapshot(d);
      const button = snap.elements.find((e) => e.name === 'Flicker')!;
      const found = await findElementById(d, snap, button.id);
      expect(found, d.kind).toEqual({
        error: expect.stringMatching(/replaced again each time the page was read \(3 reads\)/),
      });
    }
  });
});
