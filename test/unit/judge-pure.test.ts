import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { findBlocker } from '../../lib/judge/blockers.ts';
import { goalParts, keyPointsOf, settleByRule } from '../../lib/judge/key-points.ts';
import { differenceHash, hammingDistance, selectScreenshots } from '../../lib/judge/screenshots.ts';
import type { JudgeInput, KeyPointVerdict } from '../../lib/judge/types.ts';
import { combine } from '../../lib/judge/verdict.ts';

function png(draw: (x: number, y: number) => number, w = 120, h = 80): Uint8Array {
  const img = new PNG({ width: w, height: h });
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const v = draw(x, y);
      const i = (y * w + x) * 4;
      img.data[i] = v;
      img.data[i + 1] = v;
      img.data[i + 2] = v;
      img.data[i + 3] = 255;
    }
  return PNG.sync.write(img);
}

const input = (over: Partial<JudgeInput> = {}): JudgeInput => ({
  task: { goal: 'Read the price' },
  status: 'done',
  reason: 'done',
  data: { price: '$20' },
  steps: [
    { step: 1, url: 'https://a.test/', actions: [{ tool: 'goto', input: null, ok: true, outcome: 'ok' }] },
  ],
  screenshots: [],
  ...over,
});

const kp = (met: boolean | null, evidenceStep = 0): KeyPointVerdict => ({
  point: 'p',
  met,
  evidenceStep,
  why: 'w',
  decidedBy: 'model',
});

describe('key points', () => {
  it('splits a goal on sentences, semicolons and "then", never on "and"', () => {
    expect(goalParts('Open the page of salt and pepper. Then add it to the cart; screenshot it')).toEqual([
      'Open the page of salt and pepper',
      'add it to the cart',
      'screenshot it',
    ]);
  });

  it('settles fields, artifacts, schema and the expected answer without a model', () => {
    const task = {
      goal: 'Read the price',
      requiredFields: ['price', 'name'],
      requiredArtifacts: ['cart'],
      expectedAnswer: '$20',
      schema: { type: 'object', properties: { price: { type: 'string' } }, required: ['price'] },
    };
    const inp = input({ task });
    const points = keyPointsOf(task, undefined);
    const by = (kind: string, i = 0) => settleByRule(points.filter((p) => p.kind === kind)[i]!, i, inp);
    expect(by('field', 0)?.met).toBe(true);
    expect(by('field', 1)?.met).toBe(false);
    expect(by('artifact')?.met).toBe(false);
    expect(by('answer')?.met).toBe(true);
    expect(by('schema')?.met).toBe(true);
    expect(by('goal')).toBeUndefined();
    expect(
      settleByRule({ kind: 'answer', point: '' }, 0, input({ task: { goal: 'x', expectedAnswer: '$99' } })),
    ).toBeUndefined();
  });
});

describe('screenshots', () => {
  it('tells near-duplicates from different pages by their difference hash', () => {
    const wave = (x: number, y: number) => 128 + 100 * Math.sin(x / 9 + y / 13);
    const a = differenceHash(png(wave))!;
    // One pixel off: what a blinking caret or a clock changes between two shots of one page.
    const b = differenceHash(png((x, y) => wave(x, y) + (x === 5 && y === 5 ? 40 : 0)))!;
    const c = differenceHash(png((x, y) => 128 + 100 * Math.cos(x / 5 - y / 7)))!;
    expect(hammingDistance(a, b)).toBeLessThanOrEqual(5);
    expect(hammingDistance(a, c)).toBeGreaterThan(20);
    expect(differenceHash(new Uint8Array([1, 2, 3]))).toBeUndefined();
  });

  it('keeps the later of two near-duplicates and at most `max` shots', () => {
    const same = png((x, y) => 128 + 100 * Math.sin(x / 9 + y / 13));
    const other = png((x, y) => 128 + 100 * Math.cos(x / 5 - y / 7));
    const picked = selectScreenshots(
      [
        { file: '01_a.png', step: 1, png: same },
        { file: '02_a.png', step: 2, png: same },
        { file: '03_b.png', step: 3, png: other },
      ],
      [],
      [{ kind: 'goal', point: 'b' }],
      3,
    );
    expect(picked.map((s) => s.file)).toEqual(['02_a.png', '03_b.png']);
  });
});

describe('blockers', () => {
  it('calls a sample blocked only when it did not finish', () => {
    expect(findBlocker(input({ status: 'failed', reason: 'a reCAPTCHA blocks the page' })).blockedBy).toBe(
      'captcha',
    );
    expect(findBlocker(input({ status: 'failed', reason: 'login required to continue' })).blockedBy).toBe(
      'login',
    );
    expect(findBlocker(input({ status: 'done', reason: 'passed the captcha' })).blockedBy).toBe('none');
  });
});

describe('the verdict', () => {
  const none = { blockedBy: 'none' as const, step: 0 };
  const base = {
    impossibleTask: false,
    modelReasoning: '',
    screenshotsUsed: [],
    usage: { promptTokens: 0, completionTokens: 0, cachedTokens: 0, calls: 0 },
  };
  it('passes only a finished sample whose every point is met', () => {
    expect(combine({ ...base, input: input(), keyPoints: [kp(true)], blocker: none }).verdict).toBe('pass');
    expect(combine({ ...base, input: input(), keyPoints: [kp(true), kp(null)], blocker: none }).verdict).toBe(
      'uncertain',
    );
    const failed = combine({ ...base, input: input(), keyPoints: [kp(true), kp(false, 4)], blocker: none });
    expect(failed).toMatchObject({ verdict: 'fail', firstFailureStep: 4 });
  });
  it('fails an unfinished sample unless the evidence shows every point met', () => {
    const unfinished = input({ status: 'needs_review', reason: 'step budget used up' });
    expect(combine({ ...base, input: unfinished, keyPoints: [kp(null)], blocker: none }).verdict).toBe(
      'fail',
    );
    expect(combine({ ...base, input: unfinished, keyPoints: [kp(true)], blocker: none }).verdict).toBe(
      'uncertain',
    );
    expect(
      combine({
        ...base,
        input: unfinished,
        keyPoints: [kp(true)],
        blocker: { blockedBy: 'login', step: 1 },
      }),
    ).toMatchObject({
      verdict: 'fail',
      blockedBy: 'login',
      firstFailureStep: 1,
    });
  });
});
