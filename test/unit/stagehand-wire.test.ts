import { describe, expect, it } from 'vitest';
import { chooseModel, withProvider } from '../../lib/api/stagehand/models.ts';
import { AGENT_CALL_MS, callDeadlineMs } from '../../lib/api/stagehand/routes.ts';
import {
  ActBody,
  actionToSdk,
  flatVariables,
  NavigateBody,
  observedFromSdk,
  observedToSdk,
  WireError,
} from '../../lib/api/stagehand/wire.ts';
import type { ObservedElement } from '../../lib/ops/types.ts';

/** The Stagehand protocol's pure parts: wire shapes both ways, model choice, call deadlines. */

describe('wire shapes', () => {
  it('names our methods as the SDK does, so that it can replay what it stored', () => {
    const el = (method: ObservedElement['method'], args: string[], checked?: boolean) =>
      observedToSdk({
        id: 1,
        description: 'd',
        method,
        arguments: args,
        selector: '/html/body/x',
        role: '',
        name: '',
        ...(checked === undefined ? {} : { checked }),
      });
    expect(el('dblclick', [])).toMatchObject({ method: 'doubleClick', arguments: [] });
    expect(el('select', ['Red'])).toMatchObject({ method: 'selectOptionFromDropdown', arguments: ['Red'] });
    // A click does the same only where the box is in the other state; else the name stays.
    expect(el('check', [], false)).toMatchObject({ method: 'click', arguments: [] });
    expect(el('uncheck', [], true)).toMatchObject({ method: 'click', arguments: [] });
    expect(el('check', [], true)).toMatchObject({ method: 'check' });
    expect(el('uncheck', [], false)).toMatchObject({ method: 'uncheck' });
    expect(el('check', [])).toMatchObject({ method: 'check' });
    expect(el('scroll', ['down'])).toMatchObject({ method: 'nextChunk', arguments: [] });
    expect(el('scroll', ['UP'])).toMatchObject({ method: 'prevChunk', arguments: [] });
    expect(el('scroll', ['600px'])).toMatchObject({ method: 'scrollByPixelOffset', arguments: ['0', '600'] });
    expect(el('scroll', [])).toMatchObject({ method: 'scrollIntoView', arguments: [] });
    expect(el('scroll', ['bottom'])).toMatchObject({ method: 'scrollTo', arguments: ['100%'] });
    expect(el('scroll', ['40%'])).toMatchObject({ method: 'scrollTo', arguments: ['40%'] });
    expect(el('scroll', ['-600'])).toMatchObject({ method: 'scrollByPixelOffset', arguments: ['0', '-600'] });
    expect(el('fill', ['x'])).toMatchObject({
      method: 'fill',
      arguments: ['x'],
      selector: 'xpath=/html/body/x',
    });
    // Each comes back in as what it was (a check is a click: the SDK has no check).
    for (const [method, args] of [
      ['select', ['Red']],
      ['dblclick', []],
      ['scroll', ['-600']],
      ['scroll', ['40%']],
      ['scroll', ['down']],
      ['scroll', ['up']],
    ] as const) {
      const back = observedFromSdk(el(method, [...args]));
      expect(back).toMatchObject({ method, arguments: args });
    }
  });

  it('turns an observed action (Stagehand’s or ours) into one act replays', () => {
    expect(
      observedFromSdk({ selector: 'xpath=/html/body/button', method: 'click', description: 'the button' }),
    ).toEqual({
      id: 0,
      description: 'the button',
      method: 'click',
      arguments: [],
      selector: '/html/body/button',
      role: '',
      name: '',
    });
    expect(
      observedFromSdk({
        selector: '/html/body/select',
        method: 'selectOptionFromDropdown',
        arguments: ['Red'],
      }),
    ).toMatchObject({ method: 'select', arguments: ['Red'] });
    expect(observedFromSdk({ selector: '/html/body', method: 'nextChunk' })).toMatchObject({
      method: 'scroll',
      arguments: ['down'],
    });
    // The SDK reads a bare number as a percentage.
    expect(observedFromSdk({ selector: '/html/body', method: 'scrollTo', arguments: ['50'] })).toMatchObject({
      method: 'scroll',
      arguments: ['50%'],
    });
    expect(() => observedFromSdk({ selector: '/x', method: 'toString' })).toThrow(WireError);
    expect(
      observedFromSdk({ selector: '/html/body', method: 'mouse.wheel', arguments: ['-300'] }),
    ).toMatchObject({
      method: 'scroll',
      arguments: ['-300'],
    });
    expect(
      observedFromSdk({ selector: '/html/body', method: 'scrollByPixelOffset', arguments: ['0', '450'] }),
    ).toMatchObject({ method: 'scroll', arguments: ['+450'] });
    expect(observedFromSdk({ selector: '/html/body/a', method: 'tap' })).toMatchObject({ method: 'click' });
    expect(() => observedFromSdk({ selector: '/x', method: 'teleport' })).toThrow(WireError);
    expect(() => observedFromSdk({ selector: '/x', method: 'teleport' })).toThrow(/^input\.method: /);
  });

  it('answers actions in the SDK’s shape, placeholders and all', () => {
    expect(
      actionToSdk({
        method: 'fill',
        target: { locator: { xpath: '/html/body/input', role: 'textbox', name: 'Password' } },
        args: ['%pw%'],
        description: 'fill textbox "Password"',
      }),
    ).toEqual({
      selector: 'xpath=/html/body/input',
      description: 'fill textbox "Password"',
      method: 'fill',
      arguments: ['%pw%'],
      role: 'textbox',
      name: 'Password',
    });
  });

  it('flattens Stagehand variables and validates bodies naming the field', () => {
    expect(flatVariables({ a: 'x', b: 2, c: { value: true, description: 'flag' } })).toEqual({
      a: 'x',
      b: '2',
      c: 'true',
    });
    const bad = ActBody.safeParse({ input: 'x', options: { variables: { 'no spaces': 'v' } } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path.join('.')).toBe('options.variables.no spaces');
    expect(NavigateBody.safeParse({ url: 'https://a.test', options: {} }).success).toBe(true);
  });
});

describe('model choice', () => {
  const deps = (env: Record<string, string>) => ({ policy: { allowPrivate: false, allowHosts: [] }, env });

  it('uses the named model with the caller’s key', async () => {
    const c = await chooseModel(
      { call: undefined, session: 'openai/gpt-4.1-mini', headerKey: 'sk-caller' },
      deps({}),
    );
    expect(c.llm?.model).toBe('openai/gpt-4.1-mini');
  });

  it('falls back from "auto" or a keyless model to the server’s model, then to no model', async () => {
    const server = deps({ BROWSERFN_MODEL: 'anthropic/claude-haiku-4-5', ANTHROPIC_API_KEY: 'sk-server' });
    expect(
      (await chooseModel({ call: 'auto', session: undefined, headerKey: undefined }, server)).llm?.model,
    ).toBe('anthropic/claude-haiku-4-5');
    const keyless = await chooseModel(
      { call: undefined, session: 'openai/gpt-4.1-mini', headerKey: undefined },
      server,
    );
    expect(keyless.llm?.model).toBe('anthropic/claude-haiku-4-5');
    expect(keyless.note).toMatch(/no key for openai\/gpt-4.1-mini/);
    const none = await chooseModel({ call: undefined, session: 'auto', headerKey: undefined }, deps({}));
    expect(none.llm).toBeUndefined();
    expect(none.note).toMatch(/zero-token/);
  });

  it('says no to a model it cannot serve when the caller sent a key for it', async () => {
    await expect(
      chooseModel({ call: 'google/gemini-2.5-flash', session: undefined, headerKey: 'k' }, deps({})),
    ).rejects.toThrow(/model/);
  });
  it('gives the bare names the SDK still accepts their provider, and leaves the rest', () => {
    expect(withProvider('gpt-4.1-mini')).toBe('openai/gpt-4.1-mini');
    expect(withProvider('o4-mini')).toBe('openai/o4-mini');
    expect(withProvider('claude-haiku-4-5')).toBe('anthropic/claude-haiku-4-5');
    expect(withProvider('openai-compatible/llama3.1')).toBe('openai-compatible/llama3.1');
    expect(withProvider('gemini-2.0-flash')).toBe('gemini-2.0-flash');
  });

  it('says that a named model was replaced, and not when "auto" asked for the server’s', async () => {
    const server = deps({ BROWSERFN_MODEL: 'openai/gpt-4.1-mini', OPENAI_API_KEY: 'sk-server' });
    const keyless = await chooseModel(
      { call: undefined, session: 'google/gemini-2.5-flash', headerKey: undefined },
      server,
    );
    expect(keyless.llm?.model).toBe('openai/gpt-4.1-mini');
    expect(keyless.substituted).toBe(true);
    const auto = await chooseModel({ call: 'auto', session: undefined, headerKey: undefined }, server);
    expect(auto.substituted).toBe(false);
  });
});

describe('call deadlines', () => {
  it('give agent().execute() the agent’s own time, and every call the server’s or its own', () => {
    expect(callDeadlineMs('act', undefined, undefined)).toBe(120_000);
    expect(callDeadlineMs('agentExecute', undefined, undefined)).toBe(AGENT_CALL_MS);
    expect(AGENT_CALL_MS).toBeGreaterThan(10 * 60_000);
    expect(callDeadlineMs('agentExecute', undefined, 5000)).toBe(5000);
    expect(callDeadlineMs('observe', 2500, 5000)).toBe(2500);
  });
});
