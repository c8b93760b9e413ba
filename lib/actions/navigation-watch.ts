import type { Page, Request } from 'playwright-core';
import { TAKE_NAV_INTENT } from '../browser/init-scripts.ts';

/** How long after an input a navigation it caused must have shown up to be waited for. */
const NOTICE_MS = 25;
/** A navigation the page said it started: how long its request may take to show up. */
const INTENT_MS = 5000;

/**
 * Watches for a top-level navigation caused by the action in between `start()` and `wait()`:
 * if one began, waits until the new document is parsed, so the next snapshot reads the new page
 * instead of racing its unload. Costs `NOTICE_MS` at most when nothing navigates.
 */
export function watchNavigation(page: Page, timeoutMs = 30_000) {
  let started: Request | undefined;
  let signal: () => void = () => undefined;
  const seen = new Promise<void>((resolve) => {
    signal = resolve;
  });
  const onRequest = (r: Request) => {
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) {
      started = r;
      signal();
    }
  };
  page.on('request', onRequest);
  return {
    /** `likely`: the input could well navigate (a link, a submit, Enter), so give it time to show. */
    async wait(likely = true): Promise<void> {
      try {
        if (likely) await Promise.race([seen, new Promise((r) => setTimeout(r, NOTICE_MS))]);
        if (!started) {
          // The page knows at once when it starts a navigation, even when the browser's network
          // events for it are late (a busy machine) or the input did not look like one (onclick).
          const intent = await page.evaluate(TAKE_NAV_INTENT).catch(() => null);
          if (intent) await Promise.race([seen, new Promise((r) => setTimeout(r, INTENT_MS))]);
        }
        if (!started) return;
        const response = await started.response().catch(() => null);
        if (!response) return;
        await page.waitForLoadState('domcontentloaded', { timeout: timeoutMs }).catch(() => undefined);
        // The old document may still be current for a moment after the response arrived.
        await page
          .waitForURL((u) => u.toString() === (started?.url() ?? u.toString()), { timeout: 2000 })
          .catch(() => undefined);
      } finally {
        page.off('request', onRequest);
      }
    },
  };
}
