/**
 * The judge: rules on one finished sample. Deterministic checks first (required fields, artifacts,
 * schema, expected answer, post-conditions, blockers); one model call, with the relevant screenshots,
 * only for the key points those cannot decide. Without a model the open points stay unknown and the
 * verdict says so instead of guessing.
 */
import type { LlmClient, MessagePart } from '../llm/types.ts';
import { indexWithinKind, keyPointsOf, settleByRule } from './key-points.ts';
import { JUDGE_SYSTEM, judgeUserText } from './prompt.ts';
import { selectScreenshots } from './screenshots.ts';
import { type JudgeInput, JudgeReplySchema, type KeyPointVerdict, type Verdict } from './types.ts';
import { blockerFinding, combine } from './verdict.ts';

export interface JudgeOptions {
  /** Screenshots shown to the model at most (default 3). */
  maxScreenshots?: number;
  signal?: AbortSignal;
}

const toBase64 = (png: Uint8Array) => Buffer.from(png).toString('base64');

export async function judgeSample(
  input: JudgeInput,
  llm: LlmClient | undefined,
  opts: JudgeOptions = {},
): Promise<Verdict> {
  const points = keyPointsOf(input.task, input.postconditions);
  const within = indexWithinKind(points);
  const verdicts: (KeyPointVerdict | undefined)[] = points.map((p, i) =>
    settleByRule(p, within[i] ?? 0, input),
  );
  const blocker = blockerFinding(input);
  const open = points.map((p, i) => ({ index: i + 1, point: p.point, at: i })).filter((o) => !verdicts[o.at]);
  const usage: Verdict['usage'] = { promptTokens: 0, completionTokens: 0, cachedTokens: 0, calls: 0 };
  let shown: typeof input.screenshots = [];
  let modelReasoning = '';
  let impossibleTask = false;
  let modelBlocker: Verdict['blockedBy'] = 'none';

  // A sample that rules already fail (a required field missing, a wall that stopped it) fails
  // whatever the model would say about the rest: no tokens are spent on it.
  const failedByRule = verdicts.some((v) => v?.met === false) || blocker.blockedBy !== 'none';
  if (open.length > 0 && llm && !failedByRule) {
    shown = selectScreenshots(input.screenshots, input.steps, points, opts.maxScreenshots ?? 3);
    const decided = verdicts.filter((v): v is KeyPointVerdict => v !== undefined);
    const content: MessagePart[] = [
      { type: 'text', text: judgeUserText(input, decided, open, shown) },
      ...shown.map((s): MessagePart => ({ type: 'image', mediaType: 'image/png', data: toBase64(s.png) })),
    ];
    const reply = await llm.generate({
      system: JUDGE_SYSTEM,
      messages: [{ role: 'user', content }],
      schema: JudgeReplySchema,
      schemaName: 'judge_verdict',
      temperature: 0,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    usage.promptTokens += reply.usage.promptTokens;
    usage.completionTokens += reply.usage.completionTokens;
    usage.cachedTokens += reply.usage.cachedTokens;
    usage.calls += reply.usage.calls;
    if (reply.usage.costUsd !== undefined) usage.costUsd = (usage.costUsd ?? 0) + reply.usage.costUsd;
    for (const o of open) {
      const answer = reply.value.keyPoints.find((k) => k.index === o.index);
      verdicts[o.at] = {
        point: o.point,
        met: answer ? (answer.met === 'unknown' ? null : answer.met === 'yes') : null,
        evidenceStep: answer?.evidenceStep ?? 0,
        why: answer?.why ?? 'the judge model gave no answer for this point',
        decidedBy: 'model',
      };
    }
    modelReasoning = reply.value.reasoning;
    impossibleTask = reply.value.impossibleTask;
    modelBlocker = reply.value.blockedBy;
  }
  for (const o of open)
    verdicts[o.at] ??= {
      point: o.point,
      met: null,
      evidenceStep: 0,
      why: failedByRule
        ? 'not judged: the sample already fails on a rule'
        : 'no model is configured to judge this point from the screenshots and log',
      decidedBy: 'rule',
    };

  return combine({
    input,
    keyPoints: verdicts as KeyPointVerdict[],
    blocker:
      blocker.blockedBy !== 'none'
        ? blocker
        : { blockedBy: input.status === 'done' ? 'none' : modelBlocker, step: 0 },
    impossibleTask,
    modelReasoning,
    screenshotsUsed: shown.map((s) => s.file),
    usage,
  });
}
