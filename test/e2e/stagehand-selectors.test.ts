import { Stagehand } from '@browserbasehq/stagehand';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { observe } from '../../lib/ops/observe.ts';
import { SnapshotError, snapshot } from '../../lib/perception/snapshot.ts';
import { type StagehandEnv, startStagehandEnv } from '../support/stagehand-env.ts';

/**
 * The selectors real Stagehand scripts pass, through the unchanged SDK: the scope of observe and
 * extract as XPath or CSS (falling back to the whole page, as the SDK does, when it finds nothing),
 * `ignoreSelectors`, and hand-written actions that name their element by CSS.
 */

let env: StagehandEnv;
let sh: Stagehand;
/** What the script's logger was handed. */
const logs: { message: string; level?: number }[] = [];

beforeAll(async () => {
  env = await startStagehandEnv();
  sh = new Stagehand({
    env: 'BROWSERBASE',
    apiKey: 'key-a',
    model: { modelName: 'openai/gpt-4.1-mini', apiKey: 'sk-test' },
    verbose: 1,
    disablePino: true,
    logger: (line) => {
      logs.push({ message: line.message, level: line.level });
    },
  });
  await sh.init();
});

afterAll(async () => {
  await sh?.close();
  await env?.close();
});

const page = () => sh.context.pages()[0]!;
const open = (path: string) => page().goto(`${env.site.url}/${path}`);
const descriptions = (found: { description: string }[]) => found.map((f) => f.description).join('\n');

describe('the scope of observe and extract', () => {
  it('extract with an xpath= selector reads only that part of the page', async () => {
    await open('login.html');
    const { pageText } = (await sh.extract({ selector: 'xpath=/html/body/main' })) as { pageText: string };
    expect(pageText).toContain('Sign in to Acme');
    expect(pageText).toContain('Remember me');
    // The header's links and the footer are outside <main>.
    expect(pageText).not.toContain('Create an account');
    expect(pageText).not.toContain('Acme Corp');

    // With an instruction, the model is shown that part only.
    env.llm.setHandler((r) => ({
      json: { data: { heading: 'Sign in to Acme', footer: /Acme Corp/.test(r.text) }, done: true },
    }));
    const data = await sh.extract(
      'the heading, and whether a copyright line is shown',
      z.object({ heading: z.string(), footer: z.boolean() }),
      {
        selector: '/html/body/main',
      },
    );
    expect(data).toEqual({ heading: 'Sign in to Acme', footer: false });
    expect(env.llm.requests.at(-1)?.text).toContain('Sign in to Acme');
    expect(env.llm.requests.at(-1)?.text).not.toContain('Create an account');
  });

  it('observe with a bare XPath selector lists only the elements inside it', async () => {
    await open('products.html');
    const found = await sh.observe({ selector: '(//div[@class="card"])[2]' });
    const text = descriptions(found);
    expect(text).toContain('Canvas Backpack');
    expect(text).toContain('Add to cart');
    expect(found).toHaveLength(2);
    expect(text).not.toContain('Trail Runner Shoes');
    expect(text).not.toContain('Sort by');

    const inForm = await sh.observe({ selector: '//main' });
    expect(descriptions(inForm)).toMatch(/combobox "Sort by"/);
    expect(descriptions(inForm)).not.toMatch(/link "Sign in"/);
  });

  it('a selector that matches nothing, or is not valid, reads the whole page and says so in the log', async () => {
    await open('login.html');
    logs.length = 0;
    const found = await sh.observe({ selector: 'xpath=/html/body/aside' });
    const text = descriptions(found);
    // The header's links and the form's controls: the whole page.
    expect(text).toMatch(/link "Create an account"/);
    expect(text).toMatch(/button "Sign in"/);
    expect(logs.map((l) => l.message).join('\n')).toMatch(
      /selector xpath=\/html\/body\/aside matched nothing.*whole page/,
    );

    const { pageText } = (await sh.extract({ selector: '#no-such-element' })) as { pageText: string };
    expect(pageText).toContain('Acme Corp');
    expect(pageText).toContain('Sign in to Acme');

    const invalid = (await sh.extract({ selector: '//main[' })) as { pageText: string };
    expect(invalid.pageText).toContain('Acme Corp');
  });

  it('ignoreSelectors hide elements from observe, by CSS and by XPath', async () => {
    await open('login.html');
    const all = descriptions(await sh.observe());
    expect(all).toMatch(/textbox "Password"/);
    expect(all).toMatch(/link "Create an account"/);

    const found = await sh.observe({ ignoreSelectors: ['#password', 'xpath=/html/body/header'] });
    const text = descriptions(found);
    expect(text).not.toMatch(/Password/);
    expect(text).not.toMatch(/Create an account/);
    expect(text).toMatch(/textbox "Email"/);
    expect(text).toMatch(/button "Sign in"/);

    const { pageText } = (await sh.extract({ ignoreSelectors: ['footer'] })) as { pageText: string };
    expect(pageText).not.toContain('Acme Corp');
    expect(pageText).toContain('Sign in to Acme');
  });
});

describe('hand-written actions', () => {
  it('act with a CSS selector fills the field', async () => {
    await open('login.html');
    const asked = env.llm.requests.length;
    const result = await sh.act({
      selector: '#password',
      method: 'fill',
      arguments: ['s3cret-by-css'],
      description: 'the password field',
    });
    expect(result.success).toBe(true);
    expect(env.llm.requests.length).toBe(asked);
    expect(await page().evaluate(() => (document.getElementById('password') as HTMLInputElement).value)).toBe(
      's3cret-by-css',
    );
  });

  it('a CSS selector reaches into a shadow root after >>, and XPath still works as before', async () => {
    await open('shadow.html');
    const inShadow = await sh.act({
      selector: 'signup-card >> #se',
      method: 'fill',
      arguments: ['css@shadow.test'],
      description: 'the shadow email',
    });
    expect(inShadow.success).toBe(true);
    const byXPath = await sh.act({
      selector: 'xpath=/html/body/main/signup-card >> /div/button',
      method: 'click',
      arguments: [],
      description: 'the shadow submit',
    });
    expect(byXPath.success).toBe(true);
    expect(await page().evaluate(() => document.getElementById('status')?.textContent)).toBe(
      'Shadow submitted: css@shadow.test',
    );
  });
});

describe('browserfn’s own reads', () => {
  it('take XPath scopes too, but keep the clear error when a selector finds nothing', async () => {
    const context = await env.dbg.browser.newContext();
    try {
      const own = await context.newPage();
      await own.goto(`${env.site.url}/login.html`);
      const scoped = await snapshot(own, { selector: '//form', ignore: ['xpath=//label[@class="inline"]'] });
      expect(scoped.tree).toMatch(/textbox: Email/);
      expect(scoped.tree).not.toMatch(/Remember me|Sign in to Acme/);
      // The document itself is the whole page; a text node is no element to scope to.
      expect((await snapshot(own, { selector: 'xpath=/' })).tree).toContain('Acme Corp');
      await expect(snapshot(own, { selector: '//h1/text()' })).rejects.toThrow(
        /no element matches selector: \/\/h1\/text\(\)/,
      );
      const err = await observe({ page: own, options: { selector: '#no-such-element' } }).catch((e) => e);
      expect(err).toBeInstanceOf(SnapshotError);
      expect(String(err)).toMatch(/no element matches selector: #no-such-element/);
    } finally {
      await context.close();
    }
  });
});
