/**
 * The task of a run: what every sample's agent is asked to do, with the run's limits. One zod schema
 * gives the type, the validator (errors name the field) and the JSON Schema a planner model fills.
 */
import { z } from 'zod';
import { ScenarioSchema } from '../scenarios/spec.ts';
import { keySegment } from '../store/keys.ts';
import { ID_RULE, ID_RULE_TEXT } from '../store/names.ts';
import { describeIssue, validateWorkflow } from '../workflows/validate.ts';

/** Samples of a run worked on at once when its spec does not say. */
export const DEFAULT_RUN_CONCURRENCY = 4;

const host = z
  .string()
  .min(1)
  .regex(/^[a-z0-9.-]+(:\d+)?$|^default$/i, 'a host name like "example.com" (optionally :port) or "default"');

export const RateLimitSchema = z.object({
  ratePerSecond: z.number().positive().max(1000).describe('requests per second allowed on average'),
  burst: z.number().int().min(1).max(100).optional().describe('requests allowed at once after a pause'),
});
export type RateLimit = z.infer<typeof RateLimitSchema>;

export const AuthProfileSchema = z
  .object({
    file: z.string().min(1).optional().describe('a Playwright storage-state JSON file (CLI only)'),
    key: z.string().min(1).optional().describe("an evidence-store key under the tenant's prefix"),
  })
  .refine((a) => (a.file === undefined) !== (a.key === undefined), {
    message: 'give exactly one of "file" or "key"',
  })
  .describe('saved cookies and localStorage loaded into every sample context (a signed-in profile)');

export const DiscoverySchema = z
  .object({
    listings: z.array(z.url()).min(1).max(100).describe('listing pages the sample URLs are collected from'),
    linkSelector: z.string().min(1).optional().describe('CSS selector of the sample links (zero tokens)'),
    include: z.string().min(1).optional().describe('keep only URLs matching this regex or * glob'),
    exclude: z.string().min(1).optional().describe('drop URLs matching this regex or * glob'),
    instruction: z.string().min(1).optional().describe('ask the model for the links instead (costs tokens)'),
    maxUrls: z.number().int().min(1).max(100_000).optional().describe('most sample URLs (default 10,000)'),
    maxPages: z.number().int().min(1).max(10_000).optional().describe('most listing pages per listing'),
  })
  .strict()
  .describe('collect the samples from listing pages before the fan-out (the Discover state)');

