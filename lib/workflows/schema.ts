/**
 * The workflow document: one zod schema gives the type, the validator, the JSON Schema (for the
 * director model and the docs) and the OpenAPI entry. "Deterministic navigation, intelligent
 * processing": every node type says by its name whether it may call a model (`browser_ai_*`,
 * `cognition`, `agent`) or never does (the rest). Cross-node rules (unique aliases, templates that
 * name known aliases) live in `validate.ts`; this file checks each node on its own.
 */
import { z } from 'zod';

import {
  AgentConfigSchema,
  AliasSchema,
  type BrowserActionConfig,
  BrowserActionConfigSchema,
  BrowserAiActionConfigSchema,
  BrowserAiQueryConfigSchema,
  BrowserQueryConfigSchema,
  CognitionConfigSchema,
  RetrySchema,
  storeVariable,
  Text,
  TransformConfigSchema,
} from './node-configs.ts';

export {
  AgentConfigSchema,
  AliasSchema,
  type BrowserActionConfig,
  BrowserActionConfigSchema,
  BrowserAiActionConfigSchema,
  BrowserAiQueryConfigSchema,
  BrowserQueryConfigSchema,
  CognitionConfigSchema,
  type LocatorCandidate,
  LocatorCandidateSchema,
  type PinnedActionConfig,
  type PinnedTarget,
  PinnedTargetSchema,
  type PostCondition,
  PostConditionSchema,
  RetrySchema,
  TransformConfigSchema,
} from './node-configs.ts';

// ── Nodes ─────────────────────────────────────────────────────────────────────────────────────

const base = {
  alias: AliasSchema,
  description: z.string().max(2000).default(''),
};

export const NODE_TYPES = [
  'browser_action',
  'browser_ai_action',
  'browser_query',
  'browser_ai_query',
  'transform',
  'cognition',
  'agent',
  'iterate',
  'route',
  'handle',
  'context',
  'group',
] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/** Node types that may spend tokens; every other type never calls a model. */
export const AI_NODE_TYPES: readonly NodeType[] = [
  'browser_ai_action',
  'browser_ai_query',
  'cognition',
  'agent',
];

export type WorkflowNode =
  | { alias: string; description: string; type: 'browser_action'; config: BrowserActionConfig }
  | {
      alias: string;
      description: string;
      type: 'browser_ai_action';
      config: z.infer<typeof BrowserAiActionConfigSchema>;
    }
  | {
      alias: string;
      description: string;
      type: 'browser_query';
      config: z.infer<typeof BrowserQueryConfigSchema>;
    }
  | {
      alias: string;
      description: string;
      type: 'browser_ai_query';
      config: z.infer<typeof BrowserAiQueryConfigSchema>;
    }
  | { alias: string; description: string; type: 'transform'; config: z.infer<typeof TransformConfigSchema> }
  | { alias: string; description: string; type: 'cognition'; config: z.infer<typeof CognitionConfigSchema> }
  | { alias: string; description: string; type: 'agent'; config: z.infer<typeof AgentConfigSchema> }
  | {
      alias: string;
      description: string;
      type: 'iterate';
      config: {
        /** JSONata expression yielding the array. */
        over: string;
        /** Name the current element goes by in templates and expressions (default `item`). */
        as: string;
        /** Iterations at once (browser nodes of concurrent iterations each get their own tab). */
        concurrency: number;
        nodes: WorkflowNode[];
        store_variable?: boolean;
      };
    }
  | {
      alias: string;
      description: string;
      type: 'route';
      config: {
        /** The first branch whose JSONata `when` is truthy runs; else `otherwise`. */
        branches: { when: string; nodes: WorkflowNode[] }[];
        otherwise?: WorkflowNode[];
        store_variable?: boolean;
      };
    }
  | {
      alias: string;
      description: string;
      type: 'handle';
      config: {
        nodes: WorkflowNode[];
        retry?: z.infer<typeof RetrySchema>;
        /** Runs when the body still fails after its retries; the error is `{{<alias>.error}}`. */
        fallback?: WorkflowNode[];
        store_variable?: boolean;
      };
    }
  | {
      alias: string;
      description: string;
      type: 'context';
      /** Each value is a JSONata expression; the results are kept under `context.<key>`. */
      config: { set: Record<string, string>; store_variable?: boolean };
    }
  | {
      alias: string;
      description: string;
      type: 'group';
      config: { nodes: WorkflowNode[]; store_variable?: boolean };
    };

const nodeList = (): z.ZodType<WorkflowNode[]> => z.array(NodeSchema).min(1).max(500);

