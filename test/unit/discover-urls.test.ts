import { describe, expect, it } from 'vitest';
import { discoveredSamples } from '../../lib/runs/discover/item-source.ts';
import {
  compilePattern,
  makeUrlTest,
  nextPageUrl,
  normalizeUrl,
  type PagerLink,
  UrlSet,
} from '../../lib/runs/discover/urls.ts';

describe('normalizeUrl', () => {
  it('gives one spelling per page', () => {
    const same = [
      'HTTP://Shop.Example.test:80/items/1/?b=2&a=1#top',
      'http://shop.example.test/items/1?a=1&b=2&utm_source=x',
      'http://shop.example.test/items/1?utm_medium=y&b=2&fbclid=z&a=1',
    ].map((u) => normalizeUrl(u));
    expect(new Set(same).size).toBe(1);
    expect(same[0]).toBe('http://shop.example.test/items/1?a=1&b=2');
    expect(normalizeUrl('/p/2', 'https://a.test/list')).toBe('https://a.test/p/2');
    expect(normalizeUrl('https://a.test/')).toBe('https://a.test/');
  });

  it('drops what is not a web page', () => {
    for (const u of ['javascript:void(0)', 'mailto:a@b.test', 'file:///etc/passwd', 'data:text/html,x'])
      expect(normalizeUrl(u, 'https://a.test/')).toBeUndefined();
  });
});

describe('patterns and filters', () => {
  it('reads globs and regular expressions', () => {
    expect(compilePattern('https://a.test/products/*').test('https://a.test/products/x.html')).toBe(true);
    expect(compilePattern('https://a.test/products/*').test('https://a.test/about')).toBe(false);
    expect(compilePattern('/item-\\d+\\.html$').test('https://a.test/products/item-12.html')).toBe(true);
  });

  it('keeps links of the listing host only unless told otherwise', () => {
    const keep = makeUrlTest({ include: '*/products/*' }, 'https://a.test/list');
    expect(keep('https://a.test/products/1')).toBe(true);
    expect(keep('https://b.test/products/1')).toBe(false);
    expect(makeUrlTest({ sameHost: false }, 'https://a.test/')('https://b.test/x')).toBe(true);
    expect(makeUrlTest({ exclude: '*/about*' }, 'https://a.test/')('https://a.test/about')).toBe(false);
  });

  it('stops at the cap and counts only new URLs', () => {
    const set = new UrlSet(3);
    expect(set.add(['a', 'b', 'a'])).toBe(2);
    expect(set.add(['b', 'c', 'd'])).toBe(1);
    expect(set.full).toBe(true);
    expect(set.urls).toEqual(['a', 'b', 'c']);
  });
});

describe('nextPageUrl', () => {
  const link = (href: string, text: string, rel = '', label = ''): PagerLink => ({ href, text, rel, label });
  const base = 'https://a.test/list?page=2';

  it('prefers rel=next, then a next word, then the following number', () => {
    const visited = new Set([normalizeUrl(base)!]);
    expect(nextPageUrl([link('?page=9', 'x', 'next'), link('?page=3', 'Next')], base, visited)).toBe(
      'https://a.test/list?page=9',
    );
    expect(nextPageUrl([link('?page=1', '1'), link('?page=3', 'Weiter')], base, visited)).toBe(
      'https://a.test/list?page=3',
    );
    expect(
      nextPageUrl([link('?page=1', '1'), link('?page=3', '3'), link('?page=4', '4')], base, visited, 2),
    ).toBe('https://a.test/list?page=3');
    expect(nextPageUrl([link('?page=3', '›', '', 'Next page')], base, visited)).toBe(
      'https://a.test/list?page=3',
    );
  });

  it('never offers a page twice, so loops end', () => {
    const visited = new Set(['https://a.test/list?page=3']);
    expect(nextPageUrl([link('?page=3', 'Next')], base, visited)).toBeUndefined();
    expect(nextPageUrl([link('?page=1', '1')], base, new Set(), 2)).toBeUndefined();
  });
});

describe('discovered samples', () => {
  it('get ids in discovery order that sort as text', () => {
    const samples = discoveredSamples(['u1', 'u2']);
    expect(samples).toEqual([
      { sampleId: 'd000001', url: 'u1' },
      { sampleId: 'd000002', url: 'u2' },
    ]);
  });
});
