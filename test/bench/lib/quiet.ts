import { sleep } from './stats.ts';

/** Anything that can run a JS expression in a page: a Playwright page or a Stagehand page. */
export type Evaluate = (expression: string) => Promise<unknown>;

/**
 * Same settle rule for every tool's tab, so all of them snapshot the same page state: document
 * loaded, then no DOM mutation for `quietMs` (capped at `capMs`). Returns the time spent waiting.
 */
const PROBE = `(() => {
  const g = globalThis;
  if (!g.__benchQuiet) {
    g.__benchQuiet = { last: performance.now() };
    new MutationObserver(() => { g.__benchQuiet.last = performance.now(); })
      .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
  }
  return document.readyState === 'complete' ? performance.now() - g.__benchQuiet.last : -1;
})()`;

export async function waitQuiet(evaluate: Evaluate, quietMs = 250, capMs = 3000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const quietFor = Number(await evaluate(PROBE).catch(() => -1));
    if (quietFor >= quietMs) break;
    if (performance.now() - t0 > capMs) break;
    await sleep(Math.max(25, Math.min(100, quietMs - Math.max(0, quietFor))));
  }
  return performance.now() - t0;
}
