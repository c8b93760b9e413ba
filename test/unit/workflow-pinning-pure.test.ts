/** The pure parts of pinned targets, heals, compile and export (no browser). */
import { describe, expect, it } from 'vitest';
import { attributeSelectors, candidatesFrom, looksGenerated } from '../../lib/perception/candidates.ts';
import { appearedLine } from '../../lib/perception/recording.ts';
import { InputLifter, pinnedNode, urlPattern } from '../../lib/workflows/compile-steps.ts';
import { ExportError, exportPlaywright } from '../../lib/workflows/export-playwright.ts';
import { parseField, sameData } from '../../lib/workflows/extractor.ts';
import { applyHeals, mergeCandidates } from '../../lib/workflows/heal.ts';
import { judgePostConditions, urlMatches } from '../../lib/workflows/postconditions.ts';
import { type LocatorCandidate, type Workflow, WorkflowSchema } from '../../lib/workflows/schema.ts';
import { identities, looksLike } from '../../lib/workflows/target-match.ts';
import type { HealRecord } from '../../lib/workflows/types.ts';

describe('locator candidates', () => {
  it('tells generated ids from ones people chose', () => {
    for (const id of [':r1:', 'ember123', 'btn-8f3a1c', 'mui-42-input', 'a1b2c3d4', 'field_20231104'])
      expect(looksGenerated(id), id).toBe(true);
    for (const id of ['qty', 'add-to-cart', 'gift', 'search-box', 'email2'])
      expect(looksGenerated(id), id).toBe(false);
  });

  it('orders candidates: stable attributes, role + name, text, then the XPath chain', () => {
    const locator = { xpath: '/html/body/form/button', role: 'button', name: 'Add to cart' };
    const attrs = {
      tag: 'button',
      id: 'add',
      testId: { attr: 'data-testid', value: 'buy' },
      text: 'Add to cart now',
      unique: ['[data-testid="buy"]', '#add'],
      uniqueText: true,
    };
    expect(attributeSelectors(attrs)).toEqual(['[data-testid="buy"]', '#add']);
    expect(candidatesFrom(locator, attrs)).toEqual([
      { kind: 'css', value: '[data-testid="buy"]' },
      { kind: 'css', value: '#add' },
      { kind: 'role', role: 'button', name: 'Add to cart' },
      { kind: 'text', text: 'Add to cart now', tag: 'button' },
      { kind: 'xpath', value: '/html/body/form/button' },
    ]);
    // Inside a shadow root or iframe only the chain reaches it.
    expect(candidatesFrom({ ...locator, xpath: '/html/body/x-app >> /div/button' }, attrs)).toEqual([
      { kind: 'xpath', value: '/html/body/x-app >> /div/button' },
    ]);
    // A generated id never becomes a candidate.
    expect(attributeSelectors({ tag: 'button', id: 'btn-8f3a1c' })).toEqual([]);
  });

  it('judges "still the same element" loosely on the name, strictly on the kind of control', () => {
    const expectEmail = { role: 'textbox', name: 'Email' };
    expect(looksLike(expectEmail, { role: 'textbox', name: 'Email address' })).toBe(true);
    expect(looksLike(expectEmail, { role: 'searchbox', name: 'email' })).toBe(true);
    expect(looksLike(expectEmail, { role: 'button', name: 'Email' })).toBe(false);
    expect(looksLike(expectEmail, { role: 'textbox', name: 'Password' })).toBe(false);
    expect(
      looksLike({ role: 'button', name: 'Add to cart' }, { role: 'button', name: 'Add to cart ›' }),
    ).toBe(true);
    // A healed target accepts the identity of each template it was seen on.
    const target = {
      instruction: 'the quantity field',
      expect: { role: 'spinbutton', name: 'Quantity' },
      candidates: [{ kind: 'role' as const, role: 'spinbutton', name: 'How many?' }],
    };
    expect(identities(target)).toEqual([
      { role: 'spinbutton', name: 'Quantity' },
      { role: 'spinbutton', name: 'How many?' },
    ]);
  });
});

