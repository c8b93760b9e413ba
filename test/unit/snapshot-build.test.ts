/**
 * Node's half of a snapshot (perception/build.ts), without a browser: a page's read as it arrives
 * becomes the outline a model reads, with the page-wide ids the caller hands out, the budget's cut,
 * and secrets masked everywhere they show.
 */
import { describe, expect, it } from 'vitest';
import { buildSnapshot } from '../../lib/perception/build.ts';
import type { PageElement, PageLine } from '../../lib/perception/injected/payload.ts';
import { shortHash } from '../../lib/perception/metrics.ts';
import type { FrameCollect } from '../../lib/perception/tree.ts';
import { packedRead } from '../support/snapshots.ts';

/** A sign-in page's read: a heading, a sentence, two fields, a button and a link per copy. */
function signInRead(copies: number, value?: string): FrameCollect[] {
  const lines: PageLine[] = [];
  const elements: PageElement[] = [];
  let top = 0;
  for (let k = 0; k < copies; k++) {
    const id = k * 4;
    top += 200;
    const y = top;
    lines.push(
      [0, 'h2', 0, 8 | 2, y, `Sign in ${k + 1}`],
      [1, 'Enter your details to continue.', 0, 2, y + 20, ''],
      [1, 'textbox', id + 1, 8 | 3, y + 40, 'Email'],
      [1, 'textbox', id + 2, 8 | 3, y + 70, 'Password'],
      [1, 'button', id + 3, 8 | 3, y + 100, 'Sign in'],
      [1, 'link', id + 4, 8 | 3, y + 130, 'Forgot password?'],
    );
    const field = (n: number, extra: PageElement[8]): PageElement => [
      id + n,
      '',
      '',
      'input',
      `/html/body/form[${k + 1}]/input[${n}]`,
      1 | 2 | 8,
      '',
      [10, y + 10 + 30 * n, 200, 20],
      extra,
    ];
    elements.push(
      field(1, value === undefined ? { inputType: 'email' } : { inputType: 'email', value }),
      field(2, { inputType: 'password' }),
      [id + 3, '', '', 'button', `/html/body/form[${k + 1}]/button`, 1 | 2 | 8, '', [10, y + 100, 80, 24], 0],
      [
        id + 4,
        '',
        '',
        'a',
        `/html/body/form[${k + 1}]/a`,
        1 | 2 | 8,
        `/reset/${k + 1}`,
        [10, y + 130, 120, 18],
        0,
      ],
    );
  }
  const read = packedRead(lines, elements, {
    url: 'https://shop.test/login',
    title: 'Sign in',
    docHeight: top + 300,
    nodes: 12 * copies,
    semantic: copies,
  });
  return [read];
}

/** Page-wide ids as snapshot.ts hands them out: here, the frame's own id plus 100. */
const plus100 = (_frame: number, local: number) => local + 100;

describe('building a snapshot from a read', () => {
  it('gives the outline with the ids the caller hands out, the links made absolute and the figures of what it shows', () => {
    const snap = buildSnapshot(signInRead(1), plus100, {});
    expect(snap.tree.split('\n')).toEqual([
      'h2: Sign in 1',
      '  Enter your details to continue.',
      '  [101] textbox: Email',
      '  [102] textbox: Password',
      '  [103] button: Sign in',
      '  [104] link: Forgot password?',
    ]);
    expect(snap.elements.map((e) => [e.id, e.role, e.name])).toEqual([
      [101, 'textbox', 'Email'],
      [102, 'textbox', 'Password'],
      [103, 'button', 'Sign in'],
      [104, 'link', 'Forgot password?'],
    ]);
    expect(snap.urls).toEqual({ '104': 'https://shop.test/reset/1' });
    expect(snap.stats).toMatchObject({ elements: 4, interactive: 4, lines: 6, nodes: 12 });
    expect(snap.contentHash).toBe(shortHash(snap.tree));
    expect(snap.complete).toBeUndefined();
  });

  it('keeps to a token budget: lines left out are said, and only what is shown can be named', () => {
    const whole = buildSnapshot(signInRead(30), plus100, {});
    const cut = buildSnapshot(signInRead(30), plus100, { budget: 200, keywords: ['password'] });
    expect(cut.stats.tokens).toBeLessThan(whole.stats.tokens);
    expect(cut.stats.omittedLines).toBeGreaterThan(0);
    expect(cut.omitted).toMatch(/^\(\d+ lines left out, \d+ of them interactive: token budget 200;/);
    expect(cut.tree.endsWith(cut.omitted!)).toBe(true);
    const shown = new Set([...cut.tree.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
    expect(cut.elements.map((e) => e.id).sort((a, b) => a - b)).toEqual([...shown].sort((a, b) => a - b));
    // Every element is still known, for a caller that needs one the model was not shown.
    expect(cut.complete).toHaveLength(whole.elements.length);
  });

  it('masks a secret wherever it shows, and hashes the masked text', () => {
    const plain = buildSnapshot(signInRead(1, 'ada@lovelace.test'), plus100, {});
    expect(JSON.stringify(plain)).toContain('ada@lovelace.test');
    const masked = buildSnapshot(signInRead(1, 'ada@lovelace.test'), plus100, {
      secrets: { login: 'ada@lovelace.test' },
    });
    expect(JSON.stringify(masked)).not.toContain('ada@lovelace.test');
    expect(masked.tree).toContain('%login%');
    expect(masked.contentHash).toBe(shortHash(masked.tree));
    expect(masked.contentHash).not.toBe(plain.contentHash);
  });

  it('builds the same snapshot from the same read', () => {
    expect(buildSnapshot(signInRead(3), plus100, { budget: 300 })).toEqual(
      buildSnapshot(signInRead(3), plus100, { budget: 300 }),
    );
  });
});
