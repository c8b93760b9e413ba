/**
 * What the model answers on each iteration of a scenario step: its reasoning, a status, one list
 * of commands that mixes actions and verifications, a note to its next iteration, learnings about
 * the site, and any blocker it saw with the commands that clear it. Sent as a strict JSON Schema /
 * forced tool, so there is never prose to parse.
 */
import { z } from 'zod';

export const VERIFICATION_TYPES = [
  'textContains',
  'textEquals',
  'valueEquals',
  'valueEmpty',
  'isVisible',
  'isHidden',
  'isEnabled',
  'isDisabled',
  'isChecked',
  'isUnchecked',
  'countEquals',
  'countGreaterThan',
  'countLessThan',
  'hasClass',
  'hasAttribute',
] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];

/** Checks over a set of elements (a CSS selector); the rest look at one element (an outline id). */
export const COUNT_TYPES: ReadonlySet<VerificationType> = new Set([
  'countEquals',
  'countGreaterThan',
  'countLessThan',
]);
/** Checks that compare with `expected` (the rest need none). */
export const NEEDS_EXPECTED: ReadonlySet<VerificationType> = new Set([
  'textContains',
  'textEquals',
  'valueEquals',
  'countEquals',
  'countGreaterThan',
  'countLessThan',
  'hasClass',
  'hasAttribute',
]);

export const SCENARIO_ACTIONS = [
  'click',
  'dblclick',
  'hover',
  'fill',
  'type',
  'press',
  'select',
  'check',
  'uncheck',
  'scroll',
  'goto',
  'back',
  'wait',
] as const;
export type ScenarioAction = (typeof SCENARIO_ACTIONS)[number];

const id = z.number().int().describe('element id from the page outline, e.g. 12 for [12]');

export const ActionCommandSchema = z.object({
  kind: z.literal('action'),
  action: z.enum(SCENARIO_ACTIONS),
  id: id.optional().describe('the element acted on (not for goto, back, wait, page scroll)'),
  value: z
    .string()
    .optional()
    .describe(
      'fill/type: the text (secrets as %name%); press: a key like Enter; select: the option label; goto: the URL; scroll: down|up|top|bottom; wait: milliseconds or text:Some text',
    ),
  description: z.string().optional().describe('what this command is for, in a few words'),
});
export type ActionCommand = z.infer<typeof ActionCommandSchema>;

export const VerificationCommandSchema = z.object({
  kind: z.literal('verify'),
  check: z.enum(VERIFICATION_TYPES),
  id: id.optional().describe('the element checked, when it has an id in the outline'),
  selector: z
    .string()
    .optional()
    .describe('CSS selector: the elements counted (count checks), or the element checked when it has no id'),
  expected: z
    .string()
    .optional()
    .describe(
      'text / value / number / class name / attribute (name or name=value) to compare with; not for valueEmpty, isVisible…isUnchecked',
    ),
  description: z.string().optional().describe('what this check proves'),
});
export type VerificationCommand = z.infer<typeof VerificationCommandSchema>;

export const CommandSchema = z.discriminatedUnion('kind', [ActionCommandSchema, VerificationCommandSchema]);
export type Command = z.infer<typeof CommandSchema>;

export const DECISION_STATUSES = ['continue', 'complete', 'stuck', 'infeasible'] as const;
export type DecisionStatus = (typeof DECISION_STATUSES)[number];

export const DecisionSchema = z.object({
  reasoning: z.string().describe('what you see and why these commands'),
  status: z
    .enum(DECISION_STATUSES)
    .describe(
      'complete: this step is achieved once these commands succeed; continue: more iterations needed; stuck: you cannot make progress; infeasible: the step cannot be done on this app',
    ),
  commands: z.array(CommandSchema).max(12).describe('run in order; actions and verifications mixed'),
  noteToFutureSelf: z
    .string()
    .describe('your plan, hypotheses, backups and what to check next: shown to you on the next iteration'),
  experiences: z
    .array(z.string())
    .max(3)
    .describe('short, reusable facts about how this app behaves (kept for later steps and samples)'),
  blockerDetected: z
    .object({
      description: z.string().describe('what covers the page (cookie banner, newsletter modal, chat widget)'),
      clearingCommands: z.array(ActionCommandSchema).min(1).max(4),
    })
    .optional()
    .describe('a banner or modal in the way: its clearing commands run before the commands'),
});
export type Decision = z.infer<typeof DecisionSchema>;

/** One command as it ran: ok or not, what happened, and for a verification what was found. */
export interface CommandResult {
  command: Command;
  ok: boolean;
  message: string;
  /** Verifications: the value seen on the page (text, value, count, classes…). */
  actual?: string;
  /** The command was not run (an earlier one failed or navigated). */
  skipped?: boolean;
}

/**
 * The status that stands after an iteration, and why when it is not the model's. Pure:
 * - `complete` with a failed (or skipped) command is refused: the step goes on, the reason shown next time;
 * - `complete` on a step that must be proved, with no passed verification in the step yet, is refused;
 * - `continue` on the last allowed iteration becomes `stuck`.
 */
export function settleStatus(input: {
  status: DecisionStatus;
  results: readonly CommandResult[];
  mustVerify: boolean;
  /** Verifications that passed earlier in this step plus this iteration's. */
  verifiedInStep: number;
  iteration: number;
  maxIterations: number;
}): { status: DecisionStatus; refused?: string } {
  const { status, results, iteration, maxIterations } = input;
  let out: { status: DecisionStatus; refused?: string } = { status };
  if (status === 'complete') {
    const failed = results.find((r) => !r.ok);
    if (failed)
      out = {
        status: 'continue',
        refused: `"complete" refused: ${failed.skipped ? 'a command was not run' : 'a command failed'} (${failed.message})`,
      };
    else if (input.mustVerify && input.verifiedInStep === 0)
      out = {
        status: 'continue',
        refused:
          '"complete" refused: this step must be proved with at least one verification command (kind "verify"), and none has passed yet',
      };
  }
  if (out.status === 'continue' && iteration >= maxIterations)
    return {
      status: 'stuck',
      refused: `${out.refused ? `${out.refused}; ` : ''}no completion after ${maxIterations} iterations`,
    };
  return out;
}
