import type { DriverElement, PageDriver } from '../browser/page-driver.ts';

/**
 * Runs in the element's frame: brings it into view and checks, in one round trip, what
 * Playwright would otherwise check over several (and after waiting two animation frames for
 * "stable"): attached, visible, enabled, and actually the thing under the pointer at its centre.
 */
function readyForPointer(
  el: Element,
):
  | { ok: true; navigates: boolean; at: { x: number; y: number; width: number; height: number } }
  | { ok: false; reason: string } {
  if (!el.isConnected) return { ok: false, reason: 'detached' };
  el.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  const r = el.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return { ok: false, reason: 'no size' };
  const style = getComputedStyle(el);
  if (style.visibility !== 'visible' || style.pointerEvents === 'none')
    return { ok: false, reason: 'not visible' };
  if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true')
    return { ok: false, reason: 'disabled' };
  const root = el.getRootNode() as Document | ShadowRoot;
  const x = r.left + r.width / 2;
  const y = r.top + r.height / 2;
  const hit = root.elementFromPoint(x, y);
  if (!hit) return { ok: false, reason: 'outside the viewport' };
  // The pointer lands on the element, inside it, or on a label that forwards to it.
  const labelFor = hit.closest('label');
  const forwards = !!labelFor && (labelFor as HTMLLabelElement).control === el;
  if (hit === el || el.contains(hit) || hit.contains(el) || forwards) {
    // Links and submit buttons are the clicks that usually load a new page.
    const form = (el as HTMLButtonElement).form;
    const submits =
      !!form &&
      (el.localName === 'button' || el.localName === 'input') &&
      (el as HTMLButtonElement).type === 'submit';
    return {
      ok: true,
      navigates: !!el.closest('a[href], area[href]') || submits,
      at: { x, y, width: r.width, height: r.height },
    };
  }
  return { ok: false, reason: 'covered by another element' };
}

/**
 * A real mouse click (or hover) at the element's centre when the element is plainly ready, saying
 * whether it is the kind of element that loads a page; undefined when it is not ready, so the
 * caller falls back to the driver's waiting, retrying path.
 */
export async function fastPointer(
  page: PageDriver,
  handle: DriverElement,
  kind: 'click' | 'dblclick' | 'hover',
): Promise<{ navigates: boolean } | undefined> {
  const ready = await handle.call(readyForPointer).catch(() => ({ ok: false as const, reason: 'gone' }));
  if (!ready.ok) return undefined;
  const point = await pointerAt(handle, ready.at);
  if (!point) return undefined;
  const { x, y } = point;
  if (kind === 'hover') await page.mouse.move(x, y);
  else await page.mouse.click(x, y, { clickCount: kind === 'dblclick' ? 2 : 1 });
  return { navigates: ready.navigates };
}

/**
 * Where the pointer goes: the point checked in the page, the centre of the element's own
 * rectangle. The driver's box can be another shape (an inline <a> around blocks gets its empty
 * line fragments added), and its centre may fall outside the element. In the main frame the
 * page's coordinates are the pointer's; a child frame's are shifted by where the frame sits, which
 * the driver's box tells only when it has the same size (otherwise: the driver's own path).
 */
async function pointerAt(
  handle: DriverElement,
  at: { x: number; y: number; width: number; height: number },
): Promise<{ x: number; y: number } | undefined> {
  if (!handle.frame.parent()) return at;
  const box = await handle.box();
  if (!box || Math.abs(box.width - at.width) > 1 || Math.abs(box.height - at.height) > 1) return undefined;
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** Current checked state of a checkbox / radio / switch, native or ARIA. */
export async function isChecked(handle: DriverElement): Promise<boolean | undefined> {
  // null, not undefined: a value that survives the trip out of the page as JSON.
  const state = await handle.call((el) => {
    if (el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio')) return el.checked;
    const aria = el.getAttribute('aria-checked') ?? el.getAttribute('aria-pressed');
    return aria === null ? null : aria === 'true';
  });
  return state ?? undefined;
}
