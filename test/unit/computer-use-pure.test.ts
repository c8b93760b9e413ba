import { describe, expect, it } from 'vitest';
import {
  fitImage,
  parseChord,
  type ScreenFrame,
  toImage,
  toViewport,
} from '../../lib/actions/coordinates.ts';
import {
  anthropicAction,
  anthropicToolVersion,
  trimAnthropic,
} from '../../lib/llm/computer-use/anthropic.ts';
import { fromGrid, geminiAction, trimGemini } from '../../lib/llm/computer-use/google.ts';
import { resolveComputerUseModel } from '../../lib/llm/computer-use/index.ts';
import { openAiAction } from '../../lib/llm/computer-use/openai.ts';

const frame = (over: Partial<ScreenFrame> = {}): ScreenFrame => ({
  imageWidth: 1288,
  imageHeight: 711,
  viewportWidth: 1288,
  viewportHeight: 711,
  dpr: 1,
  ...over,
});

describe('coordinates', () => {
  it('maps image pixels to CSS pixels exactly at DPR 1 and 2 and from a downscaled picture', () => {
    expect(toViewport({ x: 100, y: 50 }, frame())).toEqual({ x: 100, y: 50 });
    // At DPR 2 the picture is captured at CSS size: the same point.
    expect(toViewport({ x: 100, y: 50 }, frame({ dpr: 2 }))).toEqual({ x: 100, y: 50 });
    const small = frame({ imageWidth: 644, imageHeight: 355.5, viewportWidth: 1288, viewportHeight: 711 });
    expect(toViewport({ x: 322, y: 100 }, small)).toEqual({ x: 644, y: 200 });
    expect(toImage(toViewport({ x: 321, y: 77 }, small), small)).toEqual({ x: 321, y: 77 });
    // A point at or past the edge stays inside the viewport.
    expect(toViewport({ x: 5000, y: -4 }, frame())).toEqual({ x: 1287, y: 0 });
  });

  it('fits a screenshot within a provider limit, never upscaling', () => {
    expect(fitImage(1288, 711, 1568, 1_150_000)).toEqual({ width: 1288, height: 711 });
    const big = fitImage(1600, 1000, 1568, 1_150_000);
    expect(big.width * big.height).toBeLessThanOrEqual(1_150_000);
    expect(big.width / big.height).toBeCloseTo(1.6, 2);
  });

  it('reads key chords the way each provider writes them', () => {
    expect(parseChord('ctrl+a')).toEqual(['Control', 'a']);
    expect(parseChord(['CTRL', 'SHIFT', 'T'])).toEqual(['Control', 'Shift', 'T']);
    expect(parseChord('Return')).toEqual(['Enter']);
    expect(parseChord('cmd+page_down')).toEqual(['Meta', 'PageDown']);
  });
});

describe('provider actions', () => {
  it('Anthropic: clicks, drags, scrolls, keys; the tool version follows the model', () => {
    expect(anthropicAction({ action: 'double_click', coordinate: [10, 20] }).actions).toEqual([
      { kind: 'click', at: { x: 10, y: 20 }, button: 'left', clicks: 2 },
    ]);
    expect(
      anthropicAction({ action: 'left_click_drag', start_coordinate: [1, 2], coordinate: [3, 4] }).actions,
    ).toEqual([
      {
        kind: 'drag',
        path: [
          { x: 1, y: 2 },
          { x: 3, y: 4 },
        ],
      },
    ]);
    expect(
      anthropicAction({ action: 'scroll', coordinate: [5, 5], scroll_direction: 'up', scroll_amount: 2 })
        .actions,
    ).toEqual([{ kind: 'scroll', at: { x: 5, y: 5 }, dx: 0, dy: -200 }]);
    expect(anthropicAction({ action: 'cursor_position' }).unsupported).toContain('cursor_position');
    expect(anthropicToolVersion('claude-sonnet-4')).toBe('computer_20250124');
    expect(anthropicToolVersion('claude-opus-4-5-20251101')).toBe('computer_20251124');
  });

  it('OpenAI: the Responses API action types', () => {
    expect(openAiAction({ type: 'keypress', keys: ['CTRL', 'A'] }).actions).toEqual([
      { kind: 'keys', chord: ['Control', 'A'] },
    ]);
    expect(openAiAction({ type: 'scroll', x: 1, y: 2, scroll_x: 0, scroll_y: 300 }).actions).toEqual([
      { kind: 'scroll', at: { x: 1, y: 2 }, dx: 0, dy: 300 },
    ]);
    expect(openAiAction({ type: 'click', button: 'back', x: 0, y: 0 }).actions).toEqual([{ kind: 'back' }]);
  });

  it('Gemini: the 1000-point grid scaled to the picture', () => {
    expect(fromGrid(500, 250, { width: 1288, height: 711 })).toEqual({ x: 644, y: 177.75 });
    const typed = geminiAction(
      'type_text_at',
      { x: 0, y: 0, text: 'hi', press_enter: true },
      { width: 100, height: 100 },
    );
    expect(typed.actions.map((a) => a.kind)).toEqual(['click', 'keys', 'keys', 'type', 'keys']);
    expect(geminiAction('search', {}, { width: 1, height: 1 }).unsupported).toContain('search');
  });

  it('keeps only the newest screenshots in a conversation', () => {
    const img = {
      type: 'image' as const,
      source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'x' },
    };
    const msgs = [1, 2, 3, 4, 5].map(() => ({ role: 'user' as const, content: [img] }));
    const kept = JSON.stringify(trimAnthropic(msgs, 3));
    expect(kept.match(/"type":"image"/g)).toHaveLength(3);
    const contents = [1, 2, 3, 4].map(() => ({
      role: 'user',
      parts: [{ inlineData: { mimeType: 'image/png', data: 'x' } }],
    }));
    expect(JSON.stringify(trimGemini(contents, 2)).match(/inlineData/g)).toHaveLength(2);
  });

  it('resolves the provider and its keys from the model name, and names a bad one', () => {
    const c = resolveComputerUseModel('google/gemini-2.5-computer-use-preview-10-2025', {
      GEMINI_API_KEY: 'g',
    });
    expect(c).toMatchObject({ provider: 'google', apiKey: 'g' });
    expect(() => resolveComputerUseModel('mistral/x', {})).toThrow(/anthropic, openai, google/);
  });
});
