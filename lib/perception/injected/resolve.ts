/**
 * Runs INSIDE a frame: finds the element for the in-frame part of a DurableLocator chain
 * (segments joined by ` >> `, each hop entering a shadow root). Self-contained on purpose.
 * With `mark`, the element is stored as `globalThis.__bfnTarget` so the caller can take a handle.
 */
export function resolveLocator(arg: { chain: string; mark: boolean }): {
  found: boolean;
  /** Set when the chain continues inside an iframe: segments consumed so far (the iframe is marked). */
  frameHop?: number;
  error?: string;
} {
  const g = globalThis as unknown as Record<string, unknown>;
  const closed = g.__bfnShadowRoots as WeakMap<Element, ShadowRoot> | undefined;
  const segments = arg.chain.split(' >> ');

  // Our own generator only emits child steps `tag`, `tag[n]` and `*[local-name()='x'][n]`, which
  // we walk by hand: XPath cannot take a shadow root as its context node.
  function walkSteps(root: ParentNode, path: string): Element | null {
    let node: ParentNode | null = root;
    for (const step of path.split('/').filter(Boolean)) {
      const m = /^(?:\*\[local-name\(\)='([^']+)'\]|([\w-]+))(?:\[(\d+)\])?$/.exec(step);
      if (!m || !node) return null;
      const local = (m[1] ?? m[2] ?? '').toLowerCase();
      const want = m[3] ? Number(m[3]) : 1;
      let seen = 0;
      let found: Element | null = null;
      for (let c: Element | null = node.firstElementChild; c; c = c.nextElementSibling) {
        if (c.localName.toLowerCase() === local && ++seen === want) {
          found = c;
          break;
        }
      }
      node = found;
    }
    return node as Element | null;
  }

  // A hand-written Action may name its element by CSS (`#password`), as the SDK allows. A segment
  // is XPath when it says so (`xpath=`) or starts with `/` or `(`; otherwise CSS, unless it is no
  // valid CSS (`html/body/form`), which is then read as XPath, as every segment was before.
  const xpathIn = (seg: string): string | undefined =>
    /^xpath=/i.test(seg) ? seg.slice(6) : /^[/(]/.test(seg) ? seg : undefined;
  function shadowOf(host: Element | null): ShadowRoot | null {
    return host ? (host.shadowRoot ?? closed?.get(host) ?? null) : null;
  }
  function css(root: ParentNode, seg: string): { el: Element | null } | undefined {
    try {
      return { el: root.querySelector(seg) };
    } catch {
      return undefined;
    }
  }

  let current: Element | null = null;
  for (let i = 0; i < segments.length; i++) {
    const seg = (segments[i] ?? '').trim();
    const root: Document | ShadowRoot | null = i === 0 ? document : shadowOf(current);
    if (!root) return { found: false, error: `no shadow root at segment ${i}` };
    const given = xpathIn(seg);
    const byCss: { el: Element | null } | undefined = given === undefined ? css(root, seg) : undefined;
    const xpath = given ?? seg;
    if (byCss) current = byCss.el;
    else if (i === 0) {
      try {
        const r = document.evaluate(xpath, document, null, XPathResult.FIRST_ORDERED_NODE_TYPE, null);
        current = r.singleNodeValue as Element | null;
      } catch (e) {
        const what = given === undefined ? 'invalid selector (neither CSS nor XPath)' : 'invalid XPath';
        return { found: false, error: `${what} ${seg}: ${(e as Error).message}` };
      }
    } else current = walkSteps(root, xpath);
    if (!current) return { found: false, error: `nothing at segment ${i + 1} (${seg})` };
    const tag = current.localName;
    if ((tag === 'iframe' || tag === 'frame') && i < segments.length - 1) {
      g.__bfnTarget = current;
      return { found: true, frameHop: i + 1 };
    }
  }
  if (arg.mark) g.__bfnTarget = current;
  return { found: !!current };
}
