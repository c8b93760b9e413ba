import { type CollectOptions, collect } from './collect.ts';
import { resolveLocator } from './resolve.ts';

/**
 * Turns an in-page function into an expression string. Transpilers (tsx/esbuild) may wrap nested
 * functions in a `__name(fn, "name")` helper that does not exist in the page, so we define it.
 */
function expression(fn: (arg: never) => unknown, arg: unknown): string {
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
}

/** Returned as one JSON string: Playwright's own value serialisation is far slower on big results. */
export const collectExpression = (opts: CollectOptions): string =>
  `JSON.stringify(${expression(collect, opts)})`;

export const resolveExpression = (chain: string, mark: boolean): string =>
  expression(resolveLocator, { chain, mark });
