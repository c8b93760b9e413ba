/**
 * The element under a viewport point, as a durable locator: a coordinate action is recorded with what
 * it landed on, so a computer-use run can be replayed or compiled by locator like any other run.
 */
import { asDriver, type PageInput } from '../browser/page-driver.ts';
import type { DurableLocator } from '../perception/types.ts';

export interface PointTarget {
  locator: DurableLocator;
  tag: string;
  /** Text, value or label the element showed (80 chars at most). */
  text: string;
}

/**
 * Runs in the page: descends through open shadow roots and same-origin iframes to the innermost
 * element at the point, then names it the way perception does (XPath chain with ` >> ` hops, an
 * ARIA role, a short accessible name).
 */
function elementAtPoint(pt: { x: number; y: number }) {
  const implicitRole = (el: Element): string => {
    const explicit = el.getAttribute('role');
    if (explicit) return explicit.split(/\s+/)[0] ?? explicit;
    const tag = el.localName;
    if (tag === 'a' && el.hasAttribute('href')) return 'link';
    if (tag === 'button' || tag === 'summary') return 'button';
    if (tag === 'select') return 'combobox';
    if (tag === 'textarea') return 'textbox';
    if (tag === 'img') return 'img';
    if (tag === 'canvas') return 'canvas';
    if (/^h[1-6]$/.test(tag)) return 'heading';
    if (tag === 'input') {
      const t = (el as HTMLInputElement).type;
      if (t === 'checkbox' || t === 'radio') return t;
      if (t === 'submit' || t === 'button' || t === 'reset' || t === 'image') return 'button';
      if (t === 'range') return 'slider';
      return 'textbox';
    }
    return 'generic';
  };
  const nameOf = (el: Element): string => {
    const label =
      el.getAttribute('aria-label') ||
      (el as HTMLInputElement).labels?.[0]?.textContent ||
      el.getAttribute('alt') ||
      el.getAttribute('title') ||
      el.getAttribute('placeholder') ||
      (el as HTMLElement).innerText ||
      el.textContent ||
      '';
    return label.replace(/\s+/g, ' ').trim().slice(0, 80);
  };
  const segment = (el: Element): string => {
    const parts: string[] = [];
    for (let cur: Element | null = el; cur; ) {
      const parent: Node | null = cur.parentNode;
      let index = 1;
      let twins = false;
      for (let s = parent?.firstChild ?? null; s; s = s.nextSibling) {
        if (s === cur || s.nodeType !== 1 || (s as Element).localName !== cur.localName) continue;
        twins = true;
        if (cur.compareDocumentPosition(s) & Node.DOCUMENT_POSITION_PRECEDING) index++;
      }
      const test = /^[A-Za-z_][\w.-]*$/.test(cur.localName)
        ? cur.localName
        : `*[local-name()='${cur.localName}']`;
      parts.unshift(twins ? `${test}[${index}]` : test);
      cur = parent && parent.nodeType === 1 ? (parent as Element) : null;
    }
    return `/${parts.join('/')}`;
  };
  const chain: string[] = [];
  let root: Document | ShadowRoot = document;
  let x = pt.x;
  let y = pt.y;
  let el: Element | null = null;
  for (let hops = 0; hops < 12; hops++) {
    const hit: Element | null = root.elementFromPoint(x, y);
    if (!hit) break;
    el = hit;
    if (hit.shadowRoot && hit.shadowRoot !== root) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (inner && inner !== hit) {
        chain.push(segment(hit));
        root = hit.shadowRoot;
        continue;
      }
    }
    if (hit.localName === 'iframe' || hit.localName === 'frame') {
      const doc: Document | null = (hit as HTMLIFrameElement).contentDocument;
      if (doc) {
        const r = hit.getBoundingClientRect();
        chain.push(segment(hit));
        x -= r.left + (hit as HTMLElement).clientLeft;
        y -= r.top + (hit as HTMLElement).clientTop;
        root = doc;
        continue;
      }
    }
    break;
  }
  if (!el) return undefined;
  // A click on an icon inside a button is a click on the button.
  const actionable =
    el.closest('a[href],button,input,select,textarea,label,summary,[role],[onclick],[tabindex]') ?? el;
  chain.push(segment(actionable));
  const text = ((actionable as HTMLInputElement).value || nameOf(actionable))
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 80);
  return {
    xpath: chain.join(' >> '),
    role: implicitRole(actionable),
    name: nameOf(actionable),
    tag: actionable.localName,
    text,
  };
}

export async function targetAtPoint(page: PageInput, x: number, y: number): Promise<PointTarget | undefined> {
  // As a string with a no-op `__name`: transpilers may wrap the nested helpers in one (see perception).
  const expression = `(() => { const __name = (f) => f; return (${elementAtPoint.toString()})(${JSON.stringify({ x, y })}); })()`;
  const found = (await asDriver(page)
    .mainFrame()
    .evaluate(expression)
    .catch(() => undefined)) as ReturnType<typeof elementAtPoint>;
  if (!found) return undefined;
  return {
    locator: { xpath: found.xpath, role: found.role, name: found.name },
    tag: found.tag,
    text: found.text,
  };
}
