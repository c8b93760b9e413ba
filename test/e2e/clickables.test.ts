import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { act } from '../../lib/ops/act.ts';
import { matchInstruction } from '../../lib/ops/matcher/index.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { Snapshot } from '../../lib/perception/types.ts';
import { idIn, openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { fixtureSession, opContext } from '../support/ops-env.ts';

let browser: Browser;
let site: FixtureServer;
let snap: Snapshot;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  const { page, context } = await openPage(browser, `${site.url}/clickables.html`);
  snap = await snapshot(page);
  await context.close();
});
afterAll(async () => {
  await browser?.close();
  await site?.close();
  await closeGuardProxies();
});

const named = (name: string) => snap.elements.filter((e) => e.name === name);

describe('snapshot: elements that act as buttons or links without a role', () => {
  it('gives a div with a click listener the button role and an id, on the model path and the matcher path', () => {
    const id = idIn(snap.tree, 'button', 'Open settings');
    expect(snap.elements.find((e) => e.id === id)).toMatchObject({ role: 'button', interactive: true });
  });

  it('calls an onclick that changes the address a link', () => {
    idIn(snap.tree, 'link', 'Docs');
    expect(named('Docs')[0]?.role).toBe('link');
  });

  it('turns an <li> with a handler into a button, and leaves a plain <li> a list item', () => {
    idIn(snap.tree, 'button', 'Archive row');
    expect(named('Plain item')).toHaveLength(0);
    expect(snap.tree).toMatch(/^\s+Plain item$/m);
  });

  it('counts cursor:pointer with text and tabindex>=0 as buttons', () => {
    idIn(snap.tree, 'button', 'Pointer card with inner text');
    idIn(snap.tree, 'button', 'Focusable tile');
  });

  it('does not make new elements of noise', () => {
    // The pointer box around a real button, the span inheriting the card's pointer, the bare
    // listeners on a long paragraph and on a box around a button, an empty pointer span, the
    // pointer row around a span with its own handler (the span is the control).
    expect(snap.elements.map((e) => `${e.role}: ${e.name}`)).toEqual([
      'button: Open settings',
      'link: Docs',
      'button: Archive row',
      'button: Real button',
      'button: Pointer card with inner text',
      'button: Focusable tile',
      'button: Inner action',
      'button: Remove',
      'button: Log in',
    ]);
    expect(named('with inner text')).toHaveLength(0);
    // An <a> without href and without a button's class (the current page of a pager) stays text.
    expect(named('3')).toHaveLength(0);
  });

  it('lets the matcher name it like any button', () => {
    const d = matchInstruction('click the Open settings button', snap);
    expect(d.kind).toBe('action');
    if (d.kind === 'action') expect(d.elementId).toBe(named('Open settings')[0]!.id);
  });

  /** Acts on a fresh copy of the page with no model; returns what the page recorded afterwards. */
  async function actWithoutModel(instruction: string, recorded: string) {
    const session = await fixtureSession(browser, site, '/clickables.html');
    try {
      const result = await act(opContext(session), instruction);
      return { result, recorded: await session.page.evaluate(`document.body.dataset.${recorded}`) };
    } finally {
      await session.close();
    }
  }

  it('takes an <a> without href that its class calls a button for one, and clicks it through a delegated handler', async () => {
    idIn(snap.tree, 'button', 'Log in');
    const { result, recorded } = await actWithoutModel('click the Log in button', 'login');
    expect(result).toMatchObject({ success: true, resolvedBy: 'matcher' });
    expect(recorded).toBe('yes');
  });

  it('clicks it for real through act with no model', async () => {
    const { result, recorded } = await actWithoutModel('click Open settings', 'settings');
    expect(result).toMatchObject({ success: true, resolvedBy: 'matcher' });
    expect(recorded).toBe('open');
  });
});
