import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { act } from '../../lib/ops/act.ts';
import { extract } from '../../lib/ops/extract.ts';
import { observe } from '../../lib/ops/observe.ts';
import { OpError } from '../../lib/ops/types.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { client, type Flavour, fixtureSession, idInPrompt, opContext } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

const SECRET = 'ada.lovelace@analytical.example';

describe.each<Flavour>(['openai', 'anthropic'])('act through the %s SDK', (flavour) => {
  it('types a variable into the login form: the value reaches the field, never a request or a log', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    const logs: string[] = [];
    try {
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'textbox', 'Email'),
          method: 'fill',
          arguments: ['%email%'],
          twoStep: false,
          reason: 'the email field',
        },
      }));
      const ctx = opContext(session, {
        llm: client(llm, flavour, (e) => logs.push(JSON.stringify(e))),
        variables: { email: SECRET },
        log: (e) => logs.push(JSON.stringify(e)),
      });
      const res = await act(ctx, 'Put my email address %email% where it belongs');
      expect(res.success).toBe(true);
      expect(res.resolvedBy).toBe('llm');
      expect(await session.page.locator('#email').inputValue()).toBe(SECRET);
      expect(res.usage.promptTokens).toBeGreaterThan(100);
      expect(res.usage.calls).toBe(1);
      // The secret is nowhere: not in what the model got, not in the result, not in logs.
      expect(JSON.stringify(llm.requests)).not.toContain(SECRET);
      expect(JSON.stringify(res)).not.toContain(SECRET);
      expect(logs.join('\n')).not.toContain(SECRET);
      // And a second call sees the filled field as %email%, not as its value.
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'button', 'Sign in'),
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'submit',
        },
      }));
      const submit = await act(ctx, 'submit the form to log in');
      expect(submit.success).toBe(true);
      expect(llm.requests.at(-1)!.text).toContain('value="%email%"');
      expect(JSON.stringify(llm.requests)).not.toContain(SECRET);
      expect(await session.page.locator('#status').textContent()).toBe(`Signed in as ${SECRET}`);
    } finally {
      await session.close();
    }
  });
});

