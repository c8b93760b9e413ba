/**
 * A scenario: an ordered list of plain-language steps, each optionally with the outcome it must
 * lead to. One zod schema gives the type, the validator (errors name the field) and the JSON Schema
 * (task specs, the API's OpenAPI entry). Step files are YAML or JSON; a step may be written as a
 * bare string (`- Open the settings`) or as `{ do, expect }`.
 */
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const StepObject = z
  .object({
    do: z.string().trim().min(1, 'must not be empty').max(2000).describe('what to do, in plain words'),
    expect: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(2000)
      .optional()
      .describe('the outcome that proves the step happened (checked with at least one verification)'),
  })
  .strict();

export const ScenarioStepSchema = z
  .union([z.string().trim().min(1, 'must not be empty').max(2000), StepObject])
  .transform((s) => (typeof s === 'string' ? { do: s } : s));

export const ScenarioSchema = z
  .object({
    steps: z
      .array(ScenarioStepSchema)
      .min(1, 'needs at least one step')
      .max(50, 'at most 50 steps')
      .describe('carried out in order; a step that cannot be done ends the scenario there'),
    vision: z
      .enum(['text', 'som'])
      .optional()
      .describe(
        'text (default): the model reads the page outline, no image tokens; som: it also sees the viewport screenshot with numbered markers (same ids) and an element map — for visual pages (icons, canvas)',
      ),
  })
  .strict()
  .describe(
    'an ordered step list, each step done and (when it says verify / check / ensure, or has expect) proved',
  );

export type ScenarioStep = { do: string; expect?: string };
export type Scenario = { steps: ScenarioStep[]; vision?: 'text' | 'som' };
export type ScenarioInput = z.input<typeof ScenarioSchema>;

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** Validates a scenario; the error names the first bad field (`steps.2.do: must not be empty`). */
export function parseScenario(value: unknown): Scenario {
  const got = ScenarioSchema.safeParse(value);
  if (!got.success) {
    const issue = got.error.issues[0];
    const path = issue?.path.map(String).join('.') || 'scenario';
    throw new ScenarioError(`${path}: ${issue?.message ?? 'invalid'}`);
  }
  return got.data as Scenario;
}

/**
 * A step file's text (YAML or JSON; JSON is YAML too). A bare list is taken as the steps. `name`
 * is the file's name, for the error.
 */
export function parseScenarioText(text: string, name: string): Scenario {
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (err) {
    const first = (err as Error).message.split('\n')[0];
    throw new ScenarioError(`${name}: not valid YAML or JSON (${first})`);
  }
  if (Array.isArray(value)) value = { steps: value };
  if (value === null || typeof value !== 'object')
    throw new ScenarioError(`${name}: expected a list of steps or { steps: [...] }`);
  try {
    return parseScenario(value);
  } catch (err) {
    throw new ScenarioError(`${name}: ${(err as Error).message}`);
  }
}

/** The scenario's JSON Schema (what a caller or a planner writes). */
export function scenarioJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ScenarioSchema, { io: 'input' }) as Record<string, unknown>;
}

/** Words that make a step a check: it must then produce at least one verification command. */
const CHECK_WORDS = /\b(verify|verifies|check|checks|ensure|ensures|confirm|confirms|assert|make sure)\b/i;

/** Does this step have to be proved by a verification (it says so, or names an expected outcome)? Pure. */
export function needsVerification(step: ScenarioStep): boolean {
  return step.expect !== undefined || CHECK_WORDS.test(step.do);
}
