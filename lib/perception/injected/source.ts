import { type CollectOptions, collect } from './collect.ts';
import { features } from './features.ts';
import { resolveLocator } from './resolve.ts';
import { semantics } from './semantics.ts';

/**
 * Turns an in-page function into an expression string. Transpilers (tsx/esbuild) may wrap nested
 * functions in a `__name(fn, "name")` helper that does not exist in the page, so we define it.
 */
function expression(fn: (arg: never) => unknown, arg: unknown): string {
  return `(() => { const __name = (f) => f; return (${fn.toString()})(${JSON.stringify(arg)}); })()`;
}

/**
 * The collector is compiled once per document and kept on a non-enumerable global; later calls
 * send only the options. Results travel as one JSON string: Playwright's own value serialisation
 * is far slower on big results.
 */
export const collectCall = (opts: CollectOptions): string =>
  `(() => { const f = globalThis.__bfnCollect; return f ? JSON.stringify(f(${JSON.stringify(opts)})) : undefined; })()`;

export const collectInstall = (opts: CollectOptions): string =>
  `(() => { const __name = (f) => f; const sem = Object.assign((${semantics.toString()})(), (${features.toString()})()); const run = (${collect.toString()});
    const f = (opts) => run(opts, sem);
    Object.defineProperty(globalThis, '__bfnCollect', { value: f, configurable: true });
    return JSON.stringify(f(${JSON.stringify(opts)})); })()`;

export const resolveExpression = (chain: string, mark: boolean): string =>
  expression(resolveLocator, { chain, mark });
