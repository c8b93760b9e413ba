/**
 * Blockers (cookie banners, consent walls, newsletter modals) cleared with zero tokens before a
 * step goes on: first the accept buttons of the common consent frameworks, then a generic rule for
 * dialogs and fixed overlays that speak of cookies, consent or newsletters and offer an accept /
 * close button. The app's own dialogs (a form the scenario opened) are left alone: a dialog is a
 * blocker only when its words say so. What the model cleared (`blockerDetected`) is remembered
 * per domain by locator (see memory.ts) and replayed here on later pages (recipe-replay.ts).
 */
import type { Page } from 'playwright-core';
import type { DurableLocator } from '../perception/types.ts';
import { replayRecipe } from './recipe-replay.ts';

/** Accept buttons of consent frameworks (CSS; Playwright's CSS reaches into open shadow roots). */
export const FRAMEWORK_RULES: readonly { framework: string; accept: string }[] = [
  { framework: 'OneTrust', accept: '#onetrust-accept-btn-handler' },
  { framework: 'OneTrust', accept: '#accept-recommended-btn-handler' },
  { framework: 'Cookiebot', accept: '#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll' },
  { framework: 'Cookiebot', accept: '#CybotCookiebotDialogBodyButtonAccept' },
  { framework: 'Didomi', accept: '#didomi-notice-agree-button' },
  { framework: 'Quantcast', accept: '.qc-cmp2-summary-buttons button[mode="primary"]' },
  { framework: 'Quantcast', accept: '#qc-cmp2-ui button[mode="primary"]' },
  { framework: 'TrustArc', accept: '#truste-consent-button' },
  { framework: 'TrustArc', accept: '.truste-consent-button' },
  { framework: 'Usercentrics', accept: '[data-testid="uc-accept-all-button"]' },
  { framework: 'Usercentrics', accept: '#uc-btn-accept-banner' },
];

/** A clearing the model found once, kept by locator so it replays without the model. */
export interface ClearingRecipe {
  description: string;
  commands: { action: 'click' | 'press'; locator: DurableLocator; value?: string }[];
}

export interface ClearedBlocker {
  by: 'framework' | 'dialog' | 'memory';
  /** The framework's name, or what was cleared. */
  what: string;
}

/**
 * Runs in the page (self-contained: no named inner functions, which the bundler would wrap): finds
 * a visible consent-framework accept button (also inside open shadow roots), else a visible dialog
 * or fixed overlay whose words make it a blocker with an accept / close button in it; marks that
 * button `data-bfn-blocker` and says what it is. One evaluate, no selector engine: a page without
 * blockers costs one round trip.
 */
