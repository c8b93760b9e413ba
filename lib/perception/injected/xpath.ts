/**
 * Runs INSIDE a page frame, like collect.ts (self-contained, no imports): the durable XPath chain
 * of an element, one segment per root (document or shadow root). Its caches hold for one collect
 * call: collect() empties them before and after its walk.
 */
export function xpaths() {
  // Paths of ancestors are shared by many elements (every row of a table): compute each once,
  // and number all children of a parent in one pass instead of scanning siblings per element.
  const pathCache = new Map<Element, string>();
  const siblingIndex = new Map<Element, number>();
  const tagCounts = new Map<Node, Map<string, number>>();

  function reset() {
    pathCache.clear();
    siblingIndex.clear();
    tagCounts.clear();
  }

  function indexChildren(parent: Node) {
    const counts = new Map<string, number>();
    for (let c = (parent as ParentNode).firstElementChild; c; c = c.nextElementSibling) {
      const n = (counts.get(c.localName) ?? 0) + 1;
      counts.set(c.localName, n);
      siblingIndex.set(c, n);
    }
    tagCounts.set(parent, counts);
  }

  /** How far a sibling scan goes before the parent's children are numbered all at once. */
  const SCAN = 16;

  /**
   * The element's position among its siblings of the same tag, or 0 when it has none. Most
   * parents have a few children: a scan of the neighbours costs less than numbering them all in
   * maps; a parent with many (a long list) gets numbered once.
   */
  function placeAmongSiblings(el: Element, parent: Node): number {
    const tag = el.localName;
    if (!tagCounts.has(parent)) {
      let index = 1;
      let steps = 0;
      let s = el.previousElementSibling;
      for (; s && steps < SCAN; s = s.previousElementSibling, steps++) if (s.localName === tag) index++;
      if (!s) {
        if (index > 1) return index;
        steps = 0;
        let n = el.nextElementSibling;
        for (; n && steps < SCAN; n = n.nextElementSibling, steps++) if (n.localName === tag) return 1;
        if (!n) return 0;
      }
      indexChildren(parent);
    }
    return (tagCounts.get(parent)?.get(tag) ?? 1) > 1 ? (siblingIndex.get(el) ?? 1) : 0;
  }

  /** One XPath segment from `el` up to its root (document or shadow root). */
  function xpathInRoot(el: Element): string {
    const cached = pathCache.get(el);
    if (cached !== undefined) return cached;
    const parent = el.parentNode;
    const html = el.namespaceURI === 'http://www.w3.org/1999/xhtml';
    // Prefixed or malformed tag names ("fb:login-button") are no valid XPath name test.
    const plain = html && /^[A-Za-z_][\w.-]*$/.test(el.localName);
    const quote = el.localName.includes("'") ? '"' : "'";
    const test = plain ? el.localName : `*[local-name()=${quote}${el.localName}${quote}]`;
    const index = parent ? placeAmongSiblings(el, parent) : 0;
    const step = index ? `${test}[${index}]` : test;
    const path = parent && parent.nodeType === 1 ? `${xpathInRoot(parent as Element)}/${step}` : `/${step}`;
    pathCache.set(el, path);
    return path;
  }

  /** XPath chain across shadow roots: host segment >> inner segment (see DurableLocator). */
  function xpathChain(el: Element): string {
    // Most elements live in the document itself: one segment, nothing to join.
    if (!(el.getRootNode() instanceof ShadowRoot)) return xpathInRoot(el);
    const segments: string[] = [];
    for (let n: Element | null = el; n; ) {
      segments.push(xpathInRoot(n));
      const root = n.getRootNode();
      n = root instanceof ShadowRoot ? root.host : null;
    }
    return segments.reverse().join(' >> ');
  }

  return { xpathChain, resetXpaths: reset };
}

export type XPaths = ReturnType<typeof xpaths>;
