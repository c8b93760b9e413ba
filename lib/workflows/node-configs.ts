/**
 * What each workflow node is configured with: pinned targets (how a compiled step finds its element
 * again without a model), post-conditions, and the per-type configuration blocks. `schema.ts` puts
 * them together into nodes and the document.
 */
import { z } from 'zod';
/** snake_case, as the reference asks: results are stored and templated under it. */
export const AliasSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a snake_case name (a-z, 0-9, _; starting with a letter; ≤ 64 chars)');

export const Text = z.string().min(1).max(4000);

// ── Pinned targets: how a compiled step finds its element again without a model ─────────────────

/** One way to find the element; a pinned target tries its candidates in order. */
export const LocatorCandidateSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('xpath'),
    /** Durable XPath chain (` >> ` crosses iframes and shadow roots), as perception writes it. */
    value: Text,
  }),
  z.object({ kind: z.literal('role'), role: z.string().min(1), name: z.string() }),
  z.object({ kind: z.literal('text'), text: Text, tag: z.string().min(1).optional() }),
  z.object({
    kind: z.literal('css'),
    /** A selector on a stable attribute: `#id`, `[name="…"]`, `[data-testid="…"]`, `[aria-label="…"]`. */
    value: Text,
  }),
]);
export type LocatorCandidate = z.infer<typeof LocatorCandidateSchema>;

/** What must be true after a step for it to count as done (recorded from what the run saw). */
export const PostConditionSchema = z.discriminatedUnion('kind', [
  /** The top-level URL matches: `*` is a wildcard, anything else literal. */
  z.object({ kind: z.literal('url'), pattern: Text }),
  /** A CSS selector matches (present: true) or matches nothing (present: false). */
  z.object({ kind: z.literal('element'), selector: Text, present: z.boolean().default(true) }),
  /** The step's own element holds this value (after fill / select); templates allowed. */
  z.object({ kind: z.literal('value'), equals: z.string() }),
  /** The step's own element is (un)checked. */
  z.object({ kind: z.literal('checked'), equals: z.boolean() }),
  /** This text is visible on the page. */
  z.object({ kind: z.literal('text'), contains: Text }),
]);
export type PostCondition = z.infer<typeof PostConditionSchema>;

export const PinnedTargetSchema = z
  .object({
    candidates: z.array(LocatorCandidateSchema).min(1).max(12),
    /** What the element is, in words: the instruction the heal falls back to. */
    instruction: Text,
    /** Role and accessible name seen when it was recorded: a candidate's hit must still look like this. */
    expect: z.object({ role: z.string(), name: z.string() }).optional(),
  })
  .strict();
export type PinnedTarget = z.infer<typeof PinnedTargetSchema>;

// ── Node configurations ───────────────────────────────────────────────────────────────────────

export const storeVariable = z
  .boolean()
  .optional()
  .describe("put this node's output in the workflow's returned data under its alias");

const postconditions = z.array(PostConditionSchema).max(8).optional();

/** Deterministic browser operations: never a model. */
export const BrowserActionConfigSchema = z.discriminatedUnion('action', [
  z
    .object({ action: z.literal('navigate'), url: Text, store_variable: storeVariable, postconditions })
    .strict(),
  z
    .object({
      action: z.literal('wait'),
      /** Milliseconds to wait, or until `text` shows / `selector` matches (at most `duration`). */
      duration: z.number().int().min(0).max(120_000).optional(),
      text: Text.optional(),
      selector: Text.optional(),
      store_variable: storeVariable,
    })
    .strict(),
  z
    .object({
      action: z.literal('openNewTab'),
      url: Text.optional(),
      name: z.string().min(1).max(100).optional(),
      store_variable: storeVariable,
    })
    .strict(),
  z
    .object({
      action: z.literal('switchTab'),
      tabName: z.string().min(1).max(100),
      store_variable: storeVariable,
    })
    .strict(),
  z.object({ action: z.literal('back'), store_variable: storeVariable }).strict(),
  z.object({ action: z.literal('forward'), store_variable: storeVariable }).strict(),
  z.object({ action: z.literal('refresh'), store_variable: storeVariable }).strict(),
  z
    .object({
      action: z.literal('screenshot'),
      /** Evidence label (file name part); never a path outside the sample's evidence. */
      path: z.string().min(1).max(100).optional(),
      fullPage: z.boolean().optional(),
      store_variable: storeVariable,
    })
    .strict(),
  z.object({ action: z.literal('listTabs'), store_variable: storeVariable }).strict(),
  z.object({ action: z.literal('getCurrentTab'), store_variable: storeVariable }).strict(),
  z
    .object({ action: z.literal('keypress'), key: z.string().min(1).max(50), store_variable: storeVariable })
    .strict(),
  // Recorded element actions of a compiled workflow: a pinned target, never a model on the happy path.
  z
    .object({
      action: z.enum(['click', 'dblclick', 'hover', 'check', 'uncheck']),
      target: PinnedTargetSchema,
      postconditions,
      store_variable: storeVariable,
    })
    .strict(),
  z
    .object({
      action: z.enum(['fill', 'select']),
      target: PinnedTargetSchema,
      /** Templates (`{{inputs.email}}`) and secret variables (`%password%`) allowed. */
      value: z.string().max(10_000),
      postconditions,
      store_variable: storeVariable,
    })
    .strict(),
  z
    .object({
      action: z.literal('press'),
      target: PinnedTargetSchema,
      key: z.string().min(1).max(50),
      postconditions,
      store_variable: storeVariable,
    })
    .strict(),
]);
export type BrowserActionConfig = z.infer<typeof BrowserActionConfigSchema>;
export type PinnedActionConfig = Extract<BrowserActionConfig, { target: PinnedTarget }>;