function findBlocker(
  rules: { framework: string; accept: string }[],
): { by: 'framework' | 'dialog'; what: string; button: string } | null {
  const roots: (Document | ShadowRoot)[] = [document];
  for (const host of Array.from(document.querySelectorAll('body > *, body > * > *')))
    if (host.shadowRoot) roots.push(host.shadowRoot);
  for (const rule of rules)
    for (const root of roots) {
      const hit = root.querySelector(rule.accept);
      if (!hit) continue;
      const r = hit.getBoundingClientRect();
      const st = getComputedStyle(hit);
      if (r.width === 0 || r.height === 0 || st.visibility === 'hidden' || st.display === 'none') continue;
      hit.setAttribute('data-bfn-blocker', '1');
      return { by: 'framework', what: rule.framework, button: (hit as HTMLElement).innerText?.trim() ?? '' };
    }
  const blockerWords =
    /cookie|consent|gdpr|privacy (settings|preferences)|newsletter|subscribe|sign up for|discount|tracking/i;
  const ranks: RegExp[] = [
    /^(accept|allow|agree to) all( cookies)?$/i,
    /^(accept|allow|agree|i agree|i accept|ok|okay|got it|accept cookies|allow cookies|continue)$/i,
    /^(no,? thanks|not now|maybe later|dismiss|close|×|✕|x)$/i,
  ];
  const containers = new Set<Element>(
    Array.from(
      document.querySelectorAll(
        '[role="dialog"], [role="alertdialog"], [aria-modal="true"], dialog[open], [id*="cookie" i], [class*="cookie" i], [id*="consent" i], [class*="consent" i], [class*="newsletter" i], [id*="newsletter" i], [class*="modal" i], [class*="popup" i]',
      ),
    ),
  );
  for (const el of Array.from(document.querySelectorAll('body > *, body > * > *'))) {
    const pos = getComputedStyle(el).position;
    if (pos === 'fixed' || pos === 'sticky') containers.add(el);
  }
  for (const box of containers) {
    const br = box.getBoundingClientRect();
    const bs = getComputedStyle(box);
    if (br.width === 0 || br.height === 0 || bs.visibility === 'hidden' || bs.display === 'none') continue;
    const text = ((box as HTMLElement).innerText ?? '').slice(0, 2000);
    if (!blockerWords.test(text)) continue;
    const buttons = Array.from(
      box.querySelectorAll('button, [role="button"], a, input[type="button"], input[type="submit"]'),
    ).filter((b) => {
      const r = b.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(b).visibility !== 'hidden';
    });
    for (const rank of ranks) {
      const hit = buttons.find((b) =>
        rank.test(
          (
            (b as HTMLElement).innerText ||
            b.getAttribute('aria-label') ||
            (b as HTMLInputElement).value ||
            ''
          )
            .replace(/\s+/g, ' ')
            .trim(),
        ),
      );
      if (!hit) continue;
      hit.setAttribute('data-bfn-blocker', '1');
      return {
        by: 'dialog',
        what: text.replace(/\s+/g, ' ').trim().slice(0, 80),
        button: ((hit as HTMLElement).innerText || hit.getAttribute('aria-label') || '').trim(),
      };
    }
  }
  return null;
}

/** Clicks the button `findBlocker` marked (a real, trusted click) and drops the mark. */
async function clickMarked(page: Page): Promise<boolean> {
  const found = await page.evaluateHandle(() => {
    const direct = document.querySelector('[data-bfn-blocker="1"]');
    if (direct) return direct;
    for (const host of Array.from(document.querySelectorAll('body > *, body > * > *'))) {
      const inner = host.shadowRoot?.querySelector('[data-bfn-blocker="1"]');
      if (inner) return inner;
    }
    return null;
  });
  const handle = found.asElement();
  if (!handle) await found.dispose();
  if (!handle) return false;
  try {
    await handle.click({ timeout: 3000 });
    return true;
  } catch {
    return false;
  } finally {
    await handle.evaluate((el) => el.removeAttribute('data-bfn-blocker')).catch(() => undefined);
    await handle.dispose().catch(() => undefined);
  }
}

/**
 * Clears what blocks the page, zero tokens: remembered clearings of this domain, then framework
 * accept buttons, then the generic dialog rule; at most `max` blockers per call (a cleared banner
 * can reveal a second one). Returns what it cleared.
 */
export async function clearBlockers(
  page: Page,
  remembered: readonly ClearingRecipe[],
  max = 3,
): Promise<ClearedBlocker[]> {
  const cleared: ClearedBlocker[] = [];
  for (let round = 0; round < max; round++) {
    let hit: ClearedBlocker | undefined;
    for (const recipe of remembered)
      if (await replayRecipe(page, recipe).catch(() => false)) {
        hit = { by: 'memory', what: recipe.description };
        break;
      }
    if (!hit) {
      const found = await page.evaluate(findBlocker, [...FRAMEWORK_RULES]).catch(() => null);
      if (found && (await clickMarked(page)))
        hit =
          found.by === 'framework'
            ? { by: 'framework', what: found.what }
            : { by: 'dialog', what: `${found.what} (pressed "${found.button}")` };
    }
    if (!hit) break;
    cleared.push(hit);
    // Give the banner's own script a moment to remove it before looking again.
    await page.waitForLoadState('domcontentloaded').catch(() => undefined);
  }
  return cleared;
}