export const TaskSpecSchema = z
  .object({
    goal: z.string().trim().min(1).max(4000).describe('what the agent must do on each sample URL'),
    mode: z
      .enum(['agent', 'extract', 'cua', 'workflow', 'scenario'])
      .default('agent')
      .describe(
        "agent: the step-by-step agent (navigate, click, type, save progress); extract: one read of the sample page (one model call); cua: a computer-use model (the spec's model, anthropic/…, openai/… or google/…) works from screenshots; workflow: the spec's workflow replayed on each sample (no model unless it has AI nodes, heals or falls back); scenario: the spec's step list carried out and proved on each sample (chosen by giving `scenario`)",
      ),
    scenario: ScenarioSchema.optional().describe(
      'mode "scenario": the steps every sample carries out in order, each proved by its verifications',
    ),
    workflow: z
      .union([
        z
          .object({
            id: z.string().regex(ID_RULE, ID_RULE_TEXT).describe('a stored workflow id of this tenant'),
            version: z.number().int().min(1).optional().describe('pin a version (default: the latest)'),
          })
          .strict(),
        z.object({ nodes: z.array(z.unknown()) }).loose(),
      ])
      .optional()
      .describe('mode "workflow": a stored workflow by id, or a workflow document (stored for the run)'),
    fallback: z
      .enum(['agent', 'none'])
      .default('none')
      .describe(
        'mode "workflow": a sample whose workflow fails (cannot heal) goes to the agent with the goal',
      ),
    requireVerified: z
      .boolean()
      .optional()
      .describe('mode "workflow": refuse a workflow version not yet verified (N identical successes)'),
    outputSchema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema (an object schema) of the data each sample returns'),
    requiredFields: z
      .array(z.string().min(1))
      .optional()
      .describe('fields that must be present (not null) for a sample to count as done'),
    requiredArtifacts: z
      .array(z.string().min(1))
      .optional()
      .describe('screenshot labels that must have been saved for a sample to count as done'),
    keywords: z.array(z.string().min(1)).optional().describe('words that mark relevant page parts'),
    maxSteps: z.number().int().min(1).max(200).default(20).describe('agent steps per sample'),
    model: z
      .string()
      .regex(/^[a-z-]+\/.+$/, 'written "provider/model", e.g. openai/gpt-4.1-mini')
      .optional()
      .describe('model for this run; the configured default when absent'),
    vision: z.enum(['fallback', 'always', 'never']).default('fallback').describe('screenshots to the model'),
    authProfile: AuthProfileSchema.optional(),
    expectedItems: z.number().int().min(1).optional().describe('items a list answer should hold'),
    rateLimits: z
      .record(host, RateLimitSchema)
      .optional()
      .describe('per-host pacing shared by all workers; the "default" entry applies to other hosts'),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(DEFAULT_RUN_CONCURRENCY)
      .describe('samples worked on at once'),
    wallClockSeconds: z.number().int().min(1).max(86_400).optional().describe('time limit per sample'),
    maxInfraErrors: z
      .number()
      .int()
      .min(1)
      .max(50)
      .optional()
      .describe(
        'infrastructure errors in a row (page will not load, browser died) that stop a sample as retryable (default 5)',
      ),
    summaryModel: z
      .string()
      .regex(/^[a-z-]+\/.+$/, 'written "provider/model", e.g. openai/gpt-4.1-mini')
      .optional()
      .describe(
        "a cheaper model for the agent's history summaries (default: the run's model, also its fallback)",
      ),
    maxSlices: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(50)
      .describe('slices (Lambda invocations) per sample before it is failed as stuck'),
    discovery: DiscoverySchema.optional(),
    systemPrompt: z
      .string()
      .trim()
      .min(1)
      .max(4000)
      .optional()
      .describe("standing instructions added to every sample agent's system prompt (the planner writes one)"),
    judge: z
      .union([
        z.boolean(),
        z
          .object({
            rubric: z
              .array(z.string().min(1).max(1000))
              .max(50)
              .optional()
              .describe('extra criteria, one per item'),
            expectedAnswer: z.string().min(1).max(4000).optional().describe('the answer the data must hold'),
            model: z
              .string()
              .regex(/^[a-z-]+\/.+$/, 'written "provider/model", e.g. openai/gpt-4.1-mini')
              .optional()
              .describe("the judge's model (default: the run's)"),
          })
          .strict(),
      ])
      .optional()
      .describe(
        'the judge rules on every finished sample from its evidence (the Judge state); verdicts in combined.csv',
      ),
    computerUse: z
      .object({
        model: z
          .string()
          .regex(
            /^(anthropic|openai|google)\/.+$/,
            'written "provider/model" with provider anthropic, openai or google',
          )
          .describe('the computer-use model, e.g. anthropic/claude-sonnet-4, openai/computer-use-preview'),
        format: z
          .enum(['png', 'jpeg'])
          .optional()
          .describe('screenshot format sent to the model (default png)'),
      })
      .strict()
      .optional()
      .describe(
        'agent mode by screenshots and coordinates (canvas apps, drawn controls) instead of the page outline',
      ),
  })
  .strict();

/** The spec after validation, with defaults filled in. */
export type TaskSpec = z.output<typeof TaskSpecSchema>;
/** The spec as written by a user or a planner (defaults may be missing). */
export type TaskSpecInput = z.input<typeof TaskSpecSchema>;

export class SpecError extends Error {
  override name = 'SpecError';
  constructor(
    message: string,
    readonly issues: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** Validates a spec; the error names the first bad field (`maxSteps: …`). */
export function parseTaskSpec(value: unknown): TaskSpec {
  const parsed = TaskSpecSchema.safeParse(withScenarioDefaults(value));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({
      path: i.path.map(String).join('.') || '(spec)',
      message: i.message,
    }));
    throw new SpecError(`task spec ${issues[0]?.path}: ${issues[0]?.message}`, issues);
  }
  if (parsed.data.mode === 'cua' && !parsed.data.computerUse) {
    const model = parsed.data.model;
    if (!model || !/^(anthropic|openai|google)\/.+/.test(model)) {
      const message = 'mode "cua" needs a computer-use model: anthropic/…, openai/… or google/…';
      throw new SpecError(`task spec model: ${message}`, [{ path: 'model', message }]);
    }
    parsed.data.computerUse = { model };
  }
  checkWorkflowFields(parsed.data);
  checkScenarioFields(parsed.data);
  const schema = parsed.data.outputSchema;
  if (schema && schema.type !== undefined && schema.type !== 'object')
    throw new SpecError('task spec outputSchema: must describe an object (type "object")', [
      { path: 'outputSchema', message: 'must describe an object' },
    ]);
  if (schema) {
    // Checked now, not on every sample: a schema no validator can use would fail them all.
    try {
      z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
    } catch (err) {
      const message = `not a usable JSON Schema (${(err as Error).message.split('\n')[0]})`;
      throw new SpecError(`task spec outputSchema: ${message}`, [{ path: 'outputSchema', message }]);
    }
  }
  return parsed.data;
}

/**
 * Mode "workflow" names its workflow, and only that mode does; a document given inline is validated
 * whole here, so a bad one is refused before any sample runs (the issue names node alias and field).
 */
