/**
 * Runs INSIDE a page frame, like collect.ts (self-contained, no imports but types): which part of
 * the document a read walks — the first match of its `selector` — and which elements it leaves out
 * with their subtrees (`ignore`). Selectors as Stagehand's: `xpath=…`, a bare XPath (`/html/body/main`,
 * `//h1`, `(//div)[2]`), or CSS.
 */
export interface Scope {
  /** The element to walk; undefined with `error` when the selector is not valid or matches nothing. */
  root?: Element;
  error?: string;
  /** Left out: the elements the XPath ignores found, and (tested per element) the CSS ones. */
  ignoredEls: Set<Node>;
  ignoreSel: string;
}

export function scoping() {
  function xpathIn(selector: string): string | undefined {
    if (/^xpath=/i.test(selector)) return selector.slice(6);
    return /^[/(]/.test(selector) ? selector : undefined;
  }

  function scopeOf(doc: Document, selector: string | undefined, ignore: string[] | undefined): Scope {
    // XPath ones are found once here, CSS ones tested per element (that reaches into shadow roots
    // as well). One that is not valid is skipped, as the SDK skips it.
    const ignoredEls = new Set<Node>();
    const ignoreCss: string[] = [];
    for (const raw of ignore ?? []) {
      const sel = raw.trim();
      if (!sel) continue;
      const xpath = xpathIn(sel);
      try {
        if (xpath === undefined) {
          doc.createDocumentFragment().querySelector(sel);
          ignoreCss.push(sel);
          continue;
        }
        const found = doc.evaluate(xpath, doc, null, XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null);
        for (let i = 0; i < found.snapshotLength; i++) ignoredEls.add(found.snapshotItem(i)!);
      } catch {
        // not a valid selector
      }
    }
    const scope: Scope = { ignoredEls, ignoreSel: ignoreCss.join(', ') };
    if (!selector) {
      scope.root = doc.documentElement;
      return scope;
    }
    const sel = selector.trim();
    const xpath = xpathIn(sel);
    let root: Element | null = null;
    try {
      if (xpath === undefined) root = doc.querySelector(sel);
      else {
        const first = XPathResult.FIRST_ORDERED_NODE_TYPE;
        const node = doc.evaluate(xpath, doc, null, first, null).singleNodeValue;
        // `/` is the document itself: the whole page.
        root = node === doc ? doc.documentElement : node?.nodeType === 1 ? (node as Element) : null;
      }
    } catch {
      scope.error = `invalid selector: ${selector}`;
      return scope;
    }
    if (root) scope.root = root;
    else scope.error = `no element matches selector: ${selector}`;
    return scope;
  }

  return { scopeOf };
}

export type Scoping = ReturnType<typeof scoping>;