export const NodeSchema: z.ZodType<WorkflowNode> = z.lazy(() =>
  z.discriminatedUnion('type', [
    z.object({ ...base, type: z.literal('browser_action'), config: BrowserActionConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('browser_ai_action'), config: BrowserAiActionConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('browser_query'), config: BrowserQueryConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('browser_ai_query'), config: BrowserAiQueryConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('transform'), config: TransformConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('cognition'), config: CognitionConfigSchema }).strict(),
    z.object({ ...base, type: z.literal('agent'), config: AgentConfigSchema }).strict(),
    z
      .object({
        ...base,
        type: z.literal('iterate'),
        config: z
          .object({
            over: Text,
            as: AliasSchema.default('item'),
            concurrency: z.number().int().min(1).max(16).default(1),
            nodes: nodeList(),
            store_variable: storeVariable,
          })
          .strict(),
      })
      .strict(),
    z
      .object({
        ...base,
        type: z.literal('route'),
        config: z
          .object({
            branches: z
              .array(z.object({ when: Text, nodes: nodeList() }).strict())
              .min(1)
              .max(20),
            otherwise: nodeList().optional(),
            store_variable: storeVariable,
          })
          .strict(),
      })
      .strict(),
    z
      .object({
        ...base,
        type: z.literal('handle'),
        config: z
          .object({
            nodes: nodeList(),
            retry: RetrySchema.optional(),
            fallback: nodeList().optional(),
            store_variable: storeVariable,
          })
          .strict(),
      })
      .strict(),
    z
      .object({
        ...base,
        type: z.literal('context'),
        config: z
          .object({
            set: z.record(z.string().regex(/^[A-Za-z_][\w]*$/, 'a variable name'), Text),
            store_variable: storeVariable,
          })
          .strict(),
      })
      .strict(),
    z
      .object({
        ...base,
        type: z.literal('group'),
        config: z.object({ nodes: nodeList(), store_variable: storeVariable }).strict(),
      })
      .strict(),
  ]),
) as z.ZodType<WorkflowNode>;

// ── The document ──────────────────────────────────────────────────────────────────────────────

export const WorkflowInputSchema = z
  .object({
    type: z.enum(['string', 'number', 'boolean', 'json']).default('string'),
    default: z.unknown().optional(),
    description: z.string().max(1000).optional(),
    /** When true the value must be given (no default). */
    required: z.boolean().optional(),
  })
  .strict();
export type WorkflowInput = z.infer<typeof WorkflowInputSchema>;

export const StaticReadSchema = z
  .object({
    /** The check found the served HTML gives exactly what the rendered page gives. */
    verified: z.boolean(),
    /** false: never read without the browser, whatever the check found. */
    enabled: z.boolean().default(true),
    /** The page it was checked on, and when. */
    url: z.string().max(4000).optional(),
    checkedAt: z.string().max(40).optional(),
    /** Why it is not verified (the first difference, or what kind of workflow this is). */
    reason: z.string().max(1000).optional(),
  })
  .strict();
export type StaticRead = z.output<typeof StaticReadSchema>;

export const WorkflowSchema = z
  .object({
    name: z.string().trim().min(1).max(200),
    /** The document's version; the store assigns it on save (a heal writes the next one). */
    version: z.number().int().min(1).default(1),
    description: z.string().max(4000).optional(),
    /** Typed inputs, referenced as `{{inputs.<name>}}`; per-sample values of a run fill them. */
    inputs: z
      .record(z.string().regex(/^[A-Za-z_][\w]*$/, 'an input name (letters, digits, _)'), WorkflowInputSchema)
      .default({}),
    nodes: z.array(NodeSchema).min(1).max(500),
    /**
     * Whether replay may read its pages without a browser (static-read.ts). Set by the compile
     * check: the extractors gave the same data from the served HTML, parsed in Node, as from the
     * rendered page. `enabled: false` is a person's switch: every page then opens in the browser.
     */
    staticRead: StaticReadSchema.optional(),
    /** Where the workflow came from when it was compiled (run / sample / kind). */
    source: z
      .object({
        kind: z.enum(['agent', 'extract', 'scenario', 'acts', 'plan', 'manual']),
        runId: z.string().max(200).optional(),
        sampleId: z.string().max(200).optional(),
        url: z.string().max(4000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A validated workflow with defaults filled in. */
export type Workflow = z.output<typeof WorkflowSchema>;
/** A workflow as written by a person or a model. */
export type WorkflowInputDoc = z.input<typeof WorkflowSchema>;

/** The document's JSON Schema (the director model's reply shape and the API docs). */
export function workflowJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(WorkflowSchema, { io: 'input', cycles: 'ref' }) as Record<string, unknown>;
}
