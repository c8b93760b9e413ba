/**
 * Google's Gemini computer use through `@google/genai`: the model calls predefined browser functions
 * (`click_at`, `type_text_at`, `key_combination`, `scroll_at`, `drag_and_drop`, `navigate`, …) with
 * coordinates on a 1000 × 1000 grid whatever the screenshot's size; each call is answered by a
 * function response carrying the page URL and the next screenshot.
 */
import { type Content, Environment, GoogleGenAI, type Part } from '@google/genai';
import type { CoordinateAction, Point } from '../../actions/coordinates.ts';
import { parseChord } from '../../actions/coordinates.ts';
import { toLlmError } from '../errors.ts';
import { costOf } from '../pricing.ts';
import type { Usage } from '../types.ts';
import {
  type ComputerCall,
  type ComputerUseConfig,
  type ComputerUseModel,
  type ConversationData,
  MAX_IMAGES_PER_REQUEST,
  type TurnInput,
} from './types.ts';

/** Gemini's grid: 0–999 on both axes. */
export const GEMINI_GRID = 1000;

const num = (v: unknown, fallback = 0) => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** A grid point → image pixels. */
export function fromGrid(x: unknown, y: unknown, image: { width: number; height: number }): Point {
  return { x: (num(x) / GEMINI_GRID) * image.width, y: (num(y) / GEMINI_GRID) * image.height };
}

/** One predefined function call → our actions (empty + reason when we do not do it). */
export function geminiAction(
  name: string,
  args: Record<string, unknown>,
  image: { width: number; height: number },
): { actions: CoordinateAction[]; unsupported?: string } {
  const at = () => fromGrid(args.x, args.y, image);
  const distance = (axis: 'x' | 'y') =>
    (num(args.magnitude, 800) / GEMINI_GRID) * (axis === 'x' ? image.width : image.height);
  const dir = String(args.direction ?? 'down');
  const delta = (axis: 'x' | 'y') =>
    axis === 'y'
      ? dir === 'up'
        ? -distance('y')
        : dir === 'down'
          ? distance('y')
          : 0
      : dir === 'left'
        ? -distance('x')
        : dir === 'right'
          ? distance('x')
          : 0;
  switch (name) {
    case 'open_web_browser':
      return { actions: [{ kind: 'screenshot' }] };
    case 'wait_5_seconds':
      return { actions: [{ kind: 'wait', ms: 5000 }] };
    case 'go_back':
      return { actions: [{ kind: 'back' }] };
    case 'navigate':
      return { actions: [{ kind: 'goto', url: String(args.url ?? '') }] };
    case 'click_at':
      return { actions: [{ kind: 'click', at: at(), button: 'left', clicks: 1 }] };
    case 'hover_at':
      return { actions: [{ kind: 'move', at: at() }] };
    case 'type_text_at': {
      const actions: CoordinateAction[] = [{ kind: 'click', at: at(), button: 'left', clicks: 1 }];
      if (args.clear_before_typing !== false)
        actions.push({ kind: 'keys', chord: ['ControlOrMeta', 'a'] }, { kind: 'keys', chord: ['Delete'] });
      actions.push({ kind: 'type', text: String(args.text ?? '') });
      if (args.press_enter === true) actions.push({ kind: 'keys', chord: ['Enter'] });
      return { actions };
    }
    case 'key_combination':
      return { actions: [{ kind: 'keys', chord: parseChord(String(args.keys ?? '')) }] };
    case 'scroll_document':
      return {
        actions: [
          { kind: 'scroll', at: { x: image.width / 2, y: image.height / 2 }, dx: delta('x'), dy: delta('y') },
        ],
      };
    case 'scroll_at':
      return { actions: [{ kind: 'scroll', at: at(), dx: delta('x'), dy: delta('y') }] };
    case 'drag_and_drop':
      return {
        actions: [{ kind: 'drag', path: [at(), fromGrid(args.destination_x, args.destination_y, image)] }],
      };
    default:
      return { actions: [], unsupported: `the "${name}" function` };
  }
}

