import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { act } from '../../lib/ops/act.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { client, idInPrompt } from '../support/ops-env.ts';

/**
 * `options.matcher: false` (issue 27, what bench:act-corpus --perfect measures the model path
 * with): the model decides even where the zero-token matcher would have acted on its own.
 */
let browser: Browser;
let llm: ScriptedModel;

beforeAll(async () => {
  [browser, llm] = await Promise.all([startBrowser(), startScriptedModel()]);
});
afterAll(async () => {
  await browser?.close();
  await llm?.close();
});

const PAGE = `<form><label for="e">Email</label><input id="e" type="email">
  <label for="p">Password</label><input id="p" type="password"><button>Sign in</button></form>`;

describe('act with the matcher off', () => {
  it('asks the model and fills the field it names, where the matcher alone would have acted', async () => {
    const { page, context } = await openPage(browser);
    try {
      await page.setContent(PAGE);
      const instruction = 'type "ada@example.com" into the email field';
      // With the matcher on, no model is needed at all…
      const plain = await act({ page }, instruction);
      expect(plain.resolvedBy).toBe('matcher');
      await page.fill('#e', '');
      // …with it off, the model is asked, and what it names is what gets filled.
      const before = llm.requests.length;
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'textbox', 'Email'),
          method: 'fill',
          arguments: ['bob@example.com'],
          twoStep: false,
          reason: 'the email box',
        },
      }));
      const res = await act({ page, llm: client(llm, 'openai'), options: { matcher: false } }, instruction);
      expect(res.success).toBe(true);
      expect(res.resolvedBy).toBe('llm');
      expect(llm.requests.length).toBe(before + 1);
      expect(await page.inputValue('#e')).toBe('bob@example.com');
    } finally {
      llm.setHandler(undefined);
      await context.close();
    }
  });
});
