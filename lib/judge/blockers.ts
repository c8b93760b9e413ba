/**
 * What stopped a sample, read from its own words and the pages it saw: a CAPTCHA or a login wall.
 * Only a sample that did not finish is called blocked; a login page the agent got past is history.
 */
import type { Blocker, JudgeInput } from './types.ts';

const CAPTCHA =
  /\b(re)?captcha\b|hcaptcha|turnstile|are you a (robot|human)|verify (that )?you are (a )?human|bot check/i;
const LOGIN =
  /\b(log ?in|sign ?in|signin|login)\b.{0,40}\b(required|wall|needed|first|to continue)\b|requires? (a )?(log ?in|sign ?in|an account)|\bno credentials\b|\/(login|signin|sign-in)\b/i;

export interface BlockerFinding {
  blockedBy: Blocker;
  /** First step whose evidence shows it (0 when only the final reason does). */
  step: number;
}

export function findBlocker(input: JudgeInput): BlockerFinding {
  if (input.status === 'done') return { blockedBy: 'none', step: 0 };
  const last = input.steps.at(-1);
  // A blocker the sample ended on: the final reason, or what the last steps saw and said.
  const tail = input.steps.slice(-3);
  for (const [kind, re] of [
    ['captcha', CAPTCHA],
    ['login', LOGIN],
  ] as const) {
    if (re.test(input.reason)) {
      const first = input.steps.find((s) => re.test(stepText(s)));
      return { blockedBy: kind, step: first?.step ?? last?.step ?? 0 };
    }
    const seen = tail.find((s) => re.test(stepText(s)));
    if (seen) return { blockedBy: kind, step: seen.step };
  }
  return { blockedBy: 'none', step: 0 };
}

function stepText(s: JudgeInput['steps'][number]): string {
  return [
    s.url,
    s.evaluation,
    s.memory,
    s.nextGoal,
    ...(s.notices ?? []),
    ...s.actions.map((a) => a.outcome),
  ].join(' \n ');
}
