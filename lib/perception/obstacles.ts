/**
 * Something in the way: a cookie banner or newsletter pop-up whose backdrop covers the element a
 * step is about to press. Reads where a press would land and, when another element would take it,
 * finds the control that closes what covers it. Refusing consent is preferred to giving it.
 */
import type { PageInput } from '../browser/page-driver.ts';
import { findElementByXPath } from './locate.ts';

export interface Obstacle {
  /** Tag, role and first words of the element that would take the press. */
  coveredBy: string;
  /** The control that dismisses it, when one was recognised. */
  dismiss?: { xpath: string; name: string };
}

/** Words of dismiss controls, in the order they are preferred. */
const DISMISS = [
  'reject all|reject|decline|deny|necessary only|only necessary|essential only|refuse',
  'no thanks|not now|close|dismiss|×|✕|x',
  'accept all|accept|agree|allow all|allow|got it|ok|okay|i understand|continue',
];

/** Runs in the page (self-contained). */
function inPage(el: Element, dismissWords: string[]): Obstacle | undefined {
  el.scrollIntoView({ block: 'center', inline: 'center' });
  const r = el.getBoundingClientRect();
  if (r.width === 0 || r.height === 0) return undefined;
  const top = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  if (!top || top === el || el.contains(top) || top.contains(el)) return undefined;
  if (top instanceof HTMLLabelElement && top.control === el) return undefined;
  let container: Element = top;
  for (let n: Element | null = top; n; n = n.parentElement) {
    const style = getComputedStyle(n);
    if (
      style.position === 'fixed' ||
      style.position === 'sticky' ||
      n.matches('dialog,[role=dialog],[role=alertdialog],[aria-modal=true]')
    )
      container = n;
  }
  const words = (top.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 60);
  const coveredBy = `${top.localName}${top.getAttribute('role') ? ` (${top.getAttribute('role')})` : ''}${words ? ` "${words}"` : ''}`;
  const controls = [
    ...container.querySelectorAll('button,[role=button],a,input[type=button],input[type=submit]'),
  ].filter((c) => (c as HTMLElement).offsetParent !== null || getComputedStyle(c).position === 'fixed');
  for (const group of dismissWords) {
    const re = new RegExp(`^(?:${group})$`, 'i');
    const hit = controls.find((c) =>
      re.test(
        (
          (c as HTMLElement).innerText ||
          c.getAttribute('aria-label') ||
          (c as HTMLInputElement).value ||
          ''
        ).trim(),
      ),
    );
    if (!hit) continue;
    const steps: string[] = [];
    for (let n: Element | null = hit; n; n = n.parentElement) {
      const same = n.parentElement
        ? [...n.parentElement.children].filter((c) => c.localName === n!.localName)
        : [n];
      steps.unshift(same.length > 1 ? `${n.localName}[${same.indexOf(n) + 1}]` : n.localName);
    }
    const name = ((hit as HTMLElement).innerText || hit.getAttribute('aria-label') || '').trim();
    return { coveredBy, dismiss: { xpath: `/${steps.join('/')}`, name } };
  }
  return { coveredBy };
}

/** What covers the element at `xpath` (main document), if anything; undefined when a press would reach it. */
export async function findObstacle(page: PageInput, xpath: string): Promise<Obstacle | undefined> {
  if (xpath.includes(' >> ')) return undefined;
  const found = await findElementByXPath(page, xpath);
  if ('error' in found) return undefined;
  try {
    return (await found.element.call(inPage, DISMISS)) ?? undefined;
  } catch {
    return undefined;
  } finally {
    await found.element.dispose();
  }
}