export const BrowserAiActionConfigSchema = z
  .object({
    action: z.enum(['click', 'type', 'act']),
    instruction: Text,
    /** What to type (for `type`): templates and `%secret%` variables allowed. */
    text: z.string().max(10_000).optional(),
    constraints: z.array(z.string().min(1).max(500)).max(20).optional(),
    store_variable: storeVariable,
  })
  .strict();

export const BrowserQueryConfigSchema = z.discriminatedUnion('method', [
  z
    .object({
      method: z.literal('validate'),
      rules: z
        .array(
          z
            .object({
              type: z.enum(['element_exists', 'element_absent']),
              selector: Text.describe('CSS selector'),
              description: z.string().max(500).optional(),
            })
            .strict(),
        )
        .min(1)
        .max(50),
      onFailure: z.enum(['stop_workflow', 'continue_with_error']).default('stop_workflow'),
      store_variable: storeVariable,
    })
    .strict(),
  z
    .object({
      /** A deterministic extractor (compiled from a model's extraction and checked against it). */
      method: z.literal('extract'),
      extractor: z
        .object({
          /** CSS selector of the repeating item when the data is a list. */
          item: Text.optional(),
          /** The array's field name in the output when `item` is set (output `{ [list]: [...] }`). */
          list: z.string().min(1).max(100).optional(),
          fields: z
            .record(
              z.string().min(1).max(100),
              z
                .object({
                  /** CSS, relative to the item when `item` is set; `:scope` means the item itself. */
                  selector: Text,
                  /** `text` (default), `href`, `src`, `value` or any attribute name. */
                  attr: z.string().min(1).max(100).optional(),
                  type: z.enum(['string', 'number', 'boolean']).default('string'),
                })
                .strict(),
            )
            .refine((f) => Object.keys(f).length > 0, 'at least one field'),
        })
        .strict(),
      /** Kept for healing: when the extractor finds nothing where data is required, the model is asked. */
      instruction: Text,
      schema: z.record(z.string(), z.unknown()).optional(),
      store_variable: storeVariable,
    })
    .strict(),
]);

export const BrowserAiQueryConfigSchema = z
  .object({
    method: z.enum(['extract', 'observe', 'assess']),
    instruction: Text,
    /** For extract: JSON Schema of the data. */
    schema: z.record(z.string(), z.unknown()).optional(),
    /** For assess: the state the page should be in ("login_page", "the cart holds 2 items"). */
    expected: z.string().min(1).max(1000).optional(),
    store_variable: storeVariable,
  })
  .strict();

export const TransformConfigSchema = z
  .object({
    /** A JSONata expression over `{ inputs, context, item, <alias>: output, … }`. */
    expression: Text,
    store_variable: storeVariable,
  })
  .strict();

export const CognitionConfigSchema = z
  .object({
    instruction: Text,
    /** JSONata expression or template selecting the data the model reasons over (default: all outputs). */
    input: z.string().min(1).max(4000).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    store_variable: storeVariable,
  })
  .strict();

export const AgentConfigSchema = z
  .object({
    goal: Text,
    maxSteps: z.number().int().min(1).max(100).optional(),
    schema: z.record(z.string(), z.unknown()).optional(),
    requiredFields: z.array(z.string().min(1)).optional(),
    store_variable: storeVariable,
  })
  .strict();

export const RetrySchema = z
  .object({
    attempts: z.number().int().min(1).max(10).default(3),
    backoffMs: z.number().int().min(0).max(60_000).default(500),
    factor: z.number().min(1).max(10).default(2),
  })
  .strict();