describe('act', () => {
  it('opens a custom dropdown and picks the option among what appeared (two-step)', async () => {
    const session = await fixtureSession(browser, site, '/dropdown.html');
    try {
      llm.setHandler((r) =>
        r.schemaName === 'choose_option'
          ? {
              json: {
                elementId: idInPrompt(r.text, 'option', 'Green'),
                method: 'click',
                arguments: [],
                twoStep: false,
                reason: 'green',
              },
            }
          : {
              json: {
                elementId: idInPrompt(r.text, 'button', 'Choose a colour'),
                method: 'click',
                arguments: [],
                twoStep: true,
                reason: 'custom dropdown',
              },
            },
      );
      const res = await act(opContext(session, { llm: client(llm, 'openai') }), 'pick green as the colour');
      expect(res.success).toBe(true);
      expect(res.actions).toHaveLength(2);
      expect(await session.page.locator('#status').textContent()).toBe('Colour: Green');
      // The second prompt showed only what appeared, not the whole page again.
      const second = llm.requests[1]!;
      expect(second.text).toContain('option: Green');
      expect(second.text).not.toContain('combobox: Size');
    } finally {
      await session.close();
    }
  });

  it('heals once when the target was re-rendered between reading and acting', async () => {
    const session = await fixtureSession(browser, site, '/rerender.html');
    try {
      let calls = 0;
      llm.setHandler(async (r) => {
        calls++;
        if (calls === 1) {
          const id = idInPrompt(r.text, 'button', 'Save draft');
          // Between reading and acting the toolbar re-renders and the button is renamed: the id's
          // element is gone and nothing with the old role + name remains.
          await session.page.evaluate('window.rerender()');
          await session.page.evaluate(
            `document.querySelector('[data-act=save]').textContent = 'Save as draft'`,
          );
          return { json: { elementId: id, method: 'click', arguments: [], twoStep: false, reason: 'save' } };
        }
        const id = idInPrompt(r.text, 'button', 'Save as draft');
        return {
          json: { elementId: id, method: 'click', arguments: [], twoStep: false, reason: 'save again' },
        };
      });
      const logs: string[] = [];
      const res = await act(
        opContext(session, { llm: client(llm, 'openai'), log: (e) => logs.push(e.msg) }),
        'save my work as a draft',
      );
      expect(res.success).toBe(true);
      expect(calls).toBe(2);
      expect(logs.some((l) => l.includes('healing'))).toBe(true);
      expect(llm.requests[1]!.text).toContain('A previous attempt failed');
      expect(await session.page.locator('#status').textContent()).toBe('Draft saved');
    } finally {
      await session.close();
    }
  });

  it('reaches targets inside an iframe and a closed shadow root', async () => {
    const frames = await fixtureSession(browser, site, '/iframes.html');
    try {
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'button', 'Cross save'),
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'x',
        },
      }));
      const res = await act(
        opContext(frames, { llm: client(llm, 'anthropic') }),
        'save the partner note please',
      );
      expect(res.success).toBe(true);
      const cross = frames.page.frames().find((f) => f.url().includes('cross-child'))!;
      expect(await cross.locator('#saved').textContent()).toBe('Saved: ');
    } finally {
      await frames.close();
    }
    const shadow = await fixtureSession(browser, site, '/shadow.html');
    try {
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'button', 'Closed shadow button'),
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'x',
        },
      }));
      const res = await act(
        opContext(shadow, { llm: client(llm, 'openai') }),
        'press the button in the consent widget',
      );
      expect(res.success).toBe(true);
      expect(await shadow.page.locator('#status').textContent()).toBe('Closed clicked, opt-in false');
    } finally {
      await shadow.close();
    }
  });

  it('refuses an id the snapshot never showed, with the closest candidates', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      llm.setHandler(() => ({
        json: { elementId: 4242, method: 'click', arguments: [], twoStep: false, reason: 'guess' },
      }));
      const err = await act(
        opContext(session, { llm: client(llm, 'openai'), options: { vision: 'never' } }),
        'sign me in now',
      ).catch((e) => e);
      expect(err).toBeInstanceOf(OpError);
      expect(err.kind).toBe('not_found');
      expect(err.message).toContain('[4242]');
      expect(await session.page.locator('#status').textContent()).toBe('');
    } finally {
      await session.close();
    }
  });

  it('retries with a screenshot when the model finds nothing in the outline (vision fallback)', async () => {
    const session = await fixtureSession(browser, site, '/dashboard.html');
    try {
      llm.setHandler((r) =>
        r.images > 0
          ? {
              json: {
                elementId: idInPrompt(r.text, 'button', 'Refresh'),
                method: 'click',
                arguments: [],
                twoStep: false,
                reason: 'seen',
              },
            }
          : {
              json: {
                elementId: null,
                method: 'click',
                arguments: [],
                twoStep: false,
                reason: 'cannot tell',
              },
            },
      );
      const res = await act(opContext(session, { llm: client(llm, 'openai') }), 'reload the chart data');
      expect(res.success).toBe(true);
      // The dashboard's DOM confidence is low, so the very first call already had the screenshot.
      expect(llm.requests[0]!.images).toBe(1);
    } finally {
      await session.close();
    }
  });

  it('survives a 429 and repairs a malformed reply', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      llm.push({ status: 429, headers: { 'retry-after-ms': '20' } }, { malformed: '{"elementId": "seven"}' });
      llm.setHandler((r) => ({
        json: {
          elementId: idInPrompt(r.text, 'link', 'Forgot password?'),
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'x',
        },
      }));
      const res = await act(opContext(session, { llm: client(llm, 'openai') }), 'I lost my password');
      expect(res.success).toBe(true);
      expect(res.usage.calls).toBe(2);
      expect(session.page.url()).toContain('/forgot.html');
      llm.setHandler(() => ({ malformed: 'not json at all' }));
      const err = await act(
        opContext(session, { llm: client(llm, 'openai') }),
        'I lost my password again',
      ).catch((e) => e);
      expect(err.kind).toBe('invalid_output');
      expect(err.message).toMatch(/wrong shape/);
    } finally {
      await session.close();
    }
  });

  it('runs a plain instruction with no model at all, and says how to configure one when it must', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      const ok = await act(opContext(session), 'click the Sign in button');
      expect(ok.resolvedBy).toBe('matcher');
      expect(ok.usage.promptTokens).toBe(0);
      expect(await session.page.locator('#status').textContent()).toBe('Signed in as ');
      const err = await act(opContext(session), 'log me in').catch((e) => e);
      expect(err.kind).toBe('no_model');
      expect(err.message).toContain('BROWSERFN_MODEL');
    } finally {
      await session.close();
    }
  });
});

describe('act after its caller was answered', () => {
  it('carries out nothing once the deadline passed or the client went away', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      const cancelled = new AbortController();
      cancelled.abort();
      const err = await act(
        { ...opContext(session), signal: cancelled.signal },
        'click the Sign in button',
      ).catch((e) => e);
      expect(err.kind).toBe('timeout');
      expect(await session.page.locator('#status').textContent()).toBe('');
    } finally {
      await session.close();
    }
  });
});

