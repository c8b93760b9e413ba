/**
 * How a read crosses from the page: always as pure ASCII, which the DevTools protocol carries
 * several times faster than text with a single character past it. A few such characters travel
 * escaped, text mostly in another script as base64 of its UTF-8. Either way the outline and the
 * names are the page's, exactly.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { collectInstall } from '../../lib/perception/injected/source.ts';
import { readText } from '../../lib/perception/read-text.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { freshPageEachTest } from '../support/browser.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

/** A character past ASCII. */
const PAST_ASCII = /[\u0080-\uffff]/;

/** The read exactly as it leaves the page, and what it says once read back. */
async function rawRead(): Promise<{ text: string; lines: string }> {
  const text = (await page.evaluate(collectInstall({ text: true }))) as string;
  return { text, lines: JSON.stringify(JSON.parse(readText(text))) };
}

const filler = Array.from(
  { length: 40 },
  (_, i) => `<p>Paragraph ${i} of plain words about the shop.</p>`,
).join('');

describe('the read on its way out of the page', () => {
  it('escapes a few characters past ASCII, and the outline still says them exactly', async () => {
    await page.setContent(
      `<h1>Café — Crème brûlée 🍰</h1><button>Bestätigen</button><a href="/größe">Größe ändern</a>
       <p id="lone"></p>${filler}<script>document.getElementById('lone').textContent = 'half \\ud800 pair';</script>`,
    );
    const raw = await rawRead();
    expect(raw.text).not.toMatch(PAST_ASCII);
    // Written out, the escapes are the characters again.
    expect(raw.lines).toContain('Café — Crème brûlée 🍰');

    const snap = await snapshot(page);
    expect(snap.tree).toContain('Café — Crème brûlée 🍰');
    expect(snap.tree).toContain('half \ud800 pair');
    expect(snap.elements.map((e) => e.name)).toEqual(expect.arrayContaining(['Bestätigen', 'Größe ändern']));
    const link = snap.elements.find((e) => e.name === 'Größe ändern');
    expect(decodeURI(link!.url!)).toContain('/größe');
  });

  it('sends text mostly in another script as base64 of its UTF-8, read exactly the same', async () => {
    const words = '请输入您的电子邮件地址和密码以继续访问您的账户设置与订单记录';
    await page.setContent(
      `<h1>登录您的账户</h1><label>电子邮件 <input></label><label>密码 <input type="password"></label>
       <button>登录</button>${Array.from({ length: 30 }, () => `<p>${words}</p>`).join('')}`,
    );
    const raw = await rawRead();
    expect(raw.text).not.toMatch(PAST_ASCII);
    expect(raw.text.startsWith('{')).toBe(false);
    expect(raw.lines).toContain('登录您的账户');

    const snap = await snapshot(page);
    expect(snap.tree).toContain('登录您的账户');
    expect(snap.tree).toContain(words);
    expect(snap.elements.map((e) => e.name)).toEqual(expect.arrayContaining(['电子邮件', '密码', '登录']));
  });
});
