/**
 * The walk's lines and elements travel packed (injected/wire.ts) and are read back in Node
 * (unpack.ts): what comes out must be what went in, whatever the page's text holds.
 */
import { describe, expect, it } from 'vitest';
import type {
  PackedElement,
  PageElement,
  PageLine,
  RawLine,
  WireCollect,
} from '../../lib/perception/injected/payload.ts';
import { wire } from '../../lib/perception/injected/wire.ts';
import { unpack } from '../../lib/perception/unpack.ts';

const { packWire } = wire();

/** Packed, sent as the page sends it (JSON), and read back. */
function roundTrip(lines: PageLine[], elements: PageElement[]) {
  const sent: WireCollect = {
    url: 'https://shop.test/',
    title: 't',
    ...packWire(lines, elements),
    frames: [],
    fresh: true,
    viewport: { width: 1280, height: 800, scrollX: 0, scrollY: 0, docHeight: 800 },
    counts: { nodes: 3, canvas: 0, canvasArea: 0, svgIcons: 0, unlabelled: 0, semantic: 0 },
  };
  const json = JSON.stringify(sent);
  return { json, raw: unpack(JSON.parse(json) as WireCollect) };
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
      el(7, '/html/body/main/h2', { 1: 'heading', 2: 'Deals', 5: 1, 6: '/p/10', 7: 0 }),
      el(3, '/html/body/main/ul/li[2]/iframe', {
        3: 'iframe',
        5: 8,
        6: 'https://other.test/x',
        8: { value: 'v', states: { checked: true } },
      }),
    ];
    const { raw } = roundTrip(lines, elements);
    expect(raw.lines).toEqual<RawLine[]>([
      [0, 'list\u0000', 0, 0, 0],
      [1, 'link\u0000First "offer"', 1, 3, 10],
      [1, 'Plain text with a \\ and ünïcödé', 0, 2, 10],
      [1, 'h2\u0000Deals', 7, 2, 30],
      [2, 'frame\u0000', 3, 4, 2000],
      [0, 'after it', 0, 0, 5],
    ]);
    expect(raw.elements).toEqual<PackedElement[]>([
      [1, '', '', 'a', '/html/body/main/ul/li[1]/a', 11, '/p/1', [0, 10, 50, 20], 0],
      [7, 'heading', 'Deals', 'a', '/html/body/main/h2', 1, '/p/10', 0, 0],
      [
        3,
        '',
        '',
        'iframe',
        '/html/body/main/ul/li[2]/iframe',
        8,
        'https://other.test/x',
        [0, 10, 50, 20],
        { value: 'v', states: { checked: true } },
      ],
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
    const { json, raw } = roundTrip(lines, elements);
    expect(json).not.toContain('\\u0000');
    expect(raw.lines[49]).toEqual([1, 'link\u0000Item 49', 50, 0, 980]);
    expect(raw.elements[49]![4]).toBe('/html/body/ul/li[50]/a');
    // The same as JSON tuples (the form before, but for its xpath deltas): quotes, brackets, \u0000.
    const tuples = JSON.stringify({ lines: raw.lines, elements: raw.elements });
    expect(json.length).toBeLessThan(tuples.length * 0.7);
  });

  it('keeps the parts apart when a text holds a DEL itself (it shows as U+FFFD)', () => {
    const { raw } = roundTrip(
      [
        [0, 'odd\x7ftext', 0, 0, 0, ''],
        [0, 'button', 1, 1 | 8, 0, 'Go\x7f'],
      ],
      [el(1, '/html/body/button', { 3: 'button', 6: '/x\x7fy' })],
    );
    expect(raw.lines).toEqual([
      [0, 'odd\ufffdtext', 0, 0, 0],
      [0, 'button\u0000Go\ufffd', 1, 1, 0],
    ]);
    expect(raw.elements[0]![3]).toBe('button');
    expect(raw.elements[0]![6]).toBe('/x\ufffdy');
  });

  it('reads an empty walk', () => {
    const { raw } = roundTrip([], []);
    expect(raw.lines).toEqual([]);
    expect(raw.elements).toEqual([]);
  });
});
