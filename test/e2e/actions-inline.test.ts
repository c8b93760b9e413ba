import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { executeAction } from '../../lib/actions/execute.ts';
import type { Action } from '../../lib/actions/types.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { freshPageEachTest } from '../support/browser.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

const PAGE = `
<p id="log"></p>
<button onclick="log('clicked')">Save</button>
<button ondblclick="log('double')">Twice</button>
<button onmouseenter="log('hovered')">Hover me</button>
<button disabled>Locked</button>
<input aria-label="Name" onkeydown="if (event.key === 'Enter') log('enter:' + this.value)">
<select aria-label="Size" onchange="log('size:' + this.value)"><option value="s">Small</option><option value="l">Large</option></select>
<input type="checkbox" aria-label="Agree" onchange="log('agree:' + this.checked)">
<div id="box" style="height:100px; overflow:auto"><div style="height:1000px">tall</div></div>
<div id="host"></div>
<iframe srcdoc="<input aria-label='Frame field'><button onclick=&quot;parent.log('frame click')&quot;>Frame button</button>"></iframe>
<div draggable="true" id="card" style="width:80px;height:30px;background:#ccc">Card</div>
<div id="drop" style="width:200px;height:80px;border:1px solid" ondragover="event.preventDefault()" ondrop="log('dropped')">Drop here</div>
<div style="height:2000px"></div>
<script>
  function log(t) { document.getElementById('log').textContent = t; }
  document.getElementById('host').attachShadow({ mode: 'closed' }).innerHTML =
    '<button id="sb">Shadow save</button>';
  // closed root: reach the button through the light DOM host's event
  document.getElementById('host').addEventListener('click', () => log('shadow clicked'));
</script>`;

async function setUp(): Promise<Snapshot> {
  await page.setContent(PAGE);
  await page.frames()[1]?.waitForLoadState();
  return snapshot(page);
}

const idOf = (snap: Snapshot, name: string) => {
  const el = snap.elements.find((e) => e.name === name);
  if (!el) throw new Error(`no ${name} in\n${snap.tree}`);
  return el.id;
};
const log = () => page.locator('#log').textContent();

