import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { act } from '../../lib/ops/act.ts';
import { OpError } from '../../lib/ops/types.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { client, fixtureSession, idInPrompt, opContext } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

const verdict = (page: import('playwright-core').Page) =>
  page.evaluate('window.__result') as Promise<string | undefined>;

describe('compound instructions through act', () => {
  it('runs every part in order with no model, each on a fresh snapshot', async () => {
    const session = await fixtureSession(browser, site, '/tasks/enter-text.html');
    try {
      const res = await act(opContext(session), 'Enter "Kasie" into the text field and press Submit.');
      expect(res.success).toBe(true);
      expect(res.resolvedBy).toBe('matcher');
      expect(res.actions.map((a) => a.method)).toEqual(['fill', 'click']);
      expect(res.actionDescription).toMatch(/fill .*Kasie.*; then click button "Submit"/);
      expect(await verdict(session.page)).toBe('right');
    } finally {
      await session.close();
    }
  });

  it('reports honestly when a later part does not resolve: what was done and what was not', async () => {
    const session = await fixtureSession(browser, site, '/tasks/enter-text.html');
    try {
      const res = await act(opContext(session), 'Enter "Kasie" into the text field and press Launch.');
      expect(res.success).toBe(false);
      expect(res.actions.map((a) => a.method)).toEqual(['fill']);
      expect(res.message).toMatch(/did fill .*Kasie/);
      expect(res.message).toMatch(/step 2 of 2 failed/);
      expect(res.message).toContain('not done: "press Launch"');
      expect(res.error?.kind).toBe('not_found');
      expect(await session.page.locator('#tt').inputValue()).toBe('Kasie');
      expect(await verdict(session.page)).toBeUndefined();
    } finally {
      await session.close();
    }
  });

  it('does nothing at all when the first part does not resolve, and says a model is needed', async () => {
    const session = await fixtureSession(browser, site, '/tasks/enter-text.html');
    try {
      const err = await act(opContext(session), 'click Launch and type "x" into the text field').catch(
        (e) => e,
      );
      expect(err).toBeInstanceOf(OpError);
      expect((err as OpError).kind).toBe('no_model');
      expect(await session.page.locator('#tt').inputValue()).toBe('');
    } finally {
      await session.close();
    }
  });

  it('defers the whole sentence when any part is not plain: nothing is typed', async () => {
    const session = await fixtureSession(browser, site, '/tasks/enter-text.html');
    try {
      const err = await act(opContext(session), 'Enter "Kasie" into the text field, then do the usual').catch(
        (e) => e,
      );
      expect((err as OpError).kind).toBe('no_model');
      expect(await session.page.locator('#tt').inputValue()).toBe('');
    } finally {
      await session.close();
    }
  });

  it('hands a later part the matcher cannot resolve to the model, that part only', async () => {
    const session = await fixtureSession(browser, site, '/tasks/enter-text.html');
    try {
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'button', 'Submit'),
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'the only button sends the form',
        },
      }));
      const ctx = opContext(session, { llm: client(llm, 'openai') });
      const res = await act(ctx, 'Enter "Kasie" into the text field and press the big send thing.');
      expect(res.success).toBe(true);
      expect(res.resolvedBy).toBe('llm');
      expect(llm.requests).toHaveLength(1);
      // The model is asked about the part it must resolve, not the whole sentence.
      expect(llm.requests[0]!.text).toMatch(/Instruction: press the big send thing/);
      expect(llm.requests[0]!.text).not.toMatch(/Instruction: Enter/);
      expect(await verdict(session.page)).toBe('right');
    } finally {
      await session.close();
    }
  });
});
