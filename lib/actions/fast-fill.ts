import type { DriverElement, PageDriver } from '../browser/page-driver.ts';

/** Input types whose value is plain typed text (a date or colour is set through its picker instead). */
const TYPED = ['', 'text', 'search', 'email', 'password', 'tel', 'url', 'number'];

/**
 * Runs in the element's frame: when it is plainly a shown, enabled, writable text field, focuses it
 * and selects its text (so what is typed next replaces it), in one round trip. Playwright's fill
 * makes the same checks over several trips, and its first call on a fresh page pays for setting up
 * its own in-page helper (~80 ms measured on the shop fixture).
 */
function focusForTyping(el: Element, types: string[]): boolean {
  if (!el.isConnected) return false;
  const field = el as HTMLInputElement | HTMLTextAreaElement;
  const isText =
    el.localName === 'textarea' ||
    (el.localName === 'input' && types.includes((field as HTMLInputElement).type));
  if (!isText || field.disabled || field.readOnly || el.getAttribute('aria-disabled') === 'true')
    return false;
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1 || getComputedStyle(el).visibility !== 'visible') return false;
  field.focus();
  const root = el.getRootNode() as Document | ShadowRoot;
  if (root.activeElement !== el) return false;
  field.select();
  return true;
}

/**
 * Replaces a text field's value as a user selecting all and typing would (the page's input events
 * fire), then checks the field holds exactly `text`. False when the field is not plainly ready or
 * ends up holding something else (a mask, a script that rewrote it): the caller then fills through
 * the driver's waiting path, which reports what went wrong.
 */
export async function fastFill(page: PageDriver, handle: DriverElement, text: string): Promise<boolean> {
  const ready = await handle.call(focusForTyping, TYPED).catch(() => false);
  if (!ready) return false;
  if (text) await page.keyboard.insertText(text);
  else await page.keyboard.press('Delete');
  const now = await handle.call((el) => (el as HTMLInputElement).value).catch(() => undefined);
  return now === text;
}
