/** The judge model's prompt: our own words; the evidence laid out step by step, then the open points. */
import type { Json } from '../store/ports.ts';
import type { JudgedScreenshot, JudgeInput, KeyPointVerdict } from './types.ts';

export const JUDGE_SYSTEM = `You review the record of a browser agent after it stopped, to decide whether the task was really accomplished.
You get the task, the agent's step log (what it did, what happened, and what it wrote about its progress), the data it handed back, and a few screenshots it took along the way.
Rules:
- Judge each open key point only from this evidence. The agent's own claims of success are not evidence unless a step outcome, the data or a screenshot backs them.
- Data that a screenshot clearly contradicts is not met.
- If nothing shown can confirm or refute a point (the page part was never captured), answer unknown rather than guessing.
- blockedBy: "captcha" or "login" only when such a wall is what stopped the agent; otherwise "none".
- impossibleTask: true only when the evidence shows the site cannot do what is asked at all.
Answer for every open key point by its number.`;

const MAX_DATA_CHARS = 4000;
const MAX_OUTCOME_CHARS = 200;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

function stepLines(input: JudgeInput): string {
  return input.steps
    .map((s) => {
      const acts = s.actions
        .map(
          (a) =>
            `    ${a.tool} ${clip(JSON.stringify(a.input ?? null), 120)} → ${a.ok ? 'ok' : 'FAILED'}: ${clip(a.outcome, MAX_OUTCOME_CHARS)}`,
        )
        .join('\n');
      const notes = [
        s.evaluation && `    judged previous step: ${clip(s.evaluation, 200)}`,
        s.memory && `    noted: ${clip(s.memory, 200)}`,
        s.nextGoal && `    next: ${clip(s.nextGoal, 200)}`,
      ]
        .filter(Boolean)
        .join('\n');
      return `step ${s.step} at ${s.url}\n${notes}${notes ? '\n' : ''}${acts}`;
    })
    .join('\n');
}

function dataText(data: Json): string {
  return clip(JSON.stringify(data, null, 1), MAX_DATA_CHARS);
}

export function judgeUserText(
  input: JudgeInput,
  decided: KeyPointVerdict[],
  open: { index: number; point: string }[],
  shown: JudgedScreenshot[],
): string {
  const settled = decided.length
    ? `Already settled by checks:\n${decided.map((d) => `- ${d.point}: ${d.met ? 'met' : 'NOT met'} (${d.why})`).join('\n')}\n\n`
    : '';
  const shots = shown.length
    ? `Screenshots attached, in order: ${shown.map((s) => `${s.file} (saved at step ${s.step || '?'})`).join(', ')}.\n\n`
    : 'No screenshots were saved.\n\n';
  return `Task: ${input.task.goal}
The agent ended with status "${input.status}": ${clip(input.reason, 400)}

Step log:
${stepLines(input) || '(no steps)'}

Final data:
${dataText(input.data)}

${shots}${settled}Open key points:
${open.map((o) => `${o.index}. ${o.point}`).join('\n')}`;
}
