import { describe, expect, it } from 'vitest';
import { diffSnapshots } from '../../lib/perception/diff.ts';
import { domConfidence, pageSignature, urlPattern } from '../../lib/perception/metrics.ts';
import { redactSecrets, redactText } from '../../lib/perception/redact.ts';
import { formatLine, selectBudget, selectChunk, type TreeLine } from '../../lib/perception/tree.ts';
import type { Snapshot, SnapshotElement } from '../../lib/perception/types.ts';

function el(id: number, role: string, name: string, extra: Partial<SnapshotElement> = {}): SnapshotElement {
  return {
    id,
    role,
    name,
    tag: 'div',
    frame: 0,
    locator: { xpath: `/html/body/x[${id}]`, role, name },
    inViewport: true,
    interactive: true,
    states: {},
    ...extra,
  };
}

function snap(elements: SnapshotElement[], tree: string, url = 'https://shop.test/p/123?b=2&a=1'): Snapshot {
  return {
    url,
    title: 't',
    tree,
    elements,
    urls: {},
    frames: [],
    stats: {
      nodes: 0,
      elements: elements.length,
      interactive: 0,
      lines: 0,
      chars: 0,
      tokens: 0,
      ms: 0,
      omittedLines: 0,
      omittedInteractive: 0,
    },
    signature: '',
    contentHash: '',
    confidence: 1,
  };
}

const line = (
  depth: number,
  text: string,
  id: number,
  parent: number,
  extra: Partial<TreeLine> = {},
): TreeLine => ({
  depth,
  text,
  id,
  interactive: id > 0,
  inViewport: true,
  top: 0,
  parent,
  ...extra,
});

describe('formatLine', () => {
  it('renders id, role, name, value, placeholder and states', () => {
    const e = el(3, 'textbox', 'Email', {
      value: 'ada@example.com',
      placeholder: 'you@x',
      states: { required: true },
    });
    expect(formatLine(line(1, 'textbox\u0000Email', 3, 0), e)).toBe(
      '  [3] textbox: Email value="ada@example.com" placeholder="you@x" required',
    );
  });
  it('shows checkbox state both ways and select options', () => {
    expect(
      formatLine(
        line(0, 'checkbox\u0000Remember', 1, -1),
        el(1, 'checkbox', 'Remember', { states: { checked: false } }),
      ),
    ).toBe('[1] checkbox: Remember unchecked');
    const sel = el(2, 'combobox', 'Size', { options: ['S', 'M', 'L'], value: 'M' });
    expect(formatLine(line(0, 'combobox\u0000Size', 2, -1), sel)).toBe(
      '[2] combobox: Size value="M" options=[S | M | L]',
    );
  });
  it('renders plain text lines as text', () => {
    expect(formatLine(line(2, 'Free shipping over $50', 0, -1), undefined)).toBe(
      '    Free shipping over $50',
    );
  });
});

describe('selectBudget', () => {
  const lines = [
    line(0, 'main\u0000', 0, -1),
    line(1, 'a long paragraph of text that is not interactive at all '.repeat(4), 0, 0, {
      inViewport: false,
    }),
    line(1, 'button\u0000Checkout', 7, 0, { inViewport: false }),
    line(1, 'link\u0000Help', 8, 0),
  ];
  const rendered = lines.map((l) => formatLine(l, undefined));
  it('keeps interactive lines before text and reports what it left out', () => {
    const sel = selectBudget(lines, rendered, 17);
    expect(sel.keep).toEqual([true, false, true, true]);
    expect(sel.omitted).toBe(1);
    expect(sel.omittedInteractive).toBe(0);
  });
  it('keyword matches win over plain interactive lines', () => {
    const sel = selectBudget(lines, rendered, 11, ['checkout']);
    expect(sel.keep[2]).toBe(true);
    expect(sel.keep[3]).toBe(false);
    expect(sel.omittedInteractive).toBe(1);
  });
  it("always brings a kept line's ancestors", () => {
    const sel = selectBudget(lines, rendered, 9, ['help']);
    expect(sel.keep[3]).toBe(true);
    expect(sel.keep[0]).toBe(true);
  });
  it('keeps an off-screen unnamed field with its label over links and text full of the task’s filler words', () => {
    // Issue 27: on real pages "type … into the email field" lost the login form below the fold to
    // lines matching "the" / "into" / "com" and to the links before it in reading order.
    const big = [
      line(0, 'main\u0000', 0, -1),
      ...Array.from({ length: 6 }, (_, k) =>
        line(1, `the offer of the week into the shop at example.com ${k}`, 0, 0, { inViewport: false }),
      ),
      ...Array.from({ length: 6 }, (_, k) =>
        line(1, `link\u0000Product ${k}`, 10 + k, 0, { inViewport: false }),
      ),
      line(1, 'E-mail', 0, 0, { inViewport: false }),
      line(1, 'textbox\u0000', 30, 0, { inViewport: false }),
    ];
    const text = big.map((l) => formatLine(l, undefined));
    const cost = (i: number) => Math.ceil(text[i]!.length / 3) + 0.25;
    const sel = selectBudget(big, text, cost(0) + cost(13) + cost(14) + 1, [
      'type',
      'ada',
      'example',
      'com',
      'into',
      'the',
      'email',
      'field',
    ]);
    expect(sel.keep[14]).toBe(true);
    expect(sel.keep[13]).toBe(true);
    expect(sel.omittedInteractive).toBe(6);
  });
});

