import { describe, expect, it } from 'vitest';
import { wireText } from '../../lib/perception/injected/wire-text.ts';
import { readText } from '../../lib/perception/read-text.ts';

const pastAscii = (s: string) => /[\u0080-\uffff]/.test(s);

/** What Node makes of what the page sent. */
const roundTrip = (value: unknown) => {
  const json = JSON.stringify(value);
  const sent = wireText(json);
  return { json, sent, back: readText(sent) };
};

describe('the read on its way out of the page (wireText) and back (readText)', () => {
  it('leaves pure ASCII as it is', () => {
    const { json, sent, back } = roundTrip({ lines: ['Sign in', 'Email\x7fPassword'] });
    expect(sent).toBe(json);
    expect(back).toBe(json);
  });

  it('escapes a few characters past ASCII: still JSON, read back exactly', () => {
    const value = {
      title: 'Café — Crème brûlée 🍰',
      edges: '\u0080 \u00a0 \u00ff \u0100 \uffff',
      filler: 'plain words '.repeat(40),
    };
    const { sent, back } = roundTrip(value);
    expect(pastAscii(sent)).toBe(false);
    expect(sent.startsWith('{')).toBe(true);
    expect(JSON.parse(back)).toEqual(value);
  });

  it('sends text mostly in another script as base64 of its UTF-8, read back exactly', () => {
    const value = { text: '请输入您的电子邮件地址和密码 Καλημέρα 🍰'.repeat(50), id: 'a1' };
    const { json, sent, back } = roundTrip(value);
    expect(pastAscii(sent)).toBe(false);
    expect(sent.startsWith('{')).toBe(false);
    expect(back).toBe(json);
  });

  it('switches to base64 when the sample missed how many there are', () => {
    // Dense where the every-61st sample never looks: the escaping stops at one in eight.
    // (The JSON text starts with a quote: unit i sits at i + 1.)
    const units = Array.from({ length: 6100 }, (_, i) =>
      (i + 1) % 61 === 0 ? 'a' : i % 3 === 0 ? 'é' : 'b',
    );
    const json = JSON.stringify(units.join(''));
    const sampled = Array.from({ length: Math.ceil(json.length / 61) }, (_, k) => json[k * 61]!);
    expect(sampled.some(pastAscii)).toBe(false);
    const sent = wireText(json);
    expect(sent.startsWith('"')).toBe(false);
    expect(pastAscii(sent)).toBe(false);
    expect(readText(sent)).toBe(json);
  });

  it('reads base64 the same without Node’s Buffer (the edge worker)', () => {
    const json = JSON.stringify({ text: 'Καλημέρα κόσμε, 密码 🍰'.repeat(20) });
    const sent = wireText(json);
    const saved = globalThis.Buffer;
    try {
      // @ts-expect-error: the edge worker has no Buffer
      delete globalThis.Buffer;
      expect(globalThis.Buffer).toBeUndefined();
      expect(readText(sent)).toBe(json);
    } finally {
      globalThis.Buffer = saved;
    }
  });
});
