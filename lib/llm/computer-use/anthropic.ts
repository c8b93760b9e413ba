/**
 * Anthropic's computer tool on the beta Messages API: the tool version follows the model (the
 * 2025-11 tool for the models that introduced it, the 2025-01 one otherwise), each with the beta
 * header it needs. Each `tool_use` of the `computer` tool is one call of one action; its result is a
 * `tool_result` holding the next screenshot.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { CoordinateAction, MouseButton, Point } from '../../actions/coordinates.ts';
import { parseChord } from '../../actions/coordinates.ts';
import { toLlmError } from '../errors.ts';
import { costOf } from '../pricing.ts';
import type { Usage } from '../types.ts';
import {
  type ComputerCall,
  type ComputerUseConfig,
  type ComputerUseModel,
  type Conversation,
  type ConversationData,
  MAX_IMAGES_PER_REQUEST,
  type TurnInput,
} from './types.ts';

type Message = Anthropic.Beta.Messages.BetaMessageParam;
type Block = Anthropic.Beta.Messages.BetaContentBlockParam;

/** Tool type and beta flag of each version we speak. */
export const ANTHROPIC_COMPUTER_TOOLS = {
  computer_20250124: 'computer-use-2025-01-24',
  computer_20251124: 'computer-use-2025-11-24',
} as const;

/** The newer tool is for the models that came with it and after; older models keep the 2025-01 one. */
export function anthropicToolVersion(model: string): keyof typeof ANTHROPIC_COMPUTER_TOOLS {
  return /opus-4-[5-9]|opus-[5-9]|sonnet-4-[6-9]|sonnet-[5-9]|haiku-[5-9]/.test(model)
    ? 'computer_20251124'
    : 'computer_20250124';
}

const SCROLL_STEP_PX = 100;

const point = (c: unknown): Point | undefined =>
  Array.isArray(c) && c.length === 2 && c.every((n) => typeof n === 'number')
    ? { x: c[0] as number, y: c[1] as number }
    : undefined;

/** One `computer` tool input → our actions (empty + reason when it is something we do not do). */
export function anthropicAction(input: Record<string, unknown>): {
  actions: CoordinateAction[];
  unsupported?: string;
} {
  const at = point(input.coordinate);
  const click = (button: MouseButton, clicks: 1 | 2 | 3) =>
    at
      ? { actions: [{ kind: 'click', at, button, clicks } as CoordinateAction] }
      : { actions: [], unsupported: `${String(input.action)} without a coordinate` };
  switch (input.action) {
    case 'screenshot':
    case 'zoom':
      return { actions: [{ kind: 'screenshot' }] };
    case 'left_click':
      return click('left', 1);
    case 'right_click':
      return click('right', 1);
    case 'middle_click':
      return click('middle', 1);
    case 'double_click':
      return click('left', 2);
    case 'triple_click':
      return click('left', 3);
    case 'mouse_move':
      return at
        ? { actions: [{ kind: 'move', at }] }
        : { actions: [], unsupported: 'mouse_move without a coordinate' };
    case 'left_click_drag': {
      const from = point(input.start_coordinate);
      return from && at
        ? { actions: [{ kind: 'drag', path: [from, at] }] }
        : { actions: [], unsupported: 'drag without both coordinates' };
    }
    case 'scroll': {
      const amount = Number(input.scroll_amount ?? 3) * SCROLL_STEP_PX;
      const dir = String(input.scroll_direction ?? 'down');
      const dx = dir === 'left' ? -amount : dir === 'right' ? amount : 0;
      const dy = dir === 'up' ? -amount : dir === 'down' ? amount : 0;
      return { actions: [{ kind: 'scroll', at: at ?? { x: 0, y: 0 }, dx, dy }] };
    }
    case 'type':
      return { actions: [{ kind: 'type', text: String(input.text ?? '') }] };
    case 'key':
    case 'hold_key':
      return { actions: [{ kind: 'keys', chord: parseChord(String(input.text ?? '')) }] };
    case 'wait':
      return { actions: [{ kind: 'wait', ms: Math.round(Number(input.duration ?? 1) * 1000) }] };
    default:
      return { actions: [], unsupported: `the "${String(input.action)}" action` };
  }
}

