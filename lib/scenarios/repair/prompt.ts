/**
 * The repair prompt, in our own words: the scenario runner's command language (one system text,
 * so the commands mean the same in both) plus what repairing one broken script step means. Pure.
 */
import { SCENARIO_SYSTEM } from '../prompt.ts';

export const REPAIR_SYSTEM = `${SCENARIO_SYSTEM}

Repair mode: the "scenario" is an existing Playwright script. The steps before the broken one have already run on this page; the broken step failed with the error shown. Your commands replace that one step, and are written back into the script as Playwright code.
- First decide whether the broken step is still needed. If what it was for has already happened (a dialog it closes is not there, the state it sets is already set) or the page no longer has that part at all, answer status "complete" with no commands: the step is deleted from the script.
- Otherwise do what the step meant with the page as it is now (the element may have moved, been renamed or be reached another way), and answer "complete" as soon as the step's purpose is met. Do not carry out the steps after it: the script goes on by itself.
- An assertion step (it calls expect) is repaired with verification commands. Keep the values it compares with; if the page now shows a different value, verify what the page shows: the change is sent to a person for review, not applied.`;

export interface RepairView {
  /** Every step of the script, one line each. */
  steps: string[];
  /** 0-based index of the broken step. */
  broken: number;
  error: string;
  assertion: boolean;
  iteration: number;
  maxIterations: number;
  note?: string;
  lastResults: string[];
  refused?: string;
  cleared: string[];
  variableNames: string[];
  url: string;
  title: string;
  tree: string;
}

export function repairPrompt(v: RepairView): string {
  const out: string[] = [];
  out.push(
    `Script steps:\n${v.steps
      .map((s, i) => `${i < v.broken ? '[ran]   ' : i === v.broken ? '[broken]' : '[later] '} ${i + 1}. ${s}`)
      .join('\n')}`,
  );
  out.push(
    `Broken step ${v.broken + 1}: ${v.steps[v.broken]}\nIts error: ${v.error}\n${v.assertion ? 'This step is an assertion: repair it with verification commands.\n' : ''}Iteration ${v.iteration} of ${v.maxIterations}.`,
  );
  if (v.iteration === v.maxIterations) out.push('This is the last iteration for this step.');
  if (v.note) out.push(`Your note from the previous iteration: ${v.note}`);
  if (v.refused) out.push(`Your last status was not accepted: ${v.refused}`);
  if (v.lastResults.length) out.push(`Results of your last commands:\n${v.lastResults.join('\n')}`);
  if (v.cleared.length) out.push(`Cleared before this iteration (no action needed): ${v.cleared.join('; ')}`);
  if (v.variableNames.length)
    out.push(`Secrets you may type (as placeholders): ${v.variableNames.map((n) => `%${n}%`).join(', ')}`);
  out.push(`Current page: ${v.url}\nTitle: ${v.title}\n${v.tree}`);
  return out.join('\n\n');
}