describe('observe', () => {
  it('lists matching elements that act then runs without a model call', async () => {
    const session = await fixtureSession(browser, site, '/products.html');
    try {
      llm.setHandler((r) => ({
        json: {
          elements: [
            {
              elementId: idInPrompt(r.text, 'link', 'Rain Jacket'),
              description: 'Rain Jacket product link',
              method: 'click',
              arguments: [],
            },
            { elementId: 99999, description: 'made up', method: 'click', arguments: [] },
          ],
        },
      }));
      const found = await observe(opContext(session, { llm: client(llm, 'openai') }), 'the rain jacket');
      expect(found.elements).toHaveLength(1);
      expect(found.elements[0]!.selector).toMatch(/^\/html\/body/);
      const before = llm.requests.length;
      const res = await act(opContext(session, { llm: client(llm, 'openai') }), found.elements[0]!);
      expect(res.success).toBe(true);
      expect(res.resolvedBy).toBe('direct');
      expect(llm.requests.length).toBe(before);
      expect(session.page.url()).toContain('/products/rain-jacket.html');
    } finally {
      await session.close();
    }
  });

  it('answers a plain description through the matcher even with a model, and asks the model when unsure', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      const before = llm.requests.length;
      const ctx = opContext(session, { llm: client(llm, 'openai') });
      const sure = await observe(ctx, 'the button that signs in');
      expect(sure.resolvedBy).toBe('matcher');
      expect(sure.elements.map((e) => `${e.role}:${e.name}`)).toEqual(['button:Sign in']);
      expect(sure.usage.promptTokens).toBe(0);
      expect(llm.requests.length).toBe(before);

      llm.setHandler((r) => ({
        json: {
          elements: [
            {
              elementId: idInPrompt(r.text, 'checkbox', 'Remember me'),
              description: 'stay signed in',
              method: 'check',
              arguments: [],
            },
          ],
        },
      }));
      const unsure = await observe(ctx, 'something to tick so that I stay signed in');
      expect(unsure.resolvedBy).toBe('llm');
      expect(unsure.elements.map((e) => `${e.role}:${e.name}`)).toEqual(['checkbox:Remember me']);
      expect(llm.requests.length).toBe(before + 1);
      // No %placeholder% in the instruction: the rule about them is not sent.
      expect(llm.requests.at(-1)!.system).not.toContain('%name%');
    } finally {
      await session.close();
    }
  });

  it('with no instruction lists every interactive element for free', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      const all = await observe(opContext(session));
      expect(all.elements.map((e) => `${e.role}:${e.name}`)).toEqual(
        expect.arrayContaining(['textbox:Email', 'button:Sign in', 'checkbox:Remember me']),
      );
      expect(all.elements.find((e) => e.name === 'Email')!.method).toBe('fill');
      expect(all.usage.promptTokens).toBe(0);
    } finally {
      await session.close();
    }
  });
});

describe('extract', () => {
  const Products = z.object({
    products: z.array(z.object({ name: z.string(), price: z.string(), url: z.string().url() })),
  });

  it('reads the product listing, with URLs taken from the real links', async () => {
    const session = await fixtureSession(browser, site, '/products.html');
    try {
      llm.setHandler((r) => ({
        json: {
          data: {
            products: [
              {
                name: 'Trail Runner Shoes',
                price: '$89.99',
                url: idInPrompt(r.text, 'link', 'Trail Runner Shoes'),
              },
              { name: 'First Aid Kit', price: '$29.99', url: idInPrompt(r.text, 'link', 'First Aid Kit') },
            ],
          },
          done: true,
        },
      }));
      const res = await extract(
        opContext(session, { llm: client(llm, 'openai') }),
        'every product with price and link',
        Products,
      );
      expect(res.data.products).toEqual([
        { name: 'Trail Runner Shoes', price: '$89.99', url: `${site.url}/products/trail-runner.html` },
        { name: 'First Aid Kit', price: '$29.99', url: `${site.url}/products/first-aid.html` },
      ]);
      // The model was asked for ids, never for URLs.
      const schema = JSON.stringify(llm.requests[0]!.body.response_format);
      expect(schema).not.toContain('"format":"uri"');
      expect(res.usage.promptTokens).toBeLessThan(3000);
    } finally {
      await session.close();
    }
  });

  it('refuses a URL field answered with an id that is not a link', async () => {
    const session = await fixtureSession(browser, site, '/products.html');
    try {
      llm.setHandler(() => ({
        json: { data: { products: [{ name: 'X', price: '$1', url: 777777 }] }, done: true },
      }));
      const err = await extract(
        opContext(session, { llm: client(llm, 'openai') }),
        'products',
        Products,
      ).catch((e) => e);
      expect(err.kind).toBe('model');
      expect(err.message).toContain('products.0.url');
    } finally {
      await session.close();
    }
  });

  it('reads a long page in parts and stops when the model says it is done', async () => {
    const session = await fixtureSession(browser, site, '/large.html');
    try {
      llm.setHandler((r) => ({
        json: { data: { extraction: 'Section 1: era 1510' }, done: r.text.includes('Section 1:') },
      }));
      const res = await extract(
        opContext(session, { llm: client(llm, 'openai'), options: { budget: 4000 } }),
        'the first section title',
      );
      expect(res.chunks.total).toBeGreaterThan(3);
      expect(res.chunks.read).toBe(1);
      expect(llm.requests).toHaveLength(1);
      expect(res.data).toEqual({ extraction: 'Section 1: era 1510' });
    } finally {
      await session.close();
    }
  });

  it('returns the page text with no instruction and no model call', async () => {
    const session = await fixtureSession(browser, site, '/login.html');
    try {
      const res = await extract(opContext(session));
      expect((res.data as { pageText: string }).pageText).toContain('button: Sign in');
      expect(res.usage.calls).toBe(0);
    } finally {
      await session.close();
    }
  });
});
