import type { DurableLocator, ElementId } from '../perception/types.ts';

/** What one element can have done to it; the methods a model may choose for an element. */
export const ELEMENT_METHODS = [
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
] as const;

export const ACTION_METHODS = [
  ...ELEMENT_METHODS,
  'drag',
  'goto',
  'back',
  'forward',
  'reload',
  'wait',
] as const;
export type ActionMethod = (typeof ACTION_METHODS)[number];

/** Where an action lands: an id from the current snapshot, a durable locator, or a viewport point. */
export type ActionTarget =
  | { id: ElementId }
  | { locator: DurableLocator | string }
  | { xPct: number; yPct: number };

/**
 * One typed step, the same shape whoever produced it (LLM, matcher, cache, workflow, API caller).
 * `args` by method: fill/type [text]; press [key]; select [label or value]; goto [url];
 * scroll ["50%"] | ["top"|"bottom"] | ["+600"|"-600"] | [] with a target = into view;
 * wait [ms] | ["text:Some text"]; drag uses `to` for the drop target.
 */
export interface Action {
  method: ActionMethod;
  target?: ActionTarget;
  to?: ActionTarget;
  args?: string[];
  description?: string;
}

export type ActionErrorKind =
  | 'not_found'
  | 'not_actionable'
  | 'navigation'
  | 'timeout'
  | 'invalid'
  | 'blocked'
  | 'unreachable';

export interface ActionOutcome {
  ok: boolean;
  method: ActionMethod;
  /** What happened, in words a person reads in a log. */
  message: string;
  error?: { kind: ActionErrorKind; message: string };
  /** True when the action changed the top-level URL. */
  navigated: boolean;
  url: string;
  ms: number;
}