describe('post-conditions', () => {
  it('records as "text appeared" only a new line of words: no digits, no secrets', () => {
    expect(
      appearedLine(['Cart', 'Total $5'], ['Cart', 'Total $7', '2 items added', 'Saved to your list']),
    ).toBe('Saved to your list');
    expect(appearedLine(['a'], ['Welcome back, hunter2'], { pw: 'hunter2' })).toBeUndefined();
    expect(appearedLine(['Cart'], ['Cart'])).toBeUndefined();
  });

  it('matches URL globs on the whole URL, * only', () => {
    expect(urlMatches('*/cart*', 'http://127.0.0.1:9/cart?id=1')).toBe(true);
    expect(urlMatches('*/cart*', 'http://127.0.0.1:9/product/1')).toBe(false);
    expect(urlMatches('https://a.test/p.html', 'https://a.test/pxhtml')).toBe(false);
  });

  it('names what failed and never shows a secret value', () => {
    const failures = judgePostConditions(
      [
        { kind: 'url', pattern: '*/done' },
        { kind: 'element', selector: '.ok', present: true },
        { kind: 'value', equals: '%pw%' },
        { kind: 'checked', equals: true },
        { kind: 'text', contains: 'Welcome' },
      ],
      {
        url: 'http://x/login',
        elements: { '.ok': false },
        value: 'hunter22',
        checked: false,
        texts: { Welcome: false },
      },
      { pw: 'hunter2' },
    );
    expect(failures.map((f) => f.saw)).toEqual([
      'the URL is http://x/login',
      'nothing matches .ok',
      'the value is "%pw%2"',
      'it is not checked',
      '"Welcome" is not on the page',
    ]);
    expect(
      judgePostConditions(
        [{ kind: 'value', equals: '%pw%' }],
        { url: '', elements: {}, texts: {}, value: 'hunter2' },
        { pw: 'hunter2' },
      ),
    ).toEqual([]);
  });
});

const cand = (value: string): LocatorCandidate => ({ kind: 'css', value });

