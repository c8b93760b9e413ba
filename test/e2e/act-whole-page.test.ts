import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { act } from '../../lib/ops/act.ts';
import { observe } from '../../lib/ops/observe.ts';
import { keywordsOf, readPage } from '../../lib/ops/page-state.ts';
import { OpError } from '../../lib/ops/types.ts';
import { freshPageEachTest } from '../support/browser.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

/**
 * A shop page as real ones come: a small sign-in form in the header, a long page of products (each
 * with a quantity box: more form controls than the budget holds), and the page's own member
 * sign-in form far below, whose fields do not use the instruction's words.
 * The page is far over act's default token budget, so the prompt outline keeps the header form and
 * leaves the member form out.
 */
const products = Array.from(
  { length: 900 },
  (_, i) =>
    `<li><a href="#p${i}">Linen shirt no. ${i} in blue, white or sand</a> <span>from $${20 + (i % 50)}</span> <input type="number" aria-label="Quantity" value="1"></li>`,
).join('');
const PAGE = `
<header><form id="quick">
  <label>Email <input name="email" type="email"></label>
  <label>Password <input name="password" type="password"></label>
  <button>Sign In &gt;</button>
</form></header>
<main>
  <ul>${products}</ul>
  <h2>Member sign in</h2>
  <form id="member">
    <label>Member ID <input name="memberid" autocomplete="username"></label>
    <label>Access Code <input name="code" type="password"></label>
    <button>Sign In</button>
  </form>
</main>`;

const EMAIL = 'type "ada@example.com" into the email field';

describe('act and observe decide without a model on the whole page, not on what the budget kept', () => {
  it('the outline for a model leaves part of the member form out (the case this guards)', async () => {
    await page.setContent(PAGE);
    const snap = await readPage({ page }, { keywords: keywordsOf(EMAIL) });
    const shown = new Set(snap.elements.map((e) => e.name));
    expect(snap.stats.omittedInteractive).toBeGreaterThan(0);
    expect(shown.has('Email')).toBe(true);
    expect(shown.has('Access Code')).toBe(false);
    expect(snap.complete?.map((e) => e.name)).toEqual(expect.arrayContaining(['Member ID', 'Access Code']));
  });

  it('with two sign-in forms and no word saying which, the email field is not guessed', async () => {
    await page.setContent(PAGE);
    const err = await act({ page }, EMAIL).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpError);
    expect((err as OpError).kind).toBe('no_model');
    // It says why, naming both candidates.
    expect((err as OpError).message).toMatch(/Email/);
    expect((err as OpError).message).toMatch(/Member ID/);
    expect(await page.locator('#quick [name=email]').inputValue()).toBe('');
    expect(await page.locator('#member [name=memberid]').inputValue()).toBe('');
  });

  it('a target the budget left out of the outline is still found and acted on', async () => {
    await page.setContent(PAGE);
    const password = 'type %pw% into the password field';
    // Outside the outline a model would be shown…
    const outline = await readPage({ page }, { keywords: keywordsOf(password) });
    expect(outline.elements.some((e) => e.name === 'Access Code')).toBe(false);
    // …the page's own sign-in form (not the header's) is still the one it fills…
    const res = await act({ page, variables: { pw: 's3cret' } }, password);
    expect(res.success).toBe(true);
    expect(await page.locator('#member [name=code]').inputValue()).toBe('s3cret');
    expect(await page.locator('#quick [name=password]').inputValue()).toBe('');
    // …and the one observe offers for it.
    const seen = await observe({ page }, password);
    expect(seen.elements.map((e) => [e.name, e.method])).toEqual([['Access Code', 'fill']]);
  });

  it('clicking "the password field" means the field typing into it would fill, not one just named so', async () => {
    await page.setContent(PAGE);
    const res = await act({ page }, 'click the password field');
    expect(res.success).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('code');
    // Observe without a verb points at the same field, offered with the way a field is used.
    const seen = await observe({ page }, 'the password field');
    expect(seen.elements.map((e) => [e.name, e.method])).toEqual([['Access Code', 'fill']]);
  });
});
