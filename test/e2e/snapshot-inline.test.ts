import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { diffSnapshots } from '../../lib/perception/diff.ts';
import { redactSecrets } from '../../lib/perception/redact.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { findSecretText, setOfMarks } from '../../lib/perception/som.ts';
import { freshPageEachTest } from '../support/browser.ts';
import { locatorMismatches } from '../support/roundtrip.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

const WIDGETS = `
<main>
  <h1>Account</h1>
  <form>
    <label for="email">Email</label><input id="email" type="email" value="ada@example.com">
    <input type="password" aria-label="Password" value="hunter2">
    <select aria-label="Size"><option>Small</option><option selected>Large</option></select>
    <label><input type="checkbox" checked> Keep me signed in</label>
    <button type="button" disabled>Delete account</button>
    <div hidden><button>Invisible</button></div>
    <div style="display:none"><button>Also invisible</button></div>
  </form>
  <div id="open-host"></div>
  <div id="closed-host"></div>
  <iframe srcdoc="<p>Inside</p><button>Frame button</button>"></iframe>
</main>
<script>
  const open = document.getElementById('open-host').attachShadow({ mode: 'open' });
  open.innerHTML = '<button>Open shadow button</button><div id="inner"></div>';
  open.getElementById('inner').attachShadow({ mode: 'open' }).innerHTML = '<a href="/deep">Deep link</a>';
  document.getElementById('closed-host').attachShadow({ mode: 'closed' }).innerHTML = '<input aria-label="Closed field">';
</script>`;

