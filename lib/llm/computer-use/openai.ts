/**
 * OpenAI's computer-use tool on the Responses API. The conversation stays with OpenAI: we keep the
 * last response id (`previous_response_id`) and the calls it is waiting on, so our state carries it
 * by reference. Safety checks a call carries are acknowledged only when the operator allowed it;
 * otherwise the call is handed back unrun with its checks, and the agent stops and says why.
 */
import OpenAI from 'openai';
import type { CoordinateAction } from '../../actions/coordinates.ts';
import { parseChord } from '../../actions/coordinates.ts';
import { toLlmError } from '../errors.ts';
import { costOf } from '../pricing.ts';
import type { Usage } from '../types.ts';
import type {
  ComputerCall,
  ComputerUseConfig,
  ComputerUseModel,
  ConversationData,
  TurnInput,
} from './types.ts';

type ToolCall = OpenAI.Responses.ResponseComputerToolCall;
type OneAction = NonNullable<ToolCall['action']>;

interface OpenAiConversation {
  previousResponseId: string;
  /** Safety checks per call id, acknowledged with that call's output when the operator allows. */
  checks: Record<string, { id: string; code: string; message: string }[]>;
}

/** One Responses API action → ours (empty + reason when it is something we do not do). */
export function openAiAction(a: OneAction): { actions: CoordinateAction[]; unsupported?: string } {
  switch (a.type) {
    case 'click':
      if (a.button === 'back') return { actions: [{ kind: 'back' }] };
      if (a.button === 'forward') return { actions: [], unsupported: 'the forward button' };
      return {
        actions: [
          {
            kind: 'click',
            at: { x: a.x, y: a.y },
            button: a.button === 'wheel' ? 'middle' : a.button,
            clicks: 1,
          },
        ],
      };
    case 'double_click':
      return { actions: [{ kind: 'click', at: { x: a.x, y: a.y }, button: 'left', clicks: 2 }] };
    case 'drag':
      return { actions: [{ kind: 'drag', path: a.path.map((p) => ({ x: p.x, y: p.y })) }] };
    case 'keypress':
      return { actions: [{ kind: 'keys', chord: parseChord(a.keys) }] };
    case 'move':
      return { actions: [{ kind: 'move', at: { x: a.x, y: a.y } }] };
    case 'screenshot':
      return { actions: [{ kind: 'screenshot' }] };
    case 'scroll':
      return { actions: [{ kind: 'scroll', at: { x: a.x, y: a.y }, dx: a.scroll_x, dy: a.scroll_y }] };
    case 'type':
      return { actions: [{ kind: 'type', text: a.text }] };
    case 'wait':
      return { actions: [{ kind: 'wait', ms: 1000 }] };
    default:
      return { actions: [], unsupported: `the "${(a as { type: string }).type}" action` };
  }
}

function callOf(item: ToolCall): ComputerCall {
  const list = (item.action ? [item.action] : ((item.actions ?? []) as OneAction[])).map(openAiAction);
  const unsupported = list.find((m) => m.unsupported)?.unsupported;
  const checks = (item.pending_safety_checks ?? []).map((c) => ({
    id: c.id,
    code: c.code ?? '',
    message: c.message ?? '',
  }));
  return {
    callId: item.call_id,
    actions: list.flatMap((m) => m.actions),
    ...(checks.length ? { safetyChecks: checks } : {}),
    ...(unsupported ? { unsupported } : {}),
  };
}

const dataUrl = (input: TurnInput) => `data:${input.mediaType};base64,${input.screenshot}`;

export function openAiComputerModel(config: ComputerUseConfig): ComputerUseModel {
  const client = new OpenAI({
    apiKey: config.apiKey ?? 'not-needed',
    ...(config.baseURL ? { baseURL: config.baseURL } : {}),
    maxRetries: 2,
    timeout: config.timeoutMs ?? 120_000,
  });
  const label = `openai/${config.model}`;
  const preview = config.model.startsWith('computer-use-preview');
  return {
    config,
    async turn(conversation, input, signal) {
      const prev = conversation?.data as unknown as OpenAiConversation | undefined;
      const tool: OpenAI.Responses.Tool = preview
        ? {
            type: 'computer_use_preview',
            display_width: input.image.width,
            display_height: input.image.height,
            environment: 'browser',
          }
        : { type: 'computer' };
      // The call output holds only the picture: where the page is, and what failed, go beside it.
      const note = [
        ...input.results.filter((r) => !r.ok).map((r) => `Call ${r.callId} failed: ${r.message}`),
        `Current page: ${input.url}`,
      ].join('\n');
      const items: OpenAI.Responses.ResponseInputItem[] = prev
        ? [
            ...input.results.map((r) => {
              const acknowledged = config.acknowledgeSafetyChecks ? (prev.checks[r.callId] ?? []) : [];
              return {
                type: 'computer_call_output' as const,
                call_id: r.callId,
                output: { type: 'computer_screenshot' as const, image_url: dataUrl(input) },
                ...(acknowledged.length ? { acknowledged_safety_checks: acknowledged } : {}),
              };
            }),
            { role: 'user' as const, content: [{ type: 'input_text' as const, text: note }] },
          ]
        : [
            {
              role: 'user',
              content: [
                { type: 'input_text', text: `${input.goal}\nCurrent page: ${input.url}` },
                { type: 'input_image', image_url: dataUrl(input), detail: 'auto' },
              ],
            },
          ];
      try {
        const res = await client.responses.create(
          {
            model: config.model,
            tools: [tool],
            input: items,
            instructions: input.system,
            truncation: 'auto',
            ...(prev ? { previous_response_id: prev.previousResponseId } : {}),
          },
          signal ? { signal } : {},
        );
        const calls = res.output.filter((o): o is ToolCall => o.type === 'computer_call').map(callOf);
        const message = res.output
          .flatMap((o) =>
            o.type === 'message' ? o.content.map((c) => (c.type === 'output_text' ? c.text : '')) : [],
          )
          .join('')
          .trim();
        const u = res.usage;
        const usage: Usage = {
          promptTokens: u?.input_tokens ?? 0,
          completionTokens: u?.output_tokens ?? 0,
          cachedTokens: u?.input_tokens_details?.cached_tokens ?? 0,
          model: label,
          ms: 0,
          calls: 1,
        };
        const cost = costOf(label, usage);
        if (cost !== undefined) usage.costUsd = cost;
        const kept: OpenAiConversation = {
          previousResponseId: res.id,
          checks: Object.fromEntries(
            calls.filter((c) => c.safetyChecks).map((c) => [c.callId, c.safetyChecks!]),
          ),
        };
        return {
          turn: { calls, message, usage },
          conversation: { provider: 'openai', data: kept as unknown as ConversationData },
        };
      } catch (err) {
        throw toLlmError(err, label);
      }
    },
  };
}
