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
    if (parent && !siblingIndex.has(el)) indexChildren(parent);
    const index = siblingIndex.get(el) ?? 1;
    const twins = (tagCounts.get(parent as Node)?.get(el.localName) ?? 1) > 1;
    const step = twins ? `${test}[${index}]` : test;
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
