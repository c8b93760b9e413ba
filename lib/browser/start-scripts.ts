/**
 * Scripts later stages have every context we make run at document start, before the page's own
 * code: perception's page reader (so a page's first read neither sends nor compiles it). A stage
 * adds its script when its module loads; a context carries the ones added by the time it was made,
 * and says which, so a caller knows what it may count on finding in the page.
 */
const scripts = new Map<string, string>();
const carried = new WeakMap<object, ReadonlySet<string>>();

/** Adds (or replaces) the start script called `name`, for contexts made from now on. */
export function addStartScript(name: string, source: string): void {
  scripts.set(name, source);
}

/** What a new context runs at document start: the scripts' sources, and their names. */
export function startScripts(): { source: string; names: ReadonlySet<string> } {
  return { source: [...scripts.values()].join(';\n'), names: new Set(scripts.keys()) };
}

/** Records that `context` runs these start scripts in every document. */
export function markCarried(context: object, names: ReadonlySet<string>): void {
  carried.set(context, names);
}

/** Whether every document of `context` runs the start script `name`. */
export const carries = (context: object, name: string): boolean => carried.get(context)?.has(name) ?? false;