function checkWorkflowFields(spec: TaskSpec): void {
  const refuse = (path: string, message: string, issues = [{ path, message }]): never => {
    throw new SpecError(`task spec ${path}: ${message}`, issues);
  };
  if (spec.mode !== 'workflow') {
    if (spec.workflow !== undefined) refuse('workflow', 'only with mode "workflow"');
    if (spec.requireVerified !== undefined) refuse('requireVerified', 'only with mode "workflow"');
    return;
  }
  if (spec.workflow === undefined)
    refuse('workflow', 'mode "workflow" needs a workflow: { "id": "…" } or a workflow document');
  if (spec.workflow && 'nodes' in spec.workflow) {
    const checked = validateWorkflow(spec.workflow);
    if (!checked.ok) {
      const issues = checked.issues.map((i) => ({
        path: `workflow.${i.field}`,
        message: `${i.alias ? `(${i.alias}) ` : ''}${i.message}`,
      }));
      refuse('workflow', checked.issues.map(describeIssue).join('; '), issues);
    }
  }
}

/**
 * A spec that gives `scenario` is a scenario run: `mode` may be left out, and so may `goal` (the
 * steps say what to do; the goal, shown in reports, is made from the first of them). Pure.
 */
function withScenarioDefaults(value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const raw = value as Record<string, unknown>;
  if (raw.scenario === undefined) return value;
  const steps = (raw.scenario as { steps?: unknown })?.steps;
  const first = Array.isArray(steps) ? steps[0] : undefined;
  const text = typeof first === 'string' ? first : (first as { do?: unknown } | undefined)?.do;
  const n = Array.isArray(steps) ? steps.length : 0;
  return {
    ...raw,
    ...(raw.mode === undefined ? { mode: 'scenario' } : {}),
    // Without a first step the goal is left to say nothing: the error is then about the steps.
    ...(raw.goal === undefined
      ? {
          goal: `scenario of ${n} step${n === 1 ? '' : 's'}${typeof text === 'string' ? `: ${text}` : ''}`.slice(
            0,
            4000,
          ),
        }
      : {}),
  };
}

/** Mode "scenario" and the `scenario` field go together. */
function checkScenarioFields(spec: TaskSpec): void {
  const refuse = (path: string, message: string): never => {
    throw new SpecError(`task spec ${path}: ${message}`, [{ path, message }]);
  };
  if (spec.mode === 'scenario' && !spec.scenario)
    refuse('scenario', 'mode "scenario" needs a scenario: { "steps": ["…", …] }');
  if (spec.mode !== 'scenario' && spec.scenario) refuse('scenario', 'only with mode "scenario"');
}

/** The spec's JSON Schema, e.g. for the planner's structured reply or for API documentation. */
export function taskSpecJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(TaskSpecSchema, { io: 'input' }) as Record<string, unknown>;
}

/**
 * The pacing a spec that names no `rateLimits` gets (the reference's table: one request per 3 s on
 * LinkedIn, per 0.5 s on GitHub, per 0.2 s elsewhere). A named domain covers its subdomains.
 */
export const DEFAULT_RATE_LIMITS: Readonly<Record<string, RateLimit>> = {
  'linkedin.com': { ratePerSecond: 1 / 3, burst: 1 },
  'github.com': { ratePerSecond: 2, burst: 1 },
  default: { ratePerSecond: 5, burst: 1 },
};

// Loopback is the caller's own machine (a local fixture or dev server), not a site to be polite to:
// the default table leaves it unpaced; a spec's own rateLimits still apply to it.
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])(:\d+)?$/;

const hostMatch = (entry: string, host: string) => {
  const name = host.replace(/:\d+$/, '');
  const e = entry.toLowerCase();
  return e === host || e === name || name.endsWith(`.${e}`);
};

/** The rate limit that applies to a URL's host: its own entry, else the `default` one; the default table when the spec has none. Pure. */
export function rateLimitFor(
  spec: Pick<TaskSpec, 'rateLimits'>,
  url: string,
): { host: string; ratePerSecond: number; burst?: number } | undefined {
  const h = new URL(url).host.toLowerCase();
  if (!spec.rateLimits && LOOPBACK.test(h)) return undefined;
  const limits = spec.rateLimits ?? DEFAULT_RATE_LIMITS;
  const own = spec.rateLimits
    ? Object.entries(limits).find(([k]) => k.toLowerCase() === h)?.[1]
    : Object.entries(limits).find(([k]) => k !== 'default' && hostMatch(k, h))?.[1];
  const limit = own ?? limits.default;
  return limit ? { host: h, ...limit } : undefined;
}

/**
 * The token bucket one tenant's requests to a host take from. Per tenant: another tenant's runs on
 * the same site, with their own rates and bursts, never slow or stop this one's.
 */
export const rateBucketKey = (tenant: string, host: string) => `host:${keySegment(tenant)}/${host}`;