/** Keeps the newest screenshots in the contents; older ones are dropped from their responses. */
export function trimGemini(contents: Content[], keep = MAX_IMAGES_PER_REQUEST): Content[] {
  let seen = 0;
  const out = structuredClone(contents);
  for (let i = out.length - 1; i >= 0; i--)
    for (const part of out[i]?.parts ?? []) {
      if (part.inlineData && ++seen > keep) {
        delete part.inlineData;
        part.text = '[earlier screenshot left out]';
      }
      const inner = part.functionResponse?.parts;
      if (inner && part.functionResponse)
        part.functionResponse.parts = inner.filter((p) => !(p.inlineData && ++seen > keep));
    }
  return out;
}

const screenshotPart = (input: TurnInput) => ({
  inlineData: { mimeType: input.mediaType, data: input.screenshot },
});

export function googleComputerModel(config: ComputerUseConfig): ComputerUseModel {
  const ai = new GoogleGenAI({
    apiKey: config.apiKey ?? 'not-needed',
    httpOptions: {
      ...(config.baseURL ? { baseUrl: config.baseURL } : {}),
      timeout: config.timeoutMs ?? 120_000,
    },
  });
  const label = `google/${config.model}`;
  return {
    config,
    async turn(conversation, input, signal) {
      const contents = [...((conversation?.data as unknown as Content[] | undefined) ?? [])];
      if (contents.length === 0)
        contents.push({
          role: 'user',
          parts: [{ text: `${input.goal}\nCurrent page: ${input.url}` }, screenshotPart(input)],
        });
      else
        contents.push({
          role: 'user',
          parts: input.results.map(
            (r): Part => ({
              functionResponse: {
                name: r.callId.split('#')[0] ?? r.callId,
                response: { url: input.url, ...(r.ok ? {} : { error: r.message }) },
                parts: [screenshotPart(input)],
              },
            }),
          ),
        });
      const sent = trimGemini(contents);
      try {
        const res = await ai.models.generateContent({
          model: config.model,
          contents: sent,
          config: {
            systemInstruction: input.system,
            tools: [{ computerUse: { environment: Environment.ENVIRONMENT_BROWSER } }],
            ...(signal ? { abortSignal: signal } : {}),
          },
        });
        const parts = res.candidates?.[0]?.content?.parts ?? [];
        const calls: ComputerCall[] = parts
          .filter((p) => p.functionCall)
          .map((p, i) => {
            const fc = p.functionCall!;
            const args = (fc.args ?? {}) as Record<string, unknown>;
            const mapped = geminiAction(fc.name ?? '', args, input.image);
            const safety = args.safety_decision as { decision?: string; explanation?: string } | undefined;
            return {
              callId: `${fc.name ?? 'call'}#${i}`,
              actions: mapped.actions,
              ...(mapped.unsupported ? { unsupported: mapped.unsupported } : {}),
              ...(safety?.decision === 'require_confirmation'
                ? {
                    safetyChecks: [
                      { id: `gemini-${i}`, code: 'require_confirmation', message: safety.explanation ?? '' },
                    ],
                  }
                : {}),
            };
          });
        const message = parts
          .map((p) => p.text ?? '')
          .join('')
          .trim();
        const u = res.usageMetadata;
        const usage: Usage = {
          promptTokens: u?.promptTokenCount ?? 0,
          completionTokens: u?.candidatesTokenCount ?? 0,
          cachedTokens: u?.cachedContentTokenCount ?? 0,
          model: label,
          ms: 0,
          calls: 1,
        };
        const cost = costOf(label, usage);
        if (cost !== undefined) usage.costUsd = cost;
        const reply = res.candidates?.[0]?.content;
        if (reply) sent.push(reply);
        return {
          turn: { calls, message, usage },
          conversation: { provider: 'google', data: sent as unknown as ConversationData },
        };
      } catch (err) {
        throw toLlmError(err, label);
      }
    },
  };
}
