/**
 * Blockers (cookie banners, consent walls, newsletter modals) cleared with zero tokens before a
 * step goes on: first the accept buttons of the common consent frameworks, then a generic rule for
 * dialogs and fixed overlays that speak of cookies, consent or newsletters and offer an accept /
 * close button. The app's own dialogs (a form the scenario opened) are left alone: a dialog is a
 * blocker only when its words say so. What the model cleared (`blockerDetected`) is remembered
 * per domain by locator (see memory.ts) and replayed here on later pages.
 */
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import { locateByXPath } from '../perception/locate.ts';
import type { DurableLocator } from '../perception/types.ts';

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
 * Runs in the page: finds a visible dialog or fixed overlay whose words make it a blocker and an
 * accept / close button in it; marks that button `data-bfn-blocker` and says what it is.
 */
function findGenericBlocker(): { what: string; button: string } | null {
  const BLOCKER_WORDS =
    /cookie|consent|gdpr|privacy (settings|preferences)|newsletter|subscribe|sign up for|discount|tracking/i;
  const BUTTON_RANKS: RegExp[] = [
    /^(accept|allow|agree to) all( cookies)?$/i,
    /^(accept|allow|agree|i agree|i accept|ok|okay|got it|accept cookies|allow cookies|continue)$/i,
    /^(no,? thanks|not now|maybe later|dismiss|close|×|✕|x)$/i,
  ];
  const visible = (el: Element) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return (
      r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && s.opacity !== '0'
    );
  };
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
    if (!visible(box)) continue;
    const text = (box as HTMLElement).innerText ?? '';
    if (!BLOCKER_WORDS.test(text.slice(0, 2000))) continue;
    const buttons = Array.from(
      box.querySelectorAll('button, [role="button"], a, input[type="button"], input[type="submit"]'),
    ).filter(visible);
    for (const rank of BUTTON_RANKS) {
      const hit = buttons.find((b) => {
        const label = (
          (b as HTMLElement).innerText ||
          b.getAttribute('aria-label') ||
          (b as HTMLInputElement).value ||
          ''
        )
          .replace(/\s+/g, ' ')
          .trim();
        return rank.test(label);
      });
      if (hit) {
        hit.setAttribute('data-bfn-blocker', '1');
        const label = ((hit as HTMLElement).innerText || hit.getAttribute('aria-label') || '').trim();
        return { what: text.replace(/\s+/g, ' ').trim().slice(0, 80), button: label };
      }
    }
  }
  return null;
}

const FRAMEWORK_SELECTOR = FRAMEWORK_RULES.map((r) => r.accept).join(', ');

async function clickIfVisible(page: Page, selector: string): Promise<boolean> {
  const target = page.locator(selector).first();
  if (!(await target.isVisible().catch(() => false))) return false;
  await target.click({ timeout: 3000 });
  return true;
}

/** Replays a remembered clearing when its first element is on the page and visible. */
async function replayRecipe(page: Page, recipe: ClearingRecipe): Promise<boolean> {
  const first = recipe.commands[0];
  if (!first) return false;
  const found = await locateByXPath(page, first.locator.xpath);
  if ('error' in found) return false;
  const shown = await found.handle.isVisible().catch(() => false);
  await found.handle.dispose().catch(() => undefined);
  if (!shown) return false;
  for (const c of recipe.commands) {
    const out = await executeAction(page, {
      method: c.action,
      target: { locator: c.locator },
      ...(c.value ? { args: [c.value] } : {}),
      description: recipe.description,
    });
    if (!out.ok) return false;
  }
  return true;
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
      // Named before the click: the banner may be gone after it.
      const which = await page
        .evaluate(
          (rules) => rules.find((r) => document.querySelector(r.accept))?.framework ?? 'consent framework',
          FRAMEWORK_RULES as { framework: string; accept: string }[],
        )
        .catch(() => 'consent framework');
      if (await clickIfVisible(page, FRAMEWORK_SELECTOR).catch(() => false))
        hit = { by: 'framework', what: which };
    }
    if (!hit) {
      const generic = await page.evaluate(findGenericBlocker).catch(() => null);
      if (generic && (await clickIfVisible(page, '[data-bfn-blocker="1"]').catch(() => false)))
        hit = { by: 'dialog', what: `${generic.what} (pressed "${generic.button}")` };
    }
    if (!hit) break;
    cleared.push(hit);
    // Give the banner's own script a moment to remove it before looking again.
    await page.waitForLoadState('domcontentloaded').catch(() => undefined);
  }
  return cleared;
}