describe('snapshot on real Chromium', () => {
  it('shows roles, names, values and states as a browser computes them', async () => {
    await page.setContent(WIDGETS);
    await page.frames()[1]?.waitForLoadState();
    const snap = await snapshot(page);
    expect(snap.tree).toContain('h1: Account');
    expect(snap.tree).toMatch(/\[\d+\] textbox: Email value="ada@example.com"/);
    expect(snap.tree).toMatch(/\[\d+\] combobox: Size value="Large" options=\[Small \| Large\]/);
    expect(snap.tree).toMatch(/\[\d+\] checkbox: Keep me signed in checked/);
    expect(snap.tree).toMatch(/\[\d+\] button: Delete account disabled/);
    // A password never leaves the page, not even as its length.
    expect(JSON.stringify(snap)).not.toContain('hunter2');
    expect(snap.tree).not.toContain('Invisible');
    // Hidden decoration is not part of a name.
    await page.setContent('<button>Choose a colour<span aria-hidden="true"> ▾</span></button>');
    expect((await snapshot(page)).tree).toMatch(/^\[\d+\] button: Choose a colour$/);
    // Content of a closed <details> is not rendered: only its summary is there to act on.
    await page.setContent(
      '<details><summary>More options</summary><label><input type="checkbox"> Beta</label></details>',
    );
    const closed = await snapshot(page);
    expect(closed.tree).toContain('button: More options collapsed');
    expect(closed.tree).not.toContain('Beta');
    await page.click('summary');
    expect((await snapshot(page)).tree).toMatch(/checkbox: Beta unchecked/);
  });

  it('reads a page whose <body> a modal library marked aria-hidden, and still leaves out what it hid inside', async () => {
    // As a real account page had it: the library hid <body>, its own dialog included.
    await page.setContent(`
      <body aria-hidden="true">
        <div id="app" aria-hidden="true"><button>Behind the modal</button></div>
        <div role="dialog" aria-label="Change password">
          <label>New password <input type="password"></label>
          <label>Confirm password <input type="password"></label>
          <button>Save</button>
        </div>
      </body>`);
    const snap = await snapshot(page);
    expect(snap.tree).toMatch(/\[\d+\] textbox: New password/);
    expect(snap.tree).toMatch(/\[\d+\] textbox: Confirm password/);
    expect(snap.tree).toMatch(/\[\d+\] button: Save/);
    expect(snap.tree).not.toContain('Behind the modal');
  });

  it('names a field by the labels a user sees, read as shown', async () => {
    await page.setContent(`
      <input id="first"><label for="first">First Name</label>
      <ul style="display:none"><li><label for="first">First Name is required</label></li></ul>
      <label><input type="checkbox"><span>Keep me signed in</span><span style="display:block">Only on a private device</span></label>
      <label for="mail" style="display:none">email</label><input id="mail">
      <input type="image" src="data:," value="Sign In">
      <label for="store" class="sr">Store name</label><label for="store">Store Name</label><input id="store">`);
    const snap = await snapshot(page);
    const names = snap.elements.map((e) => `${e.role}: ${e.name}`);
    expect(names).toEqual([
      // The hidden "is required" label beside a shown one names nothing.
      'textbox: First Name',
      // Blocks inside a label stay apart.
      'checkbox: Keep me signed in Only on a private device',
      // A label hidden for everyone but screen readers, and nothing else: it still names the field.
      'textbox: email',
      // An image button with no alt text: its value, as Chromium names it.
      'button: Sign In',
      // Two labels with the same words (a screen-reader copy): said once.
      'textbox: Store name',
    ]);
  });

  it('takes a floating label after an unnamed field as its nearby text, and grounds on it', async () => {
    // CSS floating labels follow their input (the `input:focus + label` pattern); the names and
    // ids say nothing.
    await page.setContent(`
      <form>
        <div class="f"><input type="text" name="f_81ab"><label>Username</label></div>
        <div class="f"><input type="text" name="f_92cd"><div class="title">Email</div></div>
        <div class="f"><input type="password" name="f_a7e0"><span style="display:none">Required</span></div>
        <p><span>Order number</span><b>*</b><span style="display:none">You must enter text</span><input name="f_b3"></p>
        <button>Sign in</button>
      </form>`);
    const snap = await snapshot(page);
    const fields = snap.elements.filter((e) => e.role === 'textbox');
    // Hidden validation messages and a lone "*" are no label, before or after the field.
    expect(fields.map((f) => f.facts?.nearby)).toEqual(['Username', 'Email', undefined, 'Order number']);
    const d = matchInstruction('type "ada@example.com" into the email field', snap);
    expect(d.kind).toBe('action');
    if (d.kind === 'action') expect(d.elementId).toBe(fields[1]!.id);
  });

  it('reaches into open, nested and closed shadow roots and iframes, with locators that find the same element', async () => {
    await page.setContent(WIDGETS);
    await page.frames()[1]?.waitForLoadState();
    const snap = await snapshot(page);
    for (const [role, name] of [
      ['button', 'Open shadow button'],
      ['link', 'Deep link'],
      ['textbox', 'Closed field'],
      ['button', 'Frame button'],
    ]) {
      expect(
        snap.elements.find((e) => e.role === role && e.name === name),
        `${role} ${name}`,
      ).toBeTruthy();
    }
    const deep = snap.elements.find((e) => e.name === 'Deep link')!;
    expect(deep.locator.xpath.split(' >> ')).toHaveLength(3);
    expect(deep.url).toMatch(/\/deep$/);
    expect(await locatorMismatches(page, snap)).toEqual([]);
  });

  it('keeps an element id while the element lives, and diff shows what appeared', async () => {
    await page.setContent('<button id="b">Open menu</button><ul id="m"></ul>');
    const first = await snapshot(page);
    await page.evaluate(() => {
      document.getElementById('m')!.innerHTML = '<li role="menuitem" tabindex="0">Rename</li>';
    });
    const second = await snapshot(page);
    const id = first.elements.find((e) => e.name === 'Open menu')!.id;
    expect(second.elements.find((e) => e.name === 'Open menu')!.id).toBe(id);
    const diff = diffSnapshots(first, second);
    expect(diff.added.map((e) => e.name)).toEqual(['Rename']);
    expect(diff.tree).toContain('menuitem: Rename');
  });

  it('fits a token budget, keeping keyword matches and saying what it left out', async () => {
    const rows = Array.from(
      { length: 300 },
      (_, i) => `<p>Paragraph ${i} of filler text</p><a href="/a${i}">Item ${i}</a>`,
    );
    await page.setContent(`<main>${rows.join('')}<button>Checkout now</button></main>`);
    const full = await snapshot(page);
    const small = await snapshot(page, { budget: 300, keywords: ['checkout'] });
    expect(full.stats.tokens).toBeGreaterThan(2000);
    expect(small.stats.tokens).toBeLessThanOrEqual(360);
    expect(small.tree).toContain('button: Checkout now');
    expect(small.omitted).toMatch(/lines left out/);
    expect(small.stats.omittedInteractive).toBeGreaterThan(0);
    // Only what the model saw is addressable.
    expect(small.elements.length).toBeLessThan(full.elements.length);
  });

  it('scopes to a selector, ignores selectors, and chunks by viewport', async () => {
    await page.setContent(
      `<nav><a href="/n">Nav link</a></nav><section id="s"><button>Inside</button><aside class="ad"><button>Ad</button></aside></section>` +
        `<div style="height:3000px"></div><button>Far below</button>`,
    );
    const scoped = await snapshot(page, { selector: '#s', ignore: ['.ad'] });
    expect(scoped.tree).toContain('Inside');
    expect(scoped.tree).not.toContain('Nav link');
    expect(scoped.tree).not.toContain('Ad');
    const chunk0 = await snapshot(page, { chunk: 0 });
    expect(chunk0.chunk?.count).toBeGreaterThan(2);
    expect(chunk0.tree).toContain('Nav link');
    expect(chunk0.tree).not.toContain('Far below');
    const far = snapshot(page, { selector: '#nope' });
    await expect(far).rejects.toThrow(/no element matches selector: #nope/);
  });

  it('marks off-viewport elements and draws set-of-marks boxes with the same ids', async () => {
    await page.setContent('<button>Top</button><div style="height:2000px"></div><button>Bottom</button>');
    const snap = await snapshot(page);
    const top = snap.elements.find((e) => e.name === 'Top')!;
    const bottom = snap.elements.find((e) => e.name === 'Bottom')!;
    expect(top.inViewport).toBe(true);
    expect(bottom.inViewport).toBe(false);
    const png = await setOfMarks(page, snap);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    // The overlay is gone afterwards: the page is as it was.
    expect(await page.locator('[data-bfn-som]').count()).toBe(0);
  });

  it('finds on-screen text that shows a secret, so screenshots can paint it over', async () => {
    await page.setContent(
      '<input aria-label="Email" value="ada@example.com"><p id="s">Signed in as ada@example.com</p>',
    );
    const rects = await findSecretText(page, ['ada@example.com']);
    const status = (await page.locator('#s').boundingBox())!;
    expect(rects.length).toBeGreaterThan(0);
    expect(rects.some((r) => Math.abs(r.y - status.y) < 4)).toBe(true);
    const snap = redactSecrets(await snapshot(page), { email: 'ada@example.com' });
    const field = snap.elements.find((e) => e.name === 'Email')!;
    expect(field.value).toBe('%email%');
    const png = await setOfMarks(page, snap, { secrets: { email: 'ada@example.com' } });
    expect(png.length).toBeGreaterThan(100);
  });

  it('leaves out what content-visibility: hidden skips, and only that', async () => {
    // On a table row (or a link) the property does nothing: Chromium shows the cells, so must we.
    await page.setContent(
      '<table><tr style="content-visibility:hidden"><td>Row shown</td><td><a href="/x">Row link</a></td></tr></table>' +
        '<div style="content-visibility:hidden"><p>Block skipped</p><button>Skipped button</button></div>',
    );
    const snap = await snapshot(page);
    expect(snap.tree).toContain('cell: Row shown');
    expect(snap.tree).toMatch(/\[\d+\] link: Row link/);
    expect(snap.tree).not.toContain('Block skipped');
    expect(snap.tree).not.toContain('Skipped button');
  });

  it('scores DOM confidence low on a canvas page with unlabelled icon buttons', async () => {
    await page.setContent(
      `<canvas width="1200" height="700"></canvas>` +
        `<button><svg width="10" height="10"><circle r="4"/></svg></button>`.repeat(5),
    );
    const low = await snapshot(page);
    await page.setContent(WIDGETS);
    const high = await snapshot(page);
    expect(low.confidence).toBeLessThan(0.6);
    expect(high.confidence).toBeGreaterThan(0.8);
  });
});
