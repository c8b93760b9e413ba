import { z } from 'zod';
import type { Action, ActionMethod } from '../../actions/types.ts';
import type { ActResult, ObservedElement } from '../../ops/types.ts';

/**
 * The request bodies the Stagehand 3.7 SDK sends in API mode, and the result shapes it hands back
 * to its caller. Bodies are loose (the SDK adds fields over versions); the fields we use are checked.
 */

/** The viewport the SDK asks for when the script names none. */
const SDK_VIEWPORT = { width: 1288, height: 711 };
/** Long enough for any instruction a script writes; the body limit bounds the request anyway. */
const INSTRUCTION_MAX = 20_000;

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

// Names are held to what a %placeholder% can spell: a name that could never be filled in is an
// error now, not a literal "%my var%" typed into the page.
const Variables = z.record(
  z.string().regex(/^[A-Za-z_][\w.-]*$/, 'variable names are letters, digits, _ . -'),
  z.union([Primitive, z.looseObject({ value: Primitive, description: z.string().optional() })]),
);

/** No call holds a page longer than this, whatever it asks for. */
export const MAX_TIMEOUT_MS = 30 * 60_000;
/** A call's `timeout` in ms, as the SDK takes it: 0 or none means the server's default. */
const Timeout = z
  .number()
  .nonnegative()
  .transform((ms) => (ms === 0 ? undefined : Math.min(Math.ceil(ms), MAX_TIMEOUT_MS)));

/** `browserSettings` of a Browserbase session create: the viewport is the part we honour. */
const BrowserSettings = z
  .looseObject({
    // Either side may be left out (Browserbase takes both as optional): the SDK's default stays.
    viewport: z
      .object({
        width: z.number().int().min(200).max(4096).optional(),
        height: z.number().int().min(200).max(4096).optional(),
      })
      .transform((v) => ({ width: v.width ?? SDK_VIEWPORT.width, height: v.height ?? SDK_VIEWPORT.height }))
      .optional(),
  })
  .optional();

/** The Browserbase SDK's session create (the Stagehand SDK's `disableAPI` mode). */
export const BrowserbaseCreateBody = z.looseObject({ browserSettings: BrowserSettings });

export const SessionStartBody = z.looseObject({
  modelName: z.string().optional(),
  systemPrompt: z.string().max(INSTRUCTION_MAX).optional(),
  browserbaseSessionID: z.string().optional(),
  browserbaseSessionCreateParams: z.looseObject({ browserSettings: BrowserSettings }).optional(),
});

export const ActBody = z.looseObject({
  input: z.union([
    z.string().min(1).max(INSTRUCTION_MAX),
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
  ignoreSelectors: z.array(z.string()).optional(),
};

export const ObserveBody = z.looseObject({
  instruction: z.string().max(INSTRUCTION_MAX).optional(),
  options: z.looseObject(ScopeOptions).optional(),
  frameId: z.string().optional(),
});

export const ExtractBody = z.looseObject({
  instruction: z.string().max(INSTRUCTION_MAX).optional(),
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
    .looseObject({
      model: ModelOption.optional(),
      systemPrompt: z.string().max(INSTRUCTION_MAX).optional(),
      mode: z.string().optional(),
      cua: z.boolean().optional(),
    })
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
  scrollByPixelOffset: 'scroll',
  'mouse.wheel': 'scroll',
  tap: 'click',
};

/** Scroll distances as ours are written: a signed pixel count. */
const signed = (n: number) => (n < 0 ? `${n}` : `+${n}`);

/** Arguments the SDK writes its own way for a method, in our form. */
function argumentsOf(method: string, args: string[]): string[] {
  switch (method) {
    // A screenful, as the SDK scrolls it.
    case 'nextChunk':
      return ['down'];
    case 'prevChunk':
      return ['up'];
    // A bare number is a percentage to the SDK.
    case 'scroll':
    case 'scrollTo':
      return args.map((a, i) => (i === 0 && /^\d+(\.\d+)?$/.test(a.trim()) ? `${a.trim()}%` : a));
    case 'scrollIntoView':
      return [];
    // [dx, dy]: ours scroll vertically only.
    case 'scrollByPixelOffset':
      return [signed(Number(args[1] ?? 0) || 0)];
    // [deltaY], 200 when absent, as the SDK takes it.
    case 'mouse.wheel':
      return [signed(Number(args[0] ?? 200) || 200)];
    case 'tap':
      return [];
    default:
      return args;
  }
}

/**
 * Our methods under the SDK's names, for results it may store and replay itself (its `cacheDir`
 * replays an action locally and knows only its own names). The SDK has no check or uncheck: they
 * become a click only where the box was seen in the state a click changes (`checked`); otherwise
 * they keep their names (browserfn replays them; the SDK's own replay refuses them rather than
 * toggling a box the wrong way).
 */
function sdkMethod(
  method: string,
  args: string[],
  checked?: boolean,
): { method: string; arguments: string[] } {
  switch (method) {
    case 'dblclick':
      return { method: 'doubleClick', arguments: args };
    case 'select':
      return { method: 'selectOptionFromDropdown', arguments: args };
    case 'check':
      return checked === false ? { method: 'click', arguments: [] } : { method, arguments: args };
    case 'uncheck':
      return checked === true ? { method: 'click', arguments: [] } : { method, arguments: args };
    case 'scroll': {
      if (args.length === 0) return { method: 'scrollIntoView', arguments: [] };
      const to = (args[0] ?? '').trim().toLowerCase();
      if (to === 'top') return { method: 'scrollTo', arguments: ['0%'] };
      if (to === 'bottom') return { method: 'scrollTo', arguments: ['100%'] };
      if (to === 'down') return { method: 'nextChunk', arguments: [] };
      if (to === 'up') return { method: 'prevChunk', arguments: [] };
      if (/^\d+(\.\d+)?%$/.test(to)) return { method: 'scrollTo', arguments: [to] };
      const px = /^([+-]?\d+)(px)?$/.exec(to);
      if (px) return { method: 'scrollByPixelOffset', arguments: ['0', String(Number(px[1]))] };
      return { method, arguments: args };
    }
    default:
      return { method, arguments: args };
  }
}

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
  const method = Object.hasOwn(METHODS, given) ? METHODS[given] : undefined;
  if (!method)
    throw new WireError(
      'input.method',
      `"${given}" is not a method browserfn can replay (one of ${Object.keys(METHODS).join(', ')})`,
    );
  return {
    id: 0,
    description: input.description ?? `${method} ${input.selector}`,
    method,
    arguments: argumentsOf(given, input.arguments ?? []),
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
    ...sdkMethod(action.method, action.args ?? []),
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
  ...sdkMethod(el.method, el.arguments, el.checked),
  role: el.role,
  name: el.name,
});
