import { TAKE_NAV_INTENT } from '../browser/init-scripts.ts';
import type { PageDriver } from '../browser/page-driver.ts';

/** How long after an input a navigation it caused must have shown up to be waited for. */
const NOTICE_MS = 25;
/** A navigation the page said it started: how long its request may take to show up. */
const INTENT_MS = 5000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Watches for a top-level navigation caused by the action in between `start()` and `wait()`:
 * if one began, waits until the new document is parsed, so the next snapshot reads the new page
 * instead of racing its unload. Costs `NOTICE_MS` at most when nothing navigates.
 */
export function watchNavigation(page: PageDriver, timeoutMs = 30_000) {
  const watch = page.watchNavigation();
  return {
    /** `likely`: the input could well navigate (a link, a submit, Enter), so give it time to show. */
    async wait(likely = true): Promise<void> {
      try {
        if (likely) await Promise.race([watch.seen, sleep(NOTICE_MS)]);
        if (!watch.started()) {
          // The page knows at once when it starts a navigation, even when the browser's network
          // events for it are late (a busy machine) or the input did not look like one (onclick).
          const intent = await page
            .mainFrame()
            .evaluate(TAKE_NAV_INTENT)
            .catch(() => null);
          if (intent) await Promise.race([watch.seen, sleep(INTENT_MS)]);
        }
        if (!watch.started()) return;
        await watch.arrive(timeoutMs);
      } finally {
        watch.stop();
      }
    },
  };
}