describe('executeAction on real Chromium', () => {
  it('clicks, double-clicks and hovers by id', async () => {
    const snap = await setUp();
    const run = (a: Action) => executeAction(page, a, { snapshot: snap });
    expect((await run({ method: 'click', target: { id: idOf(snap, 'Save') } })).ok).toBe(true);
    expect(await log()).toBe('clicked');
    await run({ method: 'dblclick', target: { id: idOf(snap, 'Twice') } });
    expect(await log()).toBe('double');
    await run({ method: 'hover', target: { id: idOf(snap, 'Hover me') } });
    expect(await log()).toBe('hovered');
  });

  it('fills, presses keys, selects by label or value, checks and unchecks', async () => {
    const snap = await setUp();
    const run = (a: Action) => executeAction(page, a, { snapshot: snap, variables: { who: 'Ada' } });
    const fill = await run({ method: 'fill', target: { id: idOf(snap, 'Name') }, args: ['%who%'] });
    // The message names the placeholder, never the value.
    expect(fill.message).toContain('%who%');
    expect(fill.message).not.toContain('Ada');
    await run({ method: 'press', target: { id: idOf(snap, 'Name') }, args: ['Enter'] });
    expect(await log()).toBe('enter:Ada');
    await run({ method: 'select', target: { id: idOf(snap, 'Size') }, args: ['Large'] });
    expect(await log()).toBe('size:l');
    await run({ method: 'select', target: { id: idOf(snap, 'Size') }, args: ['s'] });
    expect(await log()).toBe('size:s');
    await run({ method: 'check', target: { id: idOf(snap, 'Agree') } });
    expect(await log()).toBe('agree:true');
    await run({ method: 'uncheck', target: { id: idOf(snap, 'Agree') } });
    expect(await log()).toBe('agree:false');
  });

  it('refuses to type a text longer than the field keeps, and types nothing', async () => {
    await page.setContent(
      '<label>PIN <input maxlength="4"></label><label>Note <textarea maxlength="6"></textarea></label>',
    );
    const snap = await snapshot(page);
    const run = (a: Action) => executeAction(page, a, { snapshot: snap, variables: { pin: '123456' } });
    for (const method of ['fill', 'type'] as const) {
      const out = await run({ method, target: { id: idOf(snap, 'PIN') }, args: ['%pin%'] });
      expect(out.ok).toBe(false);
      expect(out.error?.message).toMatch(/takes at most 4 characters and the text is longer/);
      // Neither the secret nor its length is told.
      expect(out.error?.message).not.toMatch(/123456|\b6\b/);
      expect(await page.locator('input').inputValue()).toBe('');
    }
    const note = await run({ method: 'fill', target: { id: idOf(snap, 'Note') }, args: ['a long note'] });
    expect(note.error?.message).toMatch(/at most 6 characters/);
    // What fits is typed as before.
    expect((await run({ method: 'fill', target: { id: idOf(snap, 'PIN') }, args: ['1234'] })).ok).toBe(true);
    expect(await page.locator('input').inputValue()).toBe('1234');
  });

  it('acts inside an iframe and a closed shadow root, also by durable locator', async () => {
    const snap = await setUp();
    const frameButton = snap.elements.find((e) => e.name === 'Frame button')!;
    await executeAction(page, { method: 'click', target: { locator: frameButton.locator } });
    expect(await log()).toBe('frame click');
    const field = snap.elements.find((e) => e.name === 'Frame field')!;
    await executeAction(
      page,
      { method: 'type', target: { id: field.id }, args: ['hello'] },
      { snapshot: snap },
    );
    expect(await page.frames()[1]!.locator('input').inputValue()).toBe('hello');
    const shadow = snap.elements.find((e) => e.name === 'Shadow save')!;
    const out = await executeAction(page, { method: 'click', target: { locator: shadow.locator.xpath } });
    expect(out.ok).toBe(true);
    expect(await log()).toBe('shadow clicked');
  });

  it('scrolls the page and a container by percent, pixels and into view', async () => {
    const snap = await setUp();
    await executeAction(page, { method: 'scroll', args: ['bottom'] });
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
    await executeAction(page, { method: 'scroll', args: ['top'] });
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    const box = snap.elements.find((e) => e.scrollable)!;
    await executeAction(
      page,
      { method: 'scroll', target: { id: box.id }, args: ['50%'] },
      { snapshot: snap },
    );
    expect(await page.locator('#box').evaluate((b) => b.scrollTop)).toBeGreaterThan(400);
    await executeAction(
      page,
      { method: 'scroll', target: { id: box.id }, args: ['-100'] },
      { snapshot: snap },
    );
    expect(await page.locator('#box').evaluate((b) => Math.round(b.scrollTop))).toBe(350);
  });

  it('drags one element onto another and clicks a viewport point', async () => {
    const snap = await setUp();
    const out = await executeAction(
      page,
      { method: 'drag', target: { id: idOf(snap, 'Card') }, to: { locator: '//*[@id="drop"]' } },
      { snapshot: snap },
    );
    expect(out.ok).toBe(true);
    expect(await log()).toBe('dropped');
    const save = snap.elements.find((e) => e.name === 'Save')!.box!;
    const vp = page.viewportSize()!;
    await page.evaluate(() => {
      document.getElementById('log')!.textContent = '';
    });
    await executeAction(page, {
      method: 'click',
      target: {
        xPct: ((save.x + save.width / 2) / vp.width) * 100,
        yPct: ((save.y + save.height / 2) / vp.height) * 100,
      },
    });
    expect(await log()).toBe('clicked');
  });

  it('navigates: goto, back, forward, reload, wait', async () => {
    const a = 'data:text/html,<title>A</title><p>page A</p>';
    const b = 'data:text/html,<title>B</title><p>page B</p>';
    await executeAction(page, { method: 'goto', args: [a] });
    const go = await executeAction(page, { method: 'goto', args: [b] });
    expect(go.navigated).toBe(true);
    await executeAction(page, { method: 'back' });
    expect(await page.title()).toBe('A');
    await executeAction(page, { method: 'forward' });
    expect(await page.title()).toBe('B');
    expect((await executeAction(page, { method: 'reload' })).ok).toBe(true);
    expect((await executeAction(page, { method: 'wait', args: ['text:page B'] })).ok).toBe(true);
  });

  it('returns failures as values with a kind', async () => {
    const snap = await setUp();
    const disabled = await executeAction(
      page,
      { method: 'click', target: { id: idOf(snap, 'Locked') } },
      { snapshot: snap, timeoutMs: 500 },
    );
    expect(disabled.ok).toBe(false);
    expect(disabled.error?.kind).toBe('not_actionable');
    // Why, in plain words: no terminal colour codes from Playwright's call log in a JSON answer.
    expect(disabled.error?.message).toMatch(/element is not enabled$/);
    expect(disabled.error?.message).not.toContain('\u001b');
    const ghost = await executeAction(page, { method: 'click', target: { id: 9999 } }, { snapshot: snap });
    expect(ghost.error?.kind).toBe('not_found');
    const gone = await executeAction(page, { method: 'click', target: { locator: '/html/body/nav[7]' } });
    expect(gone.error?.kind).toBe('not_found');
    const bad = await executeAction(page, { method: 'scroll', args: ['sideways'] });
    expect(bad.error?.kind).toBe('invalid');
    const refused = await executeAction(
      page,
      { method: 'goto', args: ['http://127.0.0.1:9/'] },
      {
        checkNavigation: async (url) => {
          throw new Error(`Blocked request to ${url}: loopback`);
        },
      },
    );
    expect(refused.error).toEqual({
      kind: 'blocked',
      message: 'Blocked request to http://127.0.0.1:9/: loopback',
    });
    const slow = await executeAction(
      page,
      { method: 'wait', args: ['text:never shows'] },
      { timeoutMs: 300 },
    );
    expect(slow.error?.kind).toBe('timeout');
    // Removed element: its old path now points at the next button, which must NOT be clicked.
    await page.evaluate(() => document.querySelector('button')!.remove());
    const stale = await executeAction(
      page,
      { method: 'click', target: { id: idOf(snap, 'Save') } },
      { snapshot: snap, timeoutMs: 500 },
    );
    expect(stale.error?.kind).toBe('not_found');
    expect(stale.error?.message).toContain('no longer on the page');
    expect(await log()).toBe('');
  });

  it('follows an element that was re-rendered elsewhere, by role and name', async () => {
    const snap = await setUp();
    await page.evaluate(() => {
      const old = document.querySelector('button')!;
      const wrap = document.createElement('section');
      const fresh = document.createElement('button');
      fresh.textContent = 'Save';
      fresh.onclick = () => {
        document.getElementById('log')!.textContent = 'new save';
      };
      wrap.append(fresh);
      old.remove();
      document.body.append(wrap);
    });
    const out = await executeAction(
      page,
      { method: 'click', target: { id: idOf(snap, 'Save') } },
      { snapshot: snap },
    );
    expect(out.ok).toBe(true);
    expect(await log()).toBe('new save');
  });
  it('clicks a link laid out around blocks on the link, not on what its outer box also covers', async () => {
    // An <a> around block children, a line of other words right after it (a real sign-in page's
    // button): its box as the driver reports it adds the empty line fragments, and that box's
    // centre falls on the container just below the link's visible part.
    await page.setContent(`
      <p id="log"></p>
      <div id="panel" style="width:400px; font:16px sans-serif">
        <a id="go" style="cursor:pointer"><div><div>Login with Example</div></div></a>
        <a href="#register" style="font-size:40px">Create Account</a>
      </div>
      <script>
        document.addEventListener('click', (e) => {
          document.getElementById('log').textContent = e.target.closest('#go') ? 'link' : 'missed:' + e.target.id;
        });
      </script>`);
    const shape = await page.evaluate(() => {
      const link = document.getElementById('go')!;
      return { own: link.getBoundingClientRect().height, fragments: link.getClientRects().length };
    });
    expect(shape.fragments).toBeGreaterThan(1);
    const driverBox = await page.locator('#go').boundingBox();
    // The trap is set: the driver's box is taller than the link's own rectangle.
    expect(driverBox!.height).toBeGreaterThan(shape.own + 1);
    const snap = await snapshot(page);
    const res = await executeAction(
      page,
      { method: 'click', target: { id: idOf(snap, 'Login with Example') } },
      { snapshot: snap },
    );
    expect(res.ok).toBe(true);
    expect(await log()).toBe('link');
  });
});
