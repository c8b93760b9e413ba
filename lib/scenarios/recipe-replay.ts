/**
 * Replaying a remembered blocker clearing on another page of the same site. The banner is the same
 * there, but where it sits in the document is not (other pages, other body children), so the XPath
 * alone may point at nothing, or at another element. Each command is grounded on a fresh snapshot
 * by `findByLocator`: the same path with the same role and name, else the one element with that role
 * and name. An element that cannot be told apart, or is not shown, is not clicked: the model sees
 * the page instead (right or nothing).
 */
import type { Page } from 'playwright-core';
import { executeAction } from '../actions/execute.ts';
import { findByLocator } from '../perception/locate.ts';
import { snapshot } from '../perception/snapshot.ts';
import type { ClearingRecipe } from './blockers.ts';

/**
 * Runs in the page (self-contained): is any shown element named `name` (its text, aria-label,
 * value or title)? One round trip that spares the snapshot on the pages without the banner, which
 * is every iteration after it was cleared.
 */
function anyShownNamed(name: string): boolean {
  const want = name.replace(/\s+/g, ' ').trim().toLowerCase();
  if (!want) return true;
  const all = document.querySelectorAll('button, a, input, [role], [aria-label], [onclick], [tabindex]');
  for (const el of Array.from(all)) {
    // innerText lays the page out: read only for an element whose raw text could be the name.
    const raw = (el.textContent ?? '').replace(/\s+/g, ' ').toLowerCase();
    const names = [
      raw.includes(want) ? (el as HTMLElement).innerText : undefined,
      el.getAttribute('aria-label'),
      (el as HTMLInputElement).value,
      el.getAttribute('title'),
    ];
    if (!names.some((n) => typeof n === 'string' && n.replace(/\s+/g, ' ').trim().toLowerCase() === want))
      continue;
    const r = el.getBoundingClientRect();
    if (r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden') return true;
  }
  return false;
}

/** Replays `recipe` when its first element is on this page and shown; true when every command ran. */
export async function replayRecipe(page: Page, recipe: ClearingRecipe): Promise<boolean> {
  const first = recipe.commands[0];
  if (!first) return false;
  if (!(await page.evaluate(anyShownNamed, first.locator.name).catch(() => false))) return false;
  for (const [i, c] of recipe.commands.entries()) {
    const snap = await snapshot(page, { text: false });
    const el = findByLocator(snap, c.locator);
    // The first element must be shown: a banner that is not there is not cleared by a hidden twin.
    if (!el || (i === 0 && !(el.box && el.inViewport))) return false;
    const out = await executeAction(
      page,
      {
        method: c.action,
        target: { id: el.id },
        ...(c.value ? { args: [c.value] } : {}),
        description: recipe.description,
      },
      { snapshot: snap, timeoutMs: 3000 },
    );
    if (!out.ok) return false;
  }
  return true;
}
