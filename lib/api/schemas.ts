import { z } from '@hono/zod-openapi';
import { ACTION_METHODS } from '../actions/types.ts';

/** One zod schema per body: TypeScript type, request validation and the OpenAPI entry at once. */

const HttpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL');

export const ModelChoice = z
  .union([
    z.string().describe('provider/model, e.g. openai/gpt-4.1-mini or anthropic/claude-sonnet-4-5'),
    z.object({
      name: z.string().describe('provider/model'),
      baseURL: HttpUrl.optional().describe('for openai-compatible servers (Ollama, vLLM, OpenRouter…)'),
      apiKey: z.string().optional(),
    }),
  ])
  .openapi('ModelChoice');

export const OpOptions = z
  .object({
    selector: z
      .string()
      .min(1)
      .optional()
      .describe('CSS or XPath (/…, xpath=…) selector to scope the page to'),
    vision: z.enum(['fallback', 'always', 'never']).optional(),
    budget: z
      .number()
      .int()
      .min(200)
      .max(200_000)
      .optional()
      .describe('token budget for page text per model call'),
    timeoutMs: z.number().int().min(100).max(120_000).optional().describe('per-action timeout'),
  })
  .strict()
  .openapi('OpOptions');

const Target = z.union([
  z.object({ id: z.number().int().positive() }).strict(),
  z
    .object({
      locator: z.union([
        z.string().min(1),
        z.object({ xpath: z.string().min(1), role: z.string(), name: z.string() }),
      ]),
    })
    .strict(),
  z.object({ xPct: z.number().min(0).max(100), yPct: z.number().min(0).max(100) }).strict(),
]);

export const ActionBody = z
  .object({
    method: z.enum(ACTION_METHODS),
    target: Target.optional(),
    to: Target.optional(),
    args: z.array(z.string()).optional(),
    description: z.string().optional(),
  })
  .strict()
  .openapi('Action');

/** An element returned by /v1/observe, accepted as-is by /v1/act. */
export const ObservedBody = z
  .object({
    id: z.number().int().optional(),
    description: z.string(),
    method: z.enum(ACTION_METHODS),
    arguments: z.array(z.string()),
    selector: z.string().min(1),
    role: z.string(),
    name: z.string(),
  })
  .openapi('ObservedElement');

const Common = {
  url: HttpUrl.optional().describe('page to open in a fresh browser context'),
  cdpUrl: z
    .string()
    .url()
    .refine((u) => /^(wss?|https?):\/\//i.test(u), 'must be a ws:, wss:, http: or https: URL')
    .optional()
    .describe(
      'attach to a remote browser session instead (keeps state across calls); only endpoints the operator allows',
    ),
  variables: z
    .record(z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'), z.string())
    .optional()
    .describe('secret values used as %name% in instructions; never sent to the model'),
  model: ModelChoice.optional(),
  options: OpOptions.optional(),
};

const needsPage = (b: { url?: string | undefined; cdpUrl?: string | undefined }) => !!b.url || !!b.cdpUrl;
const PAGE_MESSAGE = { message: 'give either url or cdpUrl', path: ['url'] };

export const ActRequest = z
  .object({
    ...Common,
    instruction: z.string().min(1).max(2000).optional(),
    action: z.union([ActionBody, ObservedBody]).optional(),
  })
  .strict()
  .refine(needsPage, PAGE_MESSAGE)
  .refine((b) => !!b.instruction !== !!b.action, {
    message: 'give exactly one of instruction or action',
    path: ['instruction'],
  })
  .openapi('ActRequest');

export const ObserveRequest = z
  .object({ ...Common, instruction: z.string().min(1).max(2000).optional() })
  .strict()
  .refine(needsPage, PAGE_MESSAGE)
  .openapi('ObserveRequest');

export const ExtractRequest = z
  .object({
    ...Common,
    instruction: z.string().min(1).max(2000).optional(),
    schema: z.record(z.string(), z.unknown()).optional().describe('JSON Schema of the data to return'),
  })
  .strict()
  .refine(needsPage, PAGE_MESSAGE)
  .openapi('ExtractRequest');

export const Usage = z
  .object({
    promptTokens: z.number(),
    completionTokens: z.number(),
    cachedTokens: z.number(),
    model: z.string(),
    ms: z.number(),
    calls: z.number(),
    costUsd: z.number().optional(),
  })
  .openapi('Usage');

const Resolved = z.enum(['cache', 'matcher', 'llm', 'direct']);

export const ErrorBody = z
  .object({
    error: z.object({
      kind: z.string(),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      candidates: z.array(z.object({ id: z.number(), role: z.string(), name: z.string() })).optional(),
      url: z.string().optional().describe('where a blocked or unreachable navigation was headed'),
      retryable: z.boolean().optional().describe('the same request may well work if sent again'),
    }),
  })
  .openapi('Error');

const PageStatus = z.number().int().optional().describe('HTTP status of the page (a 404 page is still read)');

export const ActResponse = z
  .object({
    success: z.boolean(),
    message: z.string(),
    actionDescription: z.string(),
    actions: z.array(z.unknown()),
    usage: Usage,
    resolvedBy: Resolved,
    cache: z.enum(['hit', 'miss', 'healed']).optional(),
    error: z.object({ kind: z.string(), message: z.string(), url: z.string().optional() }).optional(),
    url: z.string(),
    status: PageStatus,
    ms: z.number(),
  })
  .openapi('ActResponse');

export const ObserveResponse = z
  .object({
    elements: z.array(ObservedBody),
    usage: Usage,
    resolvedBy: Resolved,
    url: z.string(),
    status: PageStatus,
    ms: z.number(),
  })
  .openapi('ObserveResponse');

export const ExtractResponse = z
  .object({
    data: z.unknown(),
    usage: Usage,
    resolvedBy: Resolved,
    chunks: z.object({ read: z.number(), total: z.number() }),
    url: z.string(),
    status: PageStatus,
    ms: z.number(),
  })
  .openapi('ExtractResponse');

export type ActRequest = z.infer<typeof ActRequest>;
export type ObserveRequest = z.infer<typeof ObserveRequest>;
export type ExtractRequest = z.infer<typeof ExtractRequest>;
