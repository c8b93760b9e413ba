/**
 * The perfect model of `bench:act-corpus --perfect`: a scripted model (test/support/llm-server.ts,
 * reached through the real SDK) that knows which snapshot ids the labelled target has and answers
 * one of them whenever the prompt shows it. When the prompt shows none, it answers "nothing fits"
 * and notes it: the target was cut from (or never made it into) what a model is shown.
 */
import type { ModelConfig } from '../../../lib/llm/types.ts';
import type { RecordedRequest, ScriptedModel, ScriptedReply } from '../../support/llm-server.ts';
import { startScriptedModel } from '../../support/llm-server.ts';

/** What the oracle knows for the act in progress. */
export interface OracleTurn {
  /** Every snapshot id that stands for the labelled target. */
  ids: number[];
  method: 'fill' | 'click';
  /** What a fill types, as the instruction says it (`%pw%` stays a placeholder). */
  value?: string;
}

export interface Oracle {
  config: ModelConfig;
  /** Sets the target of the next act and clears what the last one noted. */
  expect(turn: OracleTurn): void;
  /** How the oracle answered since `expect`: the id it named, or that the prompt lacked the target. */
  answered(): { named?: number; missing: boolean; asked: number };
  close(): Promise<void>;
}

/** The ids a prompt's outline shows (`[12] role: name` lines). */
export const shownIds = (text: string): Set<number> =>
  new Set([...text.matchAll(/^\s*\[(\d+)\] /gm)].map((m) => Number(m[1])));

/** The oracle's answer for one request, in the `choose_action` schema act asks with. */
export function oracleReply(
  turn: OracleTurn | undefined,
  r: RecordedRequest,
): { reply: ScriptedReply; named?: number } {
  const shown = shownIds(r.text);
  const id = turn?.ids.find((i) => shown.has(i));
  if (id === undefined || !turn)
    return {
      reply: {
        json: {
          elementId: null,
          method: 'click',
          arguments: [],
          twoStep: false,
          reason: 'not in the outline',
        },
      },
    };
  return {
    reply: {
      json: {
        elementId: id,
        method: turn.method,
        arguments: turn.value !== undefined ? [turn.value] : [],
        twoStep: false,
        reason: 'the labelled target',
      },
    },
    named: id,
  };
}

export async function startOracle(): Promise<Oracle> {
  const server: ScriptedModel = await startScriptedModel();
  let turn: OracleTurn | undefined;
  let named: number | undefined;
  let missing = false;
  let asked = 0;
  server.setHandler((r) => {
    asked++;
    const got = oracleReply(turn, r);
    if (got.named === undefined) missing = true;
    else named = got.named;
    return got.reply;
  });
  return {
    config: {
      provider: 'openai',
      model: 'gpt-4.1-mini',
      baseURL: server.openaiBaseURL,
      apiKey: 'sk-oracle',
      maxRetries: 0,
    },
    expect(next) {
      turn = next;
      named = undefined;
      missing = false;
      asked = 0;
    },
    answered: () => ({ ...(named !== undefined ? { named } : {}), missing, asked }),
    close: () => server.close(),
  };
}