/** Keeps the newest screenshots; older ones become a short note (they are what costs the tokens). */
export function trimAnthropic(messages: Message[], keep = MAX_IMAGES_PER_REQUEST): Message[] {
  let seen = 0;
  const out = structuredClone(messages);
  for (let i = out.length - 1; i >= 0; i--) {
    const m = out[i]!;
    if (typeof m.content === 'string' || !Array.isArray(m.content)) continue;
    m.content = (m.content as Block[]).map((b): Block => {
      if (b.type === 'image')
        return ++seen > keep ? { type: 'text', text: '[earlier screenshot left out]' } : b;
      if (b.type === 'tool_result' && Array.isArray(b.content))
        return {
          ...b,
          content: b.content.map((c) =>
            c.type === 'image' && ++seen > keep
              ? { type: 'text' as const, text: '[earlier screenshot left out]' }
              : c,
          ),
        };
      return b;
    });
  }
  return out;
}

const image = (input: TurnInput) => ({
  type: 'image' as const,
  source: { type: 'base64' as const, media_type: input.mediaType, data: input.screenshot },
});

export function anthropicComputerModel(config: ComputerUseConfig): ComputerUseModel {
  const client = new Anthropic({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 2,
    timeout: config.timeoutMs ?? 120_000,
  });
  const version =
    (config.toolVersion as keyof typeof ANTHROPIC_COMPUTER_TOOLS | undefined) ??
    anthropicToolVersion(config.model);
  const beta = ANTHROPIC_COMPUTER_TOOLS[version];
  if (!beta) throw new Error(`unknown Anthropic computer tool version "${version}"`);
  const label = `anthropic/${config.model}`;
  return {
    config,
    async turn(conversation, input, signal) {
      const messages = [...((conversation?.data as unknown as Message[] | undefined) ?? [])];
      if (messages.length === 0)
        messages.push({
          role: 'user',
          content: [{ type: 'text', text: `${input.goal}\nCurrent page: ${input.url}` }, image(input)],
        });
      else
        messages.push({
          role: 'user',
          content: input.results.map((r) => ({
            type: 'tool_result' as const,
            tool_use_id: r.callId,
            ...(r.ok ? {} : { is_error: true }),
            content: [
              { type: 'text' as const, text: `${r.message}\nCurrent page: ${input.url}` },
              image(input),
            ],
          })),
        });
      const sent = trimAnthropic(messages);
      try {
        const res = await client.beta.messages.create(
          {
            model: config.model,
            max_tokens: 4096,
            system: input.system,
            messages: sent,
            tools: [
              {
                type: version,
                name: 'computer',
                display_width_px: input.image.width,
                display_height_px: input.image.height,
              },
            ],
            betas: [beta],
          },
          signal ? { signal } : {},
        );
        const calls: ComputerCall[] = [];
        for (const b of res.content)
          if (b.type === 'tool_use') {
            const mapped =
              b.name === 'computer'
                ? anthropicAction(b.input as Record<string, unknown>)
                : { actions: [], unsupported: `the "${b.name}" tool` };
            calls.push({
              callId: b.id,
              actions: mapped.actions,
              ...(mapped.unsupported ? { unsupported: mapped.unsupported } : {}),
            });
          }
        const message = res.content
          .map((b) => (b.type === 'text' ? b.text : ''))
          .join('')
          .trim();
        const u = res.usage;
        const cached = u.cache_read_input_tokens ?? 0;
        const usage: Usage = {
          promptTokens: u.input_tokens + cached + (u.cache_creation_input_tokens ?? 0),
          completionTokens: u.output_tokens,
          cachedTokens: cached,
          model: label,
          ms: 0,
          calls: 1,
        };
        const cost = costOf(label, usage);
        if (cost !== undefined) usage.costUsd = cost;
        // The kept conversation is the trimmed one: screenshots already left out stay out.
        sent.push({ role: 'assistant', content: res.content as unknown as Block[] });
        return {
          turn: { calls, message, usage },
          conversation: { provider: 'anthropic', data: sent as unknown as ConversationData },
        };
      } catch (err) {
        throw toLlmError(err, label);
      }
    },
  };
}

export type { Conversation };
