import { z } from 'zod';
import type { Action, ActionMethod } from '../../actions/types.ts';
import type { ActResult, ObservedElement } from '../../ops/types.ts';

/**
 * The request bodies the Stagehand 3.7 SDK sends in API mode, and the result shapes it hands back
 * to its caller. Bodies are loose (the SDK adds fields over versions); the fields we use are checked.
 */

const Primitive = z.union([z.string(), z.number(), z.boolean()]);

export const ModelOption = z.union([
  z.string().min(1),
  z.looseObject({
    modelName: z.string().min(1),
    apiKey: z.string().optional(),
    baseURL: z.string().url().optional(),
  }),
]);
export type ModelOption = z.infer<typeof ModelOption>;

const Variables = z.record(
  z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'),
  z.union([Primitive, z.looseObject({ value: Primitive, description: z.string().optional() })]),
);

const Timeout = z.number().int().positive().max(600_000);

export const SessionStartBody = z.looseObject({
  modelName: z.string().optional(),
  browserbaseSessionID: z.string().optional(),
  browserbaseSessionCreateParams: z
    .looseObject({
      browserSettings: z
        .looseObject({
          viewport: z
            .object({
              width: z.number().int().min(200).max(4096),
              height: z.number().int().min(200).max(4096),
            })
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

export const ActBody = z.looseObject({
  input: z.union([
    z.string().min(1).max(2000),
    z.looseObject({
      selector: z.string().min(1),
      description: z.string().optional(),
      method: z.string().optional(),
      arguments: z.array(z.string()).optional(),
      role: z.string().optional(),
      name: z.string().optional(),
    }),
  ]),
  options: z
    .looseObject({
      model: ModelOption.optional(),
      variables: Variables.optional(),
      timeout: Timeout.optional(),
    })
    .optional(),
  frameId: z.string().optional(),
});

const ScopeOptions = {
  model: ModelOption.optional(),
  variables: Variables.optional(),
  timeout: Timeout.optional(),
  selector: z.string().min(1).optional(),
};

export const ObserveBody = z.looseObject({
  instruction: z.string().max(2000).optional(),
  options: z.looseObject(ScopeOptions).optional(),
  frameId: z.string().optional(),
});

export const ExtractBody = z.looseObject({
  instruction: z.string().max(2000).optional(),
  schema: z.record(z.string(), z.unknown()).optional(),
  options: z.looseObject(ScopeOptions).optional(),
  frameId: z.string().optional(),
});

export const NavigateBody = z.looseObject({
  url: z.string().min(1),
  options: z
    .looseObject({
      waitUntil: z.enum(['load', 'domcontentloaded', 'networkidle']).optional(),
      timeout: Timeout.optional(),
    })
    .optional(),
  frameId: z.string().optional(),
});

export const AgentExecuteBody = z.looseObject({
  agentConfig: z
    .looseObject({ model: ModelOption.optional(), systemPrompt: z.string().optional() })
    .optional(),
  executeOptions: z.looseObject({
    instruction: z.string().min(1),
    maxSteps: z.number().int().positive().optional(),
    variables: Variables.optional(),
  }),
  frameId: z.string().optional(),
  shouldCache: z.boolean().optional(),
});

export const ReleaseBody = z.looseObject({ status: z.literal('REQUEST_RELEASE') });

/** Variables as our ops take them: name → value; descriptions stay with the caller. */
export function flatVariables(v: z.infer<typeof Variables> | undefined): Record<string, string> | undefined {
  if (!v) return undefined;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(v)) out[k] = String(typeof val === 'object' ? val.value : val);
  return out;
}

/** Stagehand's method names, as its observe results and hand-written actions use them. */
const METHODS: Record<string, ActionMethod> = {
  click: 'click',
  dblclick: 'dblclick',
  doubleClick: 'dblclick',
  hover: 'hover',
  fill: 'fill',
  type: 'type',
  press: 'press',
  select: 'select',
  selectOption: 'select',
  selectOptionFromDropdown: 'select',
  check: 'check',
  uncheck: 'uncheck',
  scroll: 'scroll',
  scrollTo: 'scroll',
  scrollIntoView: 'scroll',
  nextChunk: 'scroll',
  prevChunk: 'scroll',
};

const SCROLL_ARGS: Record<string, string[]> = {
  nextChunk: ['+600'],
  prevChunk: ['-600'],
  scrollIntoView: [],
};

/** `xpath=/html/body/…` (Stagehand's form) or a bare XPath chain → our locator path. */
export const xpathOf = (selector: string) => selector.replace(/^xpath=/, '');

/** An observed action sent back to act, as our act takes it (it then runs with no model). */
export function observedFromSdk(input: {
  selector: string;
  description?: string | undefined;
  method?: string | undefined;
  arguments?: string[] | undefined;
  role?: string | undefined;
  name?: string | undefined;
}): ObservedElement {
  const given = input.method ?? 'click';
  const method = METHODS[given];
  if (!method)
    throw new WireError(
      'input.method',
      `"${given}" is not a method browserfn can replay (one of ${Object.keys(METHODS).join(', ')})`,
    );
  return {
    id: 0,
    description: input.description ?? `${method} ${input.selector}`,
    method,
    arguments: SCROLL_ARGS[given] ?? input.arguments ?? [],
    selector: xpathOf(input.selector),
    role: input.role ?? '',
    name: input.name ?? '',
  };
}

export class WireError extends Error {
  override name = 'WireError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`${field}: ${message}`);
  }
}

/** The SDK's Action: `{ selector, description, method, arguments }`, plus role/name for replay. */
export interface SdkAction {
  selector: string;
  description: string;
  method: string;
  arguments: string[];
  role?: string;
  name?: string;
}

export function actionToSdk(action: Action): SdkAction {
  const t = action.target;
  let selector = '';
  let role: string | undefined;
  let name: string | undefined;
  if (t && 'locator' in t) {
    const loc = typeof t.locator === 'string' ? { xpath: t.locator, role: '', name: '' } : t.locator;
    selector = `xpath=${loc.xpath}`;
    if (loc.role) role = loc.role;
    if (loc.name) name = loc.name;
  }
  return {
    selector,
    description: action.description ?? action.method,
    method: action.method,
    arguments: action.args ?? [],
    ...(role ? { role } : {}),
    ...(name ? { name } : {}),
  };
}

export const actToSdk = (r: ActResult) => ({
  success: r.success,
  message: r.message,
  actionDescription: r.actionDescription,
  actions: r.actions.map(actionToSdk),
});

export const observedToSdk = (el: ObservedElement): SdkAction => ({
  selector: `xpath=${el.selector}`,
  description: el.description,
  method: el.method,
  arguments: el.arguments,
  role: el.role,
  name: el.name,
});