describe('selectChunk', () => {
  it('keeps the band of the page and the ancestors of what is in it', () => {
    const lines = [
      line(0, 'main\u0000', 0, -1, { top: 0 }),
      line(1, 'first', 0, 0, { top: 100 }),
      line(1, 'second', 0, 0, { top: 900 }),
      line(1, 'third', 0, 0, { top: 1700 }),
    ];
    expect(selectChunk(lines, 1, 800).keep).toEqual([true, false, true, false]);
  });
});

describe('diffSnapshots', () => {
  it('lists the elements and text that appeared', () => {
    const before = snap([el(1, 'button', 'Choose a colour')], '[1] button: Choose a colour\nPick one');
    const after = snap(
      [el(1, 'button', 'Choose a colour'), el(2, 'option', 'Red'), el(3, 'option', 'Green')],
      '[1] button: Choose a colour\nPick one\n  listbox\n    [2] option: Red\n    [3] option: Green',
    );
    const diff = diffSnapshots(before, after);
    expect(diff.added.map((e) => e.name)).toEqual(['Red', 'Green']);
    expect(diff.tree).toBe('listbox\n  [2] option: Red\n  [3] option: Green');
    expect(diff.changed).toBe(true);
  });
  it('says nothing changed for the same page', () => {
    const a = snap([el(1, 'button', 'Go')], '[1] button: Go');
    expect(diffSnapshots(a, a).changed).toBe(false);
  });
});

describe('redactSecrets', () => {
  it('replaces secret values everywhere with their names, longest first', () => {
    const s = snap(
      [el(1, 'textbox', 'Email', { value: 'ada@example.com' })],
      '[1] textbox: Email value="ada@example.com"',
    );
    redactSecrets(s, { email: 'ada@example.com', user: 'ada' });
    expect(s.tree).toBe('[1] textbox: Email value="%email%"');
    expect(s.elements[0]!.value).toBe('%email%');
    expect(JSON.stringify(s)).not.toContain('ada@example.com');
    expect(redactText('hello ada', { user: 'ada' })).toBe('hello %user%');
  });

  it('also scrubs the elements a budget left out of the outline', () => {
    const shown = el(1, 'textbox', 'Email', { value: 'ada@example.com' });
    const left = el(2, 'textbox', 'Confirm', { value: 'ada@example.com' });
    const s: Snapshot = { ...snap([shown], '[1] textbox: Email'), complete: [shown, left] };
    redactSecrets(s, { email: 'ada@example.com' });
    expect(s.complete!.map((e) => e.value)).toEqual(['%email%', '%email%']);
    expect(JSON.stringify(s)).not.toContain('ada@example.com');
  });
});

describe('page identity', () => {
  it('blurs ids and query values in the URL pattern', () => {
    expect(urlPattern('https://shop.test/p/123?b=2&a=1')).toBe('https://shop.test/p/*?a&b');
  });
  it('signature ignores text changes but sees new form fields', () => {
    const a = pageSignature('https://x.test/login', [el(1, 'textbox', 'Email'), el(2, 'button', 'Sign in')]);
    const b = pageSignature('https://x.test/login', [
      el(5, 'textbox', 'Email'),
      el(9, 'button', 'Log in now'),
    ]);
    const c = pageSignature('https://x.test/login', [el(1, 'textbox', 'Email'), el(3, 'textbox', 'Phone')]);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });
  it('confidence drops for canvas-heavy pages with unlabelled icons', () => {
    const frame = (counts: Partial<Record<string, number>>) => ({
      url: '',
      title: '',
      lt: '',
      ln: [],
      rl: [],
      et: '',
      en: [],
      ex: [],
      frames: [],
      fresh: false,
      viewport: { width: 1000, height: 800, scrollX: 0, scrollY: 0, docHeight: 800 },
      counts: { nodes: 100, canvas: 0, canvasArea: 0, svgIcons: 0, unlabelled: 0, semantic: 40, ...counts },
    });
    expect(domConfidence([frame({})], 20)).toBe(1);
    const low = domConfidence(
      [frame({ canvas: 1, canvasArea: 600_000, unlabelled: 6, svgIcons: 8, semantic: 5 })],
      10,
    );
    expect(low).toBeLessThan(0.6);
  });
});
