/**
 * The walk's lines and elements travel packed (injected/wire.ts) and are read back in Node
 * (assemble.ts): what comes out must be what went in, whatever the page's text holds.
 */
import { describe, expect, it } from 'vitest';
import type { PageElement, PageLine, RawCollect } from '../../lib/perception/injected/payload.ts';
import { wire } from '../../lib/perception/injected/wire.ts';
import { assemble } from '../../lib/perception/tree.ts';

const { packWire } = wire();

/** Packed, sent as the page sends it (JSON), and assembled. */
function roundTrip(lines: PageLine[], elements: PageElement[], scrollY = 0) {
  const sent: RawCollect = {
    url: 'https://shop.test/',
    title: 't',
    ...packWire(lines, elements, scrollY),
    frames: [],
    fresh: true,
    viewport: { width: 1280, height: 800, scrollX: 0, scrollY, docHeight: 800 },
    counts: { nodes: 3, canvas: 0, canvasArea: 0, svgIcons: 0, unlabelled: 0, semantic: 0 },
  };
  const json = JSON.stringify(sent);
  const raw = JSON.parse(json) as RawCollect;
  const built = assemble([
    {
      raw,
      info: { index: 0, url: raw.url, xpath: '', offset: { x: 0, y: 0 } },
      clip: { x: 0, y: 0, w: 1280, h: 800 },
    },
  ]);
  return { json, ...built };
}

const el = (id: number, xpath: string, extra: Partial<Record<number, unknown>> = {}): PageElement => {
  const e: PageElement = [id, '', '', 'a', xpath, 1 | 2 | 8, '', [0, 10, 50, 20], 0];
  for (const [k, v] of Object.entries(extra)) (e as unknown[])[Number(k)] = v;
  return e;
};

describe('packed lines and elements', () => {
  it('read back as the lines and elements the walk made', () => {
    const lines: PageLine[] = [
      [0, 'list', 0, 8, 0, ''],
      [1, 'link', 1, 1 | 2 | 8, 10, 'First "offer"'],
      [1, 'Plain text with a \\ and ünïcödé', 0, 2, 10, ''],
      [1, 'h2', 7, 2 | 8, 30, 'Deals'],
      [2, 'frame', 3, 4 | 8, 2000, ''],
      [0, 'after it', 0, 0, 5, ''],
    ];
    const elements: PageElement[] = [
      el(1, '/html/body/main/ul/li[1]/a', { 6: '/p/1' }),
      el(7, '/html/body/main/h2', { 1: 'heading', 2: 'Deals', 3: 'h2', 5: 1, 6: '/p/10', 7: 0 }),
      el(3, '/html/body/main/ul/li[2]/iframe', {
        3: 'iframe',
        5: 2 | 8,
        6: 'https://other.test/x',
        8: { value: 'v', states: { checked: true } },
      }),
    ];
    const { lines: out, elements: els } = roundTrip(lines, elements);
    expect(out.map((l) => [l.depth, l.text, l.id, l.interactive, l.inViewport, l.top])).toEqual([
      [0, 'list\u0000', 0, false, false, 0],
      [1, 'link\u0000First "offer"', 1, true, true, 10],
      [1, 'Plain text with a \\ and ünïcödé', 0, false, true, 10],
      [1, 'h2\u0000Deals', 7, false, false, 30],
      [2, 'frame\u0000', 3, false, false, 2000],
      [0, 'after it', 0, false, false, 5],
    ]);
    expect(els).toEqual([
      {
        id: 1,
        role: 'link',
        name: 'First "offer"',
        tag: 'a',
        frame: 0,
        locator: { xpath: '/html/body/main/ul/li[1]/a', role: 'link', name: 'First "offer"' },
        inViewport: true,
        interactive: true,
        states: {},
        box: { x: 0, y: 10, width: 50, height: 20 },
        url: 'https://shop.test/p/1',
      },
      {
        id: 7,
        role: 'heading',
        name: 'Deals',
        tag: 'h2',
        frame: 0,
        locator: { xpath: '/html/body/main/h2', role: 'heading', name: 'Deals' },
        inViewport: false,
        interactive: false,
        states: {},
        url: 'https://shop.test/p/10',
      },
      {
        id: 3,
        role: 'frame',
        name: '',
        tag: 'iframe',
        frame: 0,
        locator: { xpath: '/html/body/main/ul/li[2]/iframe', role: 'frame', name: '' },
        inViewport: false,
        interactive: true,
        states: { checked: true },
        box: { x: 0, y: 10, width: 50, height: 20 },
        url: 'https://other.test/x',
        value: 'v',
      },
    ]);
  });

  it('carries no \\u0000 and no tuple brackets: the text is sent once, joined by DEL', () => {
    const lines: PageLine[] = Array.from({ length: 50 }, (_, i) => [
      1,
      'link',
      i + 1,
      8,
      i * 20,
      `Item ${i}`,
    ]);
    const elements = lines.map((l) => el(l[2], `/html/body/ul/li[${l[2]}]/a`));
    const { json, lines: out, elements: els } = roundTrip(lines, elements);
    expect(json).not.toContain('\\u0000');
    expect(out[49]!.text).toBe('link\u0000Item 49');
    expect(out[49]!.top).toBe(980);
    expect(els[49]!.locator.xpath).toBe('/html/body/ul/li[50]/a');
    // The same as JSON tuples (the form before, which sent each xpath past a shared prefix too):
    // quotes, brackets and a \u0000 on every line.
    const tuples = JSON.stringify({
      lines: lines.map((l) => [l[0], `${l[1]}\u0000${l[5]}`, l[2], l[3] & 7, l[4]]),
      elements: elements.map((e, i) => [
        e[0],
        '',
        '',
        e[3],
        [i ? 17 : 0, e[4].slice(i ? 17 : 0)],
        11,
        0,
        e[7],
        0,
      ]),
    });
    expect(json.length).toBeLessThan(tuples.length * 0.8);
  });

  it('keeps the parts apart when a text holds a DEL itself (it shows as U+FFFD)', () => {
    const { lines, elements } = roundTrip(
      [
        [0, 'odd\x7ftext', 0, 0, 0, ''],
        [0, 'button', 1, 1 | 8, 0, 'Go\x7f'],
      ],
      [el(1, '/html/body/button', { 3: 'button', 6: 'https://x.test/a\x7fb' })],
    );
    expect(lines.map((l) => l.text)).toEqual(['odd\ufffdtext', 'button\u0000Go\ufffd']);
    expect(elements[0]!.tag).toBe('button');
    expect(elements[0]!.name).toBe('Go\ufffd');
    expect(elements[0]!.url).toBe('https://x.test/a\ufffdb');
  });

  it('reads boxes back on a page scrolled by a fraction of a pixel, ids that jump too', () => {
    const { elements } = roundTrip(
      [
        [0, 'link', 5, 8, 1101, 'A'],
        [0, 'link', 2, 8, 1150, 'B'],
      ],
      [
        el(5, '/html/body/a[1]', { 7: [10, 1000, 300, 18] }),
        el(2, '/html/body/a[2]', { 7: [12, 1049, 280, 18] }),
      ],
      100.5,
    );
    expect(elements.map((e) => [e.id, e.box])).toEqual([
      [5, { x: 10, y: 1000, width: 300, height: 18 }],
      [2, { x: 12, y: 1049, width: 280, height: 18 }],
    ]);
  });

  it('reads an empty walk', () => {
    const { lines, elements } = roundTrip([], []);
    expect(lines).toEqual([]);
    expect(elements).toEqual([]);
  });
});
