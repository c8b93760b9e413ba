/**
 * The scenario runner's prompts, in our own words. The system part is the same for every call of
 * a scenario (providers cache it); each iteration's facts go in one user message after it.
 */
import { VERIFICATION_TYPES } from './decision.ts';
import type { ScenarioStep } from './spec.ts';

export const SCENARIO_SYSTEM = `You carry out a test scenario on a live web page, one step at a time. Each call is one iteration of the current step: you see the page, decide, your commands run, and you are called again with the new page until you say the step is complete.

The page comes as an outline, one element per line: "[id] role: name". Use only ids from the current outline; ids from an older page are not valid.

Commands ("commands", run in order, actions and verifications mixed in one list):
- action: {"kind":"action","action":"click|dblclick|hover|fill|type|press|select|check|uncheck|scroll|goto|back|wait","id":N,"value":"..."}
  fill/type take the text in value (write a secret as its %name% placeholder); press takes a key (Enter, Tab, Escape); select takes the option label; goto takes a URL; scroll takes down/up/top/bottom (with an id: scroll that element into view); wait takes milliseconds or "text:Some text".
- verification: {"kind":"verify","check":"<type>","id":N,"expected":"..."}. Text lines have no id: name such an element by a CSS "selector" instead (e.g. "#total", "p.status"); textContains with neither id nor selector checks the whole page's text. Counts: {"kind":"verify","check":"countEquals","selector":"ul.items > li","expected":"3"}.
  Types: ${VERIFICATION_TYPES.join(', ')}.
  textContains / textEquals compare the element's visible text; valueEquals / valueEmpty a field's value; hasClass takes a class name; hasAttribute takes "name" or "name=value"; the count types count a CSS selector's matches.
  Verifications run in the page and are the proof of a step: a failed one counts as a failed command.

How to decide:
- Do exactly what the current step says, nothing from later steps. Once its goal is reached, answer status "complete" with no further actions.
- If the step says verify, check, ensure or confirm, or names an expected outcome, prove it with at least one verification command; "complete" is refused until one has passed.
- "complete" is also refused when any command of that iteration failed. Commands after a failed command or a page change are not run.
- Batch what cannot change the page in between (filling several fields); put a click that changes the page last.
- If something failed, change the approach: another element, scrolling, a keyboard key.
- status "stuck": you have tried and cannot make progress. "infeasible": the page or app cannot do what the step asks (the feature is missing). Never claim completion you have not seen.
- A cookie banner, consent wall, newsletter modal or chat widget in the way is a blocker: describe it in blockerDetected with the commands that dismiss it (they run first and are remembered for this site).
- noteToFutureSelf is your only memory between iterations: your plan, what you expect to see, what to try if it fails.
- experiences: at most a few short facts about how this app behaves that would help later steps (e.g. "search results load after pressing Enter"); leave empty if none.`;

export interface IterationView {
  stepIndex: number;
  steps: readonly ScenarioStep[];
  iteration: number;
  maxIterations: number;
  mustVerify: boolean;
  url: string;
  title: string;
  tree: string;
  note?: string;
  /** Results of the previous iteration's commands, one line each. */
  lastResults: string[];
  /** Why the previous answer's status was not accepted. */
  refused?: string;
  experiences: string[];
  cleared: string[];
  variableNames: string[];
  /** Sections a mode adds (the coordinate offer, the note on the attached picture). */
  extra?: string[];
}

/** The per-iteration user message. Pure. */
export function iterationPrompt(v: IterationView): string {
  const step = v.steps[v.stepIndex]!;
  const out: string[] = [];
  out.push(
    `Scenario steps:\n${v.steps
      .map(
        (s, i) => `${i < v.stepIndex ? '[done]' : i === v.stepIndex ? '[now] ' : '      '} ${i + 1}. ${s.do}`,
      )
      .join('\n')}`,
  );
  out.push(
    `Current step ${v.stepIndex + 1} of ${v.steps.length}: ${step.do}${step.expect ? `\nExpected outcome: ${step.expect}` : ''}\nIteration ${v.iteration} of ${v.maxIterations}.${v.mustVerify ? ' This step must be proved with a verification command.' : ''}`,
  );
  if (v.iteration === v.maxIterations) out.push('This is the last iteration for this step.');
  if (v.note) out.push(`Your note from the previous iteration: ${v.note}`);
  if (v.refused) out.push(`Your last status was not accepted: ${v.refused}`);
  if (v.lastResults.length) out.push(`Results of your last commands:\n${v.lastResults.join('\n')}`);
  if (v.cleared.length) out.push(`Cleared before this iteration (no action needed): ${v.cleared.join('; ')}`);
  if (v.experiences.length)
    out.push(`Learned about this site:\n${v.experiences.map((e) => `- ${e}`).join('\n')}`);
  if (v.variableNames.length)
    out.push(`Secrets you may type (as placeholders): ${v.variableNames.map((n) => `%${n}%`).join(', ')}`);
  if (v.extra?.length) out.push(...v.extra);
  out.push(`Current page: ${v.url}\nTitle: ${v.title}\n${v.tree}`);
  return out.join('\n\n');
}
