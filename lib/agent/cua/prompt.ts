/** The computer-use agent's instructions: our own words, the same for every provider. */
import type { AgentState } from '../state.ts';

export function cuaSystem(state: AgentState, secretNames: string[]): string {
  const lines = [
    'You are operating a web browser for a user, one screenshot at a time, using the computer tool.',
    'Work only inside the browser page shown. After each action you get a new screenshot; check that the action did what you meant before going on (a small ring marks where your last click landed).',
    'To open a web address, use the browser action for navigation when your tool has one; otherwise click the page.',
    'When the task is finished, stop calling the tool and answer with the result in plain text. If the task cannot be done (a CAPTCHA, a login you have no credentials for, the page does not offer it), stop and say why, starting with "CANNOT:".',
  ];
  if (secretNames.length)
    lines.push(
      `Secrets are never shown to you. To enter one, type its placeholder exactly as written, including the percent signs: ${secretNames.map((n) => `%${n}%`).join(', ')}. The browser fills in the real value.`,
    );
  if (state.task.requiredFields?.length)
    lines.push(`Your final answer must state: ${state.task.requiredFields.join(', ')}.`);
  return lines.join('\n');
}

/** The first turn's text: the goal, and what earlier slices of this sample already did. */
export function cuaGoal(state: AgentState): string {
  return state.step > 0 ? `${state.task.goal}\n(Continuing after ${state.step} steps.)` : state.task.goal;
}

/** A final answer that declines the task. */
export const declined = (message: string): string | undefined =>
  /^\s*CANNOT:/i.test(message)
    ? message.replace(/^\s*CANNOT:\s*/i, '').trim() || 'the model could not do the task'
    : undefined;
