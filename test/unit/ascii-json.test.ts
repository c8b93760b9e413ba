import { describe, expect, it } from 'vitest';
import { asciiJson } from '../../lib/perception/injected/ascii.ts';

const pastAscii = (s: string) => /[\u0080-\uffff]/.test(s);

describe('asciiJson (the read on its way out of the page)', () => {
  it('leaves pure ASCII as it is', () => {
    const json = JSON.stringify({ lines: ['Sign in', 'Email\x7fPassword'] });
    expect(asciiJson(json)).toBe(json);
  });

  it('escapes a few characters past ASCII, and JSON reads them back exactly', () => {
    const value = {
      title: 'Café — Crème brûlée 🍰',
      edges: '\u0080 \u00a0 \u00ff \u0100 \uffff',
      filler: 'plain words '.repeat(40),
    };
    const json = JSON.stringify(value);
    const sent = asciiJson(json);
    expect(pastAscii(sent)).toBe(false);
    expect(JSON.parse(sent)).toEqual(value);
  });

  it('sends text mostly in another script as it is', () => {
    const json = JSON.stringify({ text: '请输入您的电子邮件地址和密码'.repeat(50), id: 'a1' });
    expect(asciiJson(json)).toBe(json);
  });

  it('sends it as it is when the sample missed how many there are', () => {
    // Dense where the every-61st sample never looks: the pass stops once one in eight is passed.
    // (The JSON text starts with a quote: unit i sits at i + 1.)
    const units = Array.from({ length: 6100 }, (_, i) =>
      (i + 1) % 61 === 0 ? 'a' : i % 3 === 0 ? 'é' : 'b',
    );
    const json = JSON.stringify(units.join(''));
    const sampled = Array.from({ length: Math.ceil(json.length / 61) }, (_, k) => json[k * 61]!);
    expect(sampled.some(pastAscii)).toBe(false);
    expect(asciiJson(json)).toBe(json);
  });
});
