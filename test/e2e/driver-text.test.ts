/**
 * The Playwright adapter's string path (evaluateText): the main frame's big results over a CDP
 * session of its own instead of Playwright's evaluate. What reads through it must read exactly as
 * through Playwright: the same value, the page's own error, the frame asked, the current document.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newJobContext } from '../../lib/browser/context.ts';
import { frameOf } from '../../lib/browser/playwright-driver.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { freshPageEachTest } from '../support/browser.ts';

let page: Page;
freshPageEachTest((p) => {
  page = p;
});

const text = (p: Page, expression: string) => frameOf(p.mainFrame()).evaluateText(expression);

describe('evaluateText (Playwright adapter)', () => {
  it('hands back a large string as the page made it, control characters included', async () => {
    await page.setContent('<p>hi</p>');
    const expression = `'a\\u0000b\\t"é'.repeat(100000)`;
    const raw = await text(page, expression);
    expect(raw).toBe(await page.evaluate(expression));
    expect(raw).toHaveLength(600_000);
    expect(await text(page, 'undefined')).toBeUndefined();
  });

  it("fails with the page's own error, and reads the frame it is asked and the document there now", async () => {
    await page.setContent('<iframe srcdoc="<p>inside the frame</p>"></iframe>');
    await page.frames()[1]!.waitForLoadState();
    await expect(text(page, '(() => { throw new TypeError("no such thing") })()')).rejects.toThrow(
      /TypeError: no such thing/,
    );
    const child = frameOf(page.frames()[1]!);
    expect(await child.evaluateText('document.body.textContent')).toBe('inside the frame');
    await page.setContent('<title>second</title>');
    expect(await text(page, 'document.title')).toBe('second');
  });

  it('gives the snapshot Playwright evaluate gives', async () => {
    const html =
      '<main><h1>Shop</h1><label>Email <input type="email"></label><a href="/cart">Cart</a>' +
      '<iframe srcdoc="<button>Inside</button>"></iframe></main>';
    await page.setContent(html);
    await page.frames()[1]!.waitForLoadState();
    const viaText = await snapshot(page);
    // The same page in a new context of the same browser, read through Playwright's evaluate.
    const other = await newJobContext(page.context().browser()!);
    try {
      const p2 = await other.newPage();
      await p2.setContent(html);
      await p2.frames()[1]!.waitForLoadState();
      const proto = Object.getPrototypeOf(frameOf(p2.mainFrame())) as { evaluateText?: unknown };
      const own = Object.getOwnPropertyDescriptor(proto, 'evaluateText')!;
      delete proto.evaluateText;
      try {
        const viaEvaluate = await snapshot(p2);
        expect(viaText.tree).toBe(viaEvaluate.tree);
        expect(viaText.tree).toContain('button: Inside');
      } finally {
        Object.defineProperty(proto, 'evaluateText', own);
      }
    } finally {
      await other.close();
    }
  });
});
