/**
 * The agent's prompts. The system part depends only on the task, so it is byte-identical on every
 * step of a sample (providers cache it: Anthropic through cache_control, OpenAI by prefix); all
 * that changes per step goes in the one user message after it.
 */
import type { JsonObject } from '../store/ports.ts';
import { requiredFieldsOf } from './done-check.ts';
import type { AgentTask } from './state.ts';

const RULES = `You are a browser agent. You carry out one task on a live web page, step by step, until the task is done or cannot be done.

How each step works:
- You get the page as an outline: one element per line, "[id] role: name", indented by nesting. Only elements with an [id] can be acted on, and only ids in the current outline are accepted: never invent or reuse an id from an older page.
- Input fields show what they already hold (value=...). Do not type again what is already there.
- You answer with one or more tool calls in "actions" (executed in order) plus three short reflection fields: evaluation_previous_step (did the last step work, how you know), memory_update (a fact worth keeping), next_goal (what these actions are for).
- Several actions in one step are for things that cannot change the page in between, like filling a form's fields then clicking submit. After a navigation, a failed action or a changed page, the rest of the batch is skipped and you see the new page.

Tools:
- goto(url): open a URL.
- click(id): click an element.
- type(id, text, submit?): replace a field's content with text; submit presses Enter after. Secrets are given as %name% placeholders: type the placeholder exactly, it is filled in for you.
- select_option(id, option): pick an option of a select or list box by its label.
- scroll(direction, id?): scroll the page (or the element id) down, up, to the top or to the bottom.
- wait(text?, ms?): wait for a text to appear or for some milliseconds.
- screenshot(label): save a screenshot as evidence under a short label.
- extract(instruction, schema?): read information from the whole current page (also the parts not in the outline); the answer comes back in the next step.
- download(id): click a link or button that downloads a file and keep the file.
- save_progress(data, note): store data found so far. It is merged into earlier saves: objects merge, list items are appended once. Use it after each item or page in long tasks, so nothing found is lost.
- done(data): finish with the final result. data must follow the result schema; include everything (earlier saves are merged in for you).
- fail(reason): stop because the task cannot be done (the page does not have it, access is refused, a captcha blocks you).

Rules:
- Work only toward the task. Do not log out, buy, delete or send anything the task does not ask for.
- Prefer what the page shows over guesses; if something is not on the page, say so instead of making it up.
- If an approach fails twice, change it: another element, scrolling, another page, or extract.
- Call done as soon as the task is complete.`;

/** The static system part for a task: rules, goal, result schema and requirements. */
export function systemPrompt(task: AgentTask): string {
  const parts = [RULES, '', `Task: ${task.goal}`];
  if (task.systemPrompt) parts.push(`Instructions for this task:\n${task.systemPrompt}`);
  if (task.schema) parts.push(`Result schema (JSON Schema) for done(data):\n${JSON.stringify(task.schema)}`);
  const required = requiredFieldsOf(task);
  if (required.length) parts.push(`Required fields in the result: ${required.join(', ')}`);
  if (task.requiredArtifacts?.length)
    parts.push(`Screenshots required before done (labels): ${task.requiredArtifacts.join(', ')}`);
  if (task.expectedItems) parts.push(`Expected number of items: ${task.expectedItems}`);
  if (task.steps)
    parts.push(
      `Scenario: carry out these steps in order, one at a time. Work only on the current one and call step_done(note) as soon as it is achieved; call done after the last.\n${task.steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}`,
    );
  return parts.join('\n');
}

export interface StepView {
  step: number;
  maxSteps: number;
  url: string;
  title: string;
  tree: string;
  notices: string[];
  summary: string;
  history: string[];
  notes: string[];
  memoryHints: string[];
  /** What earlier samples of the run learned on this site (first steps only). */
  runHints?: string[];
  data: JsonObject;
  input: Record<string, string>;
  variableNames: string[];
  lastResults: string[];
  visionNote?: string;
  interactive?: string;
  finalOnly: boolean;
  /** Scenario mode: the current scenario step (index 0-based), or all achieved when index = total. */
  scenario?: { index: number; total: number; text?: string };
}

/** The per-step user message: where the agent is, what it did, what it has, and what it sees. */
export function stepPrompt(v: StepView): string {
  const out: string[] = [`Step ${v.step} of ${v.maxSteps} (${v.maxSteps - v.step} left after this one).`];
  if (v.finalOnly) out.push('Only done and fail are available now.');
  if (v.scenario)
    out.push(
      v.scenario.index < v.scenario.total
        ? `Scenario step ${v.scenario.index + 1} of ${v.scenario.total}: ${v.scenario.text}`
        : 'All scenario steps are achieved: call done with the result.',
    );
  for (const n of v.notices) out.push(n);
  if (Object.keys(v.input).length) out.push(`Input for this sample: ${JSON.stringify(v.input)}`);
  if (v.variableNames.length)
    out.push(`Secrets you may type (as placeholders): ${v.variableNames.map((n) => `%${n}%`).join(', ')}`);
  if (v.runHints?.length)
    out.push(
      `Hints from earlier samples of this run on this site (follow them if they fit this page):\n${v.runHints.map((h) => `- ${h}`).join('\n')}`,
    );
  if (v.memoryHints.length)
    out.push(`What worked or failed on this site before:\n${v.memoryHints.join('\n')}`);
  if (v.summary) out.push(`Earlier steps, summarized: ${v.summary}`);
  if (v.history.length) out.push(`Recent steps:\n${v.history.join('\n')}`);
  if (v.notes.length) out.push(`Your notes:\n${v.notes.map((n) => `- ${n}`).join('\n')}`);
  if (v.lastResults.length) out.push(`Results of the last step:\n${v.lastResults.join('\n')}`);
  if (Object.keys(v.data).length) out.push(`Data saved so far: ${JSON.stringify(v.data)}`);
  out.push(`Current page: ${v.url}\nTitle: ${v.title}\n${v.tree}`);
  if (v.visionNote) out.push(`Seen in a screenshot but not in the outline: ${v.visionNote}`);
  if (v.interactive)
    out.push(`Several actions failed in a row. Every visible control now:\n${v.interactive}`);
  return out.join('\n\n');
}

/** The targeted vision question for pages whose DOM tells only part of the story. */
export function visionQuestion(goal: string, tree: string): string {
  return `Task: ${goal}\nThis page outline was read from the DOM:\n${tree.slice(0, 1200)}\n\nLook at the screenshot. What does it show that matters for the task but is missing from the outline above (icons, colours, status marks, text drawn in images, canvas or SVG)? Answer briefly; say "nothing" if the outline has it all.`;
}

export const SUMMARY_SYSTEM =
  'You compress an agent log. Write at most three sentences: what was found, what is still missing, and where the agent is. Keep names, numbers and URLs exact.';

export const CONSOLIDATE_SYSTEM =
  'You turn what a browser agent collected into its final result. Use only the data given; leave out what is not there. Follow the result schema.';

export function consolidatePrompt(task: AgentTask, data: JsonObject, notes: string[]): string {
  return `Task: ${task.goal}\n${task.schema ? `Result schema: ${JSON.stringify(task.schema)}\n` : ''}Data collected: ${JSON.stringify(data)}\nNotes: ${notes.join(' | ') || '(none)'}\nGive the best final result you can from this.`;
}
