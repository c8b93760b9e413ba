import type { Stagehand } from '@browserbasehq/stagehand';
import { describe, expect, it } from 'vitest';
import { lastUrlIn, openAiComputerReply } from '../support/cua-wire.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { type StagehandEnv, stagehandSuite } from '../support/stagehand-env.ts';

/**
 * Actions as the SDK stores, writes and replays them itself (its `cacheDir`, hand-written actions):
 * method names both ways, and scrolls that land where the SDK's own would.
 */

let env: StagehandEnv;
let a: Stagehand;

stagehandSuite({}, (e, s) => {
  env = e;
  a = s;
});

describe('results the SDK stores and replays itself', () => {
  it('name their methods as the SDK does: a checkbox is clicked, an option selected from a dropdown', async () => {
    const page = a.context.pages()[0]!;
    await page.goto(`${env.site.url}/signup.html`);
    env.llm.setHandler((r) => ({
      json: {
        elements: [
          {
            elementId: idInPrompt(r.text, 'checkbox', 'I accept the terms'),
            description: 'the terms box',
            method: 'check',
            arguments: [],
          },
        ],
      },
    }));
    const [box] = await a.observe('whatever says I agree to their conditions');
    expect(box?.method).toBe('click');
    env.llm.setHandler((r) => ({
      json: {
        elementId: idInPrompt(r.text, 'combobox', 'Country'),
        method: 'select',
        arguments: ['Sweden'],
        twoStep: false,
        reason: 'the country list',
      },
    }));
    const picked = await a.act('make the sign-up country the Scandinavian one east of Norway');
    expect(picked.success).toBe(true);
    expect(picked.actions[0]).toMatchObject({ method: 'selectOptionFromDropdown', arguments: ['Sweden'] });
    // Sent back as the SDK stored them, both replay with no model call.
    const asked = env.llm.requests.length;
    await page.evaluate(() => {
      (document.getElementById('country') as HTMLSelectElement).value = '';
    });
    expect((await a.act(picked.actions[0]!)).success).toBe(true);
    expect((await a.act(box!)).success).toBe(true);
    expect(env.llm.requests.length).toBe(asked);
    expect(await page.evaluate(() => (document.getElementById('country') as HTMLSelectElement).value)).toBe(
      'se',
    );
    expect(
      await page.evaluate(() => (document.querySelector('input[name=terms]') as HTMLInputElement).checked),
    ).toBe(true);
  });

  it('takes the SDK’s own methods in a hand-written action, and says no without failing to the rest', async () => {
    const page = a.context.pages()[0]!;
    await page.goto(`${env.site.url}/login.html`);
    const tapped = await a.act({
      selector: 'xpath=/html/body/main/form/label[3]/input',
      description: 'remember me',
      method: 'tap',
      arguments: [],
    });
    expect(tapped.success).toBe(true);
    expect(
      await page.evaluate(() => (document.querySelector('input[name=remember]') as HTMLInputElement).checked),
    ).toBe(true);
    const dragged = await a.act({
      selector: 'xpath=/html/body/main/form/button',
      description: 'drag the button',
      method: 'dragAndDrop',
      arguments: ['xpath=/html/body/main/h1'],
    });
    expect(dragged.success).toBe(false);
    expect(dragged.message).toMatch(/dragAndDrop/);
  });
});

// The SDK converts zod v3 schemas with zod-to-json-schema, which writes a `$ref` to the first
// place it met a schema object wherever it meets it again: browserfn must resolve those.

describe('scrolling as the SDK writes it', () => {
  it('scrolls the page when the element named does not scroll itself', async () => {
    const page = a.context.pages()[0]!;
    await page.goto(`${env.site.url}/scroll.html`);
    const y = () => page.evaluate(() => Math.round(scrollY));
    expect(await y()).toBe(0);
    const offset = await a.act({
      selector: 'xpath=/html/body/main/section[2]/h2',
      description: 'a heading',
      method: 'scrollByPixelOffset',
      arguments: ['0', '400'],
    });
    expect(offset.success).toBe(true);
    expect(await y()).toBe(400);
    const wheel = await a.act({
      selector: 'xpath=/html/body',
      description: 'the page',
      method: 'mouse.wheel',
      arguments: ['300'],
    });
    expect(wheel.success).toBe(true);
    expect(await y()).toBe(700);
    // An element that scrolls itself still scrolls alone.
    await page.evaluate(() => {
      const log = document.getElementById('log')!;
      for (let i = 0; i < 40; i++)
        log.append(Object.assign(document.createElement('p'), { textContent: `entry ${i}` }));
    });
    await a.act({
      selector: 'xpath=//*[@id="log"]',
      description: 'the log',
      method: 'scrollByPixelOffset',
      arguments: ['0', '100'],
    });
    expect(await page.evaluate(() => document.getElementById('log')!.scrollTop)).toBe(100);
    expect(await y()).toBe(700);
  });
});

describe('agent({ mode: "cua" })', () => {
  it('in computer-use mode, a computer-use model drives the page by screenshots (Responses API)', async () => {
    await a.context.pages()[0]!.goto(`${env.site.url}/cua/canvas.html`);
    env.llm.setHandler((r) =>
      lastUrlIn(r).endsWith('#approved')
        ? openAiComputerReply(r, [], 'Approved the request.')
        : openAiComputerReply(r, [{ type: 'click', button: 'left', x: 480, y: 330 }]),
    );
    const before = env.llm.requests.length;
    const result = (await a
      .agent({ mode: 'cua', model: { modelName: 'openai/computer-use-preview', apiKey: 'sk-cua' } } as never)
      .execute({ instruction: 'approve the request', maxSteps: 4 })) as unknown as {
      success: boolean;
      completed: boolean;
      message: string;
      actions: { type: string }[];
      usage?: { input_tokens: number };
    };
    const sent = env.llm.requests.slice(before);
    expect(sent[0]!.path).toMatch(/\/responses$/);
    expect(sent[0]!.headers.authorization).toBe('Bearer sk-cua');
    expect(result.success).toBe(true);
    expect(result.completed).toBe(true);
    expect(result.message).toContain('Approved the request.');
    expect(result.actions.map((x) => x.type)).toContain('computer.click');
    expect(result.usage?.input_tokens).toBeGreaterThan(0);
    // The click landed: the session's own page is where the agent left it.
    expect(a.context.pages()[0]!.url()).toMatch(/#approved$/);
  });
});