function doc(): Workflow {
  return WorkflowSchema.parse({
    name: 'buy',
    nodes: [
      { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
      {
        alias: 'press_buy',
        type: 'browser_action',
        config: {
          action: 'click',
          target: {
            instruction: 'the Buy button',
            candidates: [cand('#buy'), { kind: 'xpath', value: '/html/body/button' }],
          },
        },
      },
      {
        alias: 'box',
        type: 'group',
        config: {
          nodes: [
            {
              alias: 'agree',
              type: 'browser_action',
              config: {
                action: 'check',
                target: { instruction: 'the terms box', candidates: [cand('#terms')] },
              },
            },
          ],
        },
      },
    ],
  });
}

const heal = (over: Partial<HealRecord>): HealRecord => ({
  alias: 'press_buy',
  path: 'nodes.1',
  url: 'http://x/',
  old: [cand('#buy')],
  new: [cand('#purchase'), { kind: 'role', role: 'button', name: 'Buy now' }],
  via: 'matcher',
  reason: 'no candidate held',
  confirmed: true,
  ...over,
});

describe('applyHeals', () => {
  it('writes confirmed heals as the next version: new candidates first, old ones kept after', () => {
    const wf = doc();
    const next = applyHeals(wf, [
      heal({}),
      heal({ alias: 'agree', path: 'nodes.2.config.nodes.0', new: [cand('#tos')] }),
    ])!;
    expect(next.version).toBe(2);
    expect(
      (next.nodes[1]!.config as { target: { candidates: LocatorCandidate[] } }).target.candidates,
    ).toEqual([
      cand('#purchase'),
      { kind: 'role', role: 'button', name: 'Buy now' },
      cand('#buy'),
      { kind: 'xpath', value: '/html/body/button' },
    ]);
    const group = next.nodes[2]!.config as {
      nodes: { config: { target: { candidates: LocatorCandidate[] } } }[];
    };
    expect(group.nodes[0]!.config.target.candidates).toEqual([cand('#tos'), cand('#terms')]);
    // The input document is untouched.
    expect(wf.version).toBe(1);
    expect(
      (wf.nodes[1]!.config as { target: { candidates: LocatorCandidate[] } }).target.candidates[0],
    ).toEqual(cand('#buy'));
  });

  it('never writes an unconfirmed heal, nor one that names another node', () => {
    const wf = doc();
    expect(applyHeals(wf, [heal({ confirmed: false })])).toBeUndefined();
    expect(applyHeals(wf, [heal({ alias: 'someone_else' })])).toBeUndefined();
    expect(applyHeals(wf, [heal({ path: 'nodes.0' })])).toBeUndefined();
    expect(applyHeals(wf, [])).toBeUndefined();
  });

  it('keeps within the cap of 12 candidates, dropping old positions before old attributes', () => {
    const old = [
      ...Array.from({ length: 8 }, (_, i) => cand(`#o${i}`)),
      { kind: 'xpath' as const, value: '/a' },
    ];
    const fresh = Array.from({ length: 5 }, (_, i) => cand(`#n${i}`));
    const merged = mergeCandidates(fresh, old);
    expect(merged).toHaveLength(12);
    expect(merged.slice(0, 5)).toEqual(fresh);
    expect(merged).not.toContainEqual({ kind: 'xpath', value: '/a' });
  });
});

describe('compile pieces', () => {
  it('turns URLs into patterns for the same kind of page', () => {
    expect(urlPattern('http://127.0.0.1:5/cart?id=3&qty=2')).toBe('*/cart*');
    expect(urlPattern('https://shop.test/product/123')).toBe('*/product/*');
    expect(urlPattern('https://shop.test/account/orders')).toBe('*/account/orders');
  });

  it('lifts values equal to a sample column into inputs and leaves secrets alone', () => {
    const lifter = new InputLifter({ email: 'ann@example.com', qty: '2' });
    expect(lifter.lift('ann@example.com')).toBe('{{inputs.email}}');
    expect(lifter.lift('%password%')).toBe('%password%');
    expect(lifter.lift('something else')).toBe('something else');
    expect(lifter.url('https://x.test/')).toBe('{{inputs.url}}');
    expect(Object.keys(lifter.inputs).sort()).toEqual(['email', 'url']);
  });

  it('records what the run saw as post-conditions', () => {
    const node = pinnedNode(
      'fill_email',
      {
        method: 'fill',
        role: 'textbox',
        name: 'Email',
        candidates: [cand('#email')],
        value: 'a@b.c',
        urlBefore: 'http://x/',
        after: { url: 'http://x/' },
      },
      '{{inputs.email}}',
    );
    expect(node.config).toEqual({
      action: 'fill',
      value: '{{inputs.email}}',
      target: {
        candidates: [cand('#email')],
        instruction: 'the "Email" field',
        expect: { role: 'textbox', name: 'Email' },
      },
      postconditions: [{ kind: 'value', equals: '{{inputs.email}}' }],
    });
  });
});

describe('extractor values', () => {
  it('parses numbers and yes/no words, and compares data with spaces collapsed', () => {
    expect(parseField(' $1,299.50 ', 'number')).toBe(1299.5);
    expect(parseField('Out of stock', 'boolean')).toBe(false);
    expect(parseField('In stock', 'boolean')).toBe(true);
    expect(parseField('maybe', 'boolean')).toBeNull();
    expect(parseField(null, 'string')).toBeNull();
    expect(sameData({ a: 'x  y', b: [1] }, { b: [1], a: 'x y' })).toBe(true);
    expect(sameData({ a: 1 }, { a: '1' })).toBe(false);
  });
});

describe('export', () => {
  it('refuses steps it cannot run without the engine or a model, by name', () => {
    const wf = WorkflowSchema.parse({
      name: 'x',
      nodes: [
        { alias: 'think', type: 'browser_ai_query', config: { method: 'extract', instruction: 'the price' } },
      ],
    });
    expect(() => exportPlaywright(wf)).toThrow(
      new ExportError(
        'think: a browser_ai_query step needs a model and cannot be exported to a standalone script',
      ),
    );
  });

  it('never writes a secret into the script: %name% is read from the environment', () => {
    const wf = WorkflowSchema.parse({
      name: 'login',
      nodes: [
        {
          alias: 'pw',
          type: 'browser_action',
          config: {
            action: 'fill',
            value: '%password%',
            target: { instruction: 'the password field', candidates: [cand('#pw')] },
          },
        },
      ],
    });
    const script = exportPlaywright(wf);
    expect(script).toContain('withSecrets(`%password%`)');
    expect(script).toContain("process.env['SECRET_' + name.toUpperCase()]");
  });
});
