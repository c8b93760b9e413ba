/**
 * The shortcuts the in-page walk takes to be fast must give exactly what the slow way gives: the
 * packed payload decodes to the same elements, the whitespace fast path cleans like the regex, and
 * a link taken as written is the URL the parser would have made of it.
 */
import { describe, expect, it } from 'vitest';
import type { PageElement, PageLine } from '../../lib/perception/injected/payload.ts';
import { records } from '../../lib/perception/injected/record.ts';
import { semantics } from '../../lib/perception/injected/semantics.ts';
import { assemble, type FrameCollect } from '../../lib/perception/tree.ts';
import { packedRead } from '../support/snapshots.ts';

/** A frame as the page sends it (the walk's lines and elements packed, through JSON). */
const frame = (lines: PageLine[], elements: PageElement[]): FrameCollect =>
  packedRead(lines, elements, { url: 'https://shop.test/list?page=2', nodes: 3 });

describe('packed payload', () => {
  it('takes role and name from the line and rebuilds each xpath and url from the one before', () => {
    const { elements, lines } = assemble([
      frame(
        [
          [0, 'list', 0, 8, 0, ''],
          [1, 'link', 1, 3 | 8, 10, 'First offer'],
          [1, 'h2', 2, 3 | 8, 30, 'Deals'],
          [1, 'link', 3, 3 | 8, 50, 'Second offer'],
          [1, 'link', 4, 3 | 8, 70, 'Third offer'],
        ],
        [
          [1, '', '', 'a', '/html/body/main/ul/li[1]/a', 1 | 2 | 8, '/p/1', [0, 10, 50, 20], 0],
          // A heading's line shows h2, so its role travels itself.
          [2, 'heading', 'Deals', 'h2', '/html/body/main/h2', 1, '', [0, 30, 50, 20], 0],
          [
            3,
            '',
            '',
            'a',
            '/html/body/main/ul/li[2]/a',
            1 | 2 | 8,
            'https://other.test/x',
            [0, 50, 50, 20],
            0,
          ],
          [
            4,
            '',
            '',
            'a',
            '/html/body/main/ul/li[3]/a',
            1 | 2 | 8,
            'https://other.test/y',
            [0, 70, 50, 20],
            0,
          ],
        ],
      ),
    ]);
    expect(lines).toHaveLength(5);
    expect(lines.map((l) => [l.depth, l.text, l.id, l.top, l.parent])).toEqual([
      [0, 'list\u0000', 0, 0, -1],
      [1, 'link\u0000First offer', 1, 10, 0],
      [1, 'h2\u0000Deals', 2, 30, 0],
      [1, 'link\u0000Second offer', 3, 50, 0],
      [1, 'link\u0000Third offer', 4, 70, 0],
    ]);
    expect(elements.map((e) => [e.id, e.role, e.name, e.locator.xpath, e.url])).toEqual([
      [1, 'link', 'First offer', '/html/body/main/ul/li[1]/a', 'https://shop.test/p/1'],
      [2, 'heading', 'Deals', '/html/body/main/h2', undefined],
      [3, 'link', 'Second offer', '/html/body/main/ul/li[2]/a', 'https://other.test/x'],
      [4, 'link', 'Third offer', '/html/body/main/ul/li[3]/a', 'https://other.test/y'],
    ]);
    expect(elements[0]!.locator).toEqual({
      xpath: '/html/body/main/ul/li[1]/a',
      role: 'link',
      name: 'First offer',
    });
  });
});

describe('in-page shortcuts', () => {
  it('cleans whitespace exactly as collapsing every run and trimming does', () => {
    const { clean } = semantics();
    const slow = (s: string) => s.replace(/\s+/g, ' ').trim();
    const samples = [
      'plain words',
      ' leading',
      'trailing ',
      'two  spaces',
      'tab\there',
      'line\nbreak',
      '\u00a0nbsp\u00a0',
      'ide\u3000ographic',
      '\ufeffbom',
      '   ',
      'x',
      ' a b c ',
      'a \u2028 b',
    ];
    for (const s of samples) expect(clean(s), JSON.stringify(s)).toBe(slow(s));
    expect(clean(null)).toBe('');
  });

  it('takes a link as written only when the URL parser would give it back unchanged', () => {
    const docUrl = 'https://shop.test/list?page=2';
    const helpers = {
      ...semantics(),
      currentValue: () => undefined,
      statesOf: () => ({}),
      factsOf: () => undefined,
      xpathChain: () => '',
    } as unknown as Parameters<typeof records>[0];
    const { urlOf } = records(helpers);
    const link = (raw: string) =>
      ({
        localName: 'a',
        getAttribute: () => raw,
        // What the browser's href getter gives: the WHATWG parser, as Node's URL.
        get href() {
          return new URL(raw, docUrl).href;
        },
      }) as unknown as Element;
    const hrefs = [
      'https://example.org/source/12',
      'https://example.org/a/b.html?x=1&y=2#top',
      'https://Example.org/caps',
      'https://example.org',
      'https://example.org:443/port',
      'http://example.org:80/port',
      'http://0x7f.0.0.1/ip',
      'http://1.2.3/short-ip',
      'https://example.org/a/./b',
      'https://example.org/a/../b',
      'https://example.org/with space',
      'https://example.org/q?a=b c',
      "https://example.org/q?it's",
      'https://example.org/%7Euser',
      'https://exa_mple.org/x',
      '#section-2',
      '#with space',
      '#caf\u00e9',
      '#',
      'relative/path',
      '?page=3',
      '//cdn.example.org/x',
    ];
    for (const raw of hrefs) expect(urlOf(link(raw), false, docUrl), raw).toBe(new URL(raw, docUrl).href);
  });
});
