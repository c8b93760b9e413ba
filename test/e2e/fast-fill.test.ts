/**
 * The one-trip fill (lib/actions/fast-fill.ts) on the Playwright driver: a plain text field is filled
 * with one input event per fill and its old text replaced; a field whose script rewrites what is typed
 * (a mask) is not "fast-filled" and ends as the driver's own fill leaves it; a field that is not plainly
 * ready (read-only, hidden, a date, a label) is left to the driver, which reports what is wrong.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { fastFill } from '../../lib/actions/fast-fill.ts';
import type { DriverElement, PageDriver } from '../../lib/browser/page-driver.ts';
import { playwrightDriver } from '../../lib/browser/playwright-driver.ts';
import { freshPageEachTest } from '../support/browser.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

const PAGE = `
<input id="name" value="old text" oninput="window.events = (window.events || 0) + 1">
<textarea id="note">old</textarea>
<input id="phone" oninput="this.value = this.value.replace(/\\D/g, '').replace(/(\\d{3})(?=\\d)/, '$1-')">
<input id="ro" readonly value="fixed">
<input id="hidden" style="display:none">
<input id="day" type="date">
<label id="lab">Email <input id="email"></label>`;

async function setUp(): Promise<{ driver: PageDriver; el: (id: string) => Promise<DriverElement> }> {
  await page.setContent(PAGE);
  const driver = playwrightDriver(page);
  return {
    driver,
    el: async (id) => {
      const found = await driver.mainFrame().element((sel: string) => document.querySelector(sel), `#${id}`);
      if (!found) throw new Error(`#${id} not found`);
      return found;
    },
  };
}

describe('fast fill', () => {
  it('replaces a text field and a textarea, with the page hearing input', async () => {
    const { driver, el } = await setUp();
    expect(await fastFill(driver, await el('name'), 'Ada Lovelace')).toBe(true);
    expect(await page.inputValue('#name')).toBe('Ada Lovelace');
    expect(await page.evaluate(() => (window as unknown as { events: number }).events)).toBe(1);
    expect(await fastFill(driver, await el('note'), 'two\nlines')).toBe(true);
    expect(await page.inputValue('#note')).toBe('two\nlines');
    expect(await fastFill(driver, await el('name'), '')).toBe(true);
    expect(await page.inputValue('#name')).toBe('');
  });

  it('a masked field answers false (what it holds is not the text), so the caller fills it the slow way', async () => {
    const { driver, el } = await setUp();
    expect(await fastFill(driver, await el('phone'), '5551234')).toBe(false);
    expect(await page.inputValue('#phone')).toBe('555-1234');
  });

  it('leaves to the driver what is not plainly a ready text field, touching nothing', async () => {
    const { driver, el } = await setUp();
    for (const id of ['ro', 'hidden', 'day', 'lab'])
      expect(await fastFill(driver, await el(id), 'x'), id).toBe(false);
    expect(await page.inputValue('#ro')).toBe('fixed');
    expect(await page.inputValue('#email')).toBe('');
  });
});
