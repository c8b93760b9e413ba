/** How key-point verdicts, blockers and the sample's own end become one ruling (pure). */
import { type BlockerFinding, findBlocker } from './blockers.ts';
import type { JudgeInput, KeyPointVerdict, Verdict } from './types.ts';

export { findBlocker as blockerFinding };

const FINISHED = ['done', 'partial_success'];

export interface CombineInput {
  input: JudgeInput;
  keyPoints: KeyPointVerdict[];
  blocker: BlockerFinding;
  impossibleTask: boolean;
  modelReasoning: string;
  screenshotsUsed: string[];
  usage: Verdict['usage'];
}

/**
 * fail: a key point is not met, or a wall stopped the sample, or it never finished and nothing shows
 * it got there anyway; uncertain: nothing failed but some point cannot be told from the evidence (or
 * every point looks met though the agent never finished); pass: every point met by a finished sample.
 */
export function combine(c: CombineInput): Verdict {
  const { input, keyPoints } = c;
  const unmet = keyPoints.filter((k) => k.met === false);
  const unknown = keyPoints.filter((k) => k.met === null);
  const finished = FINISHED.includes(input.status);
  const blocked = c.blocker.blockedBy !== 'none';
  let verdict: Verdict['verdict'];
  let why: string;
  if (unmet.length > 0) {
    verdict = 'fail';
    why = `not met: ${unmet.map((k) => `${k.point} (${k.why})`).join('; ')}`;
  } else if (blocked) {
    verdict = 'fail';
    why = `stopped by a ${c.blocker.blockedBy} wall: ${input.reason}`;
  } else if (!finished && unknown.length > 0) {
    verdict = 'fail';
    why = `the sample ended "${input.status}" (${input.reason}) and nothing shows the task was done`;
  } else if (!finished) {
    verdict = 'uncertain';
    why = `every key point looks met, but the sample ended "${input.status}": ${input.reason}`;
  } else if (unknown.length > 0) {
    verdict = 'uncertain';
    why = `the evidence cannot tell: ${unknown.map((k) => k.point).join('; ')}`;
  } else {
    verdict = 'pass';
    why = 'every key point is met by the evidence';
  }
  return {
    verdict,
    reasoning: c.modelReasoning ? `${why}. ${c.modelReasoning}` : why,
    keyPoints,
    ...(verdict === 'fail' ? { firstFailureStep: firstFailure(input, unmet, c.blocker) } : {}),
    impossibleTask: c.impossibleTask,
    blockedBy: c.blocker.blockedBy,
    screenshotsUsed: c.screenshotsUsed,
    usage: c.usage,
  };
}

function firstFailure(input: JudgeInput, unmet: KeyPointVerdict[], blocker: BlockerFinding): number {
  const stepsOf = unmet.map((k) => k.evidenceStep).filter((s) => s > 0);
  if (stepsOf.length) return Math.min(...stepsOf);
  if (blocker.blockedBy !== 'none' && blocker.step > 0) return blocker.step;
  const failedAction = input.steps.find((s) => s.actions.some((a) => !a.ok));
  return failedAction?.step ?? input.steps.at(-1)?.step ?? 0;
}
