import type { Semantics } from './semantics.ts';

/**
 * Runs INSIDE a page frame (serialised with Function.prototype.toString), so it must be
 * self-contained: no imports (types aside), no references to module scope, only browser globals
 * and the `semantics()` helpers handed in.
 *
 * One pass over the composed tree (shadow roots and slots included) that turns each element worth
 * a line into outline text, an id, a durable XPath chain and its box.
 */

export interface CollectOptions {
  selector?: string;
  ignore?: string;
  text: boolean;
}

/** [depth, text, elementId (0 = none), flags, docTop] — flags: 1 interactive, 2 in viewport, 4 frame slot. */
export type RawLine = [number, string, number, number, number];

/** Rarely present element fields, sent only when there is something to send. */
export interface PackedExtra {
  value?: string;
  placeholder?: string;
  label?: string;
  inputType?: string;
  options?: string[];
  states?: Record<string, boolean | string>;
  /** Key of the open dialog holding the element (see SnapshotElement.dialog). */
  dialog?: number;
}

/**
 * One element, as a tuple to keep big pages' payloads small:
 * [id, role, name, tag, xpath, flags (1 in viewport, 2 interactive, 4 scrollable), url | 0,
 *  [x, y, w, h] | 0, extra | 0]. A url starting with `/` is relative to the frame's origin.
 */
export type PackedElement = [
  number,
  string,
  string,
  string,
  string,
  number,
  string | 0,
  [number, number, number, number] | 0,
  PackedExtra | 0,
];

export interface RawFrameSlot {
  key: number;
  line: number;
  xpath: string;
  /** Content-box origin of the iframe inside this frame's viewport. */
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface RawCollect {
  url: string;
  title: string;
  lines: RawLine[];
  elements: PackedElement[];
  frames: RawFrameSlot[];
  /** First snapshot of this document: its ids start over. */
  fresh: boolean;
  viewport: { width: number; height: number; scrollX: number; scrollY: number; docHeight: number };
  counts: {
    nodes: number;
    canvas: number;
    canvasArea: number;
    svgIcons: number;
    unlabelled: number;
    semantic: number;
  };
  error?: string;
}

export function collect(opts: CollectOptions, sem: Semantics): RawCollect {
  const {
    INTERACTIVE_ROLES: _ir,
    NAME_FROM_CONTENT,
    STRUCTURAL,
    PHRASING,
    clean,
    cap,
    roleOf,
    nameOf,
    nativeInteractive,
    clickKind,
    hasClickListener,
    PROMOTABLE,
    statesOf,
    currentValue,
  } = sem;
  const g = globalThis as unknown as Record<string, unknown>;
  const doc = document;
  const win = window;
  const vw = win.innerWidth;
  const vh = win.innerHeight;
  const scrollX = win.scrollX;
  const scrollY = win.scrollY;
  const closedRoots = g.__bfnShadowRoots as WeakMap<Element, ShadowRoot> | undefined;

  // Stable ids: an element keeps its id for as long as it lives in this document.
  type Tagged = Element & { __bfnId?: number; __bfnKey?: number };
  const registry = new Map<number, Element>();
  g.__bfnEls = registry;
  // Ids are local to this document and live as long as their element; the caller maps them into
  // one page-wide id space. A document never snapshotted before starts at 1.
  const fresh = !g.__bfnSeen;
  let nextId = fresh ? 1 : ((g.__bfnLocalNext as number | undefined) ?? 1);
  g.__bfnSeen = true;

  const lines: RawLine[] = [];
  const elements: PackedElement[] = [];
  const origin = location.origin;
  const hasBase = !!doc.querySelector('base[href]');
  // Elements whose text names a control elsewhere (aria-labelledby): that name already says it.
  const namingIds = new Set<string>();
  for (const ref of Array.from(doc.querySelectorAll('[aria-labelledby]')))
    for (const id of (ref.getAttribute('aria-labelledby') ?? '').split(/\s+/)) if (id) namingIds.add(id);
  const frames: RawFrameSlot[] = [];
  // Key of the open dialog (role dialog / alertdialog, <dialog open>, aria-modal) being walked.
  let dialogKey = 0;
  const counts = { nodes: 0, canvas: 0, canvasArea: 0, svgIcons: 0, unlabelled: 0, semantic: 0 };

  // Paths of ancestors are shared by many elements (every row of a table): compute each once,
  // and number all children of a parent in one pass instead of scanning siblings per element.
  const pathCache = new Map<Element, string>();
  const siblingIndex = new Map<Element, number>();
  const tagCounts = new Map<Node, Map<string, number>>();

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
    const test = html ? el.localName : `*[local-name()='${el.localName}']`;
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
    const segments: string[] = [];
    for (let n: Element | null = el; n; ) {
      segments.push(xpathInRoot(n));
      const root = n.getRootNode();
      n = root instanceof ShadowRoot ? root.host : null;
    }
    return segments.reverse().join(' >> ');
  }

  function shadowOf(el: Element): ShadowRoot | null {
    return el.shadowRoot ?? closedRoots?.get(el) ?? null;
  }

  function urlOf(el: Element): string | undefined {
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') {
      const raw = el.getAttribute('href') ?? '';
      // An origin-relative path needs no resolving: it travels as is and the caller adds the origin.
      if (raw.startsWith('/') && !raw.startsWith('//') && !raw.includes('..') && !hasBase) return raw;
      const href = (el as HTMLAnchorElement).href;
      return href && !href.startsWith('javascript:') ? href : undefined;
    }
    if (tag === 'img')
      return (el as HTMLImageElement).currentSrc || (el as HTMLImageElement).src || undefined;
    return undefined;
  }

  const ignoreSel = opts.ignore;
  let scopeRoot: Element | null = doc.documentElement;
  if (opts.selector) {
    try {
      scopeRoot = doc.querySelector(opts.selector);
    } catch {
      return emptyResult(`invalid selector: ${opts.selector}`);
    }
    if (!scopeRoot) return emptyResult(`no element matches selector: ${opts.selector}`);
  }

  function emptyResult(error: string): RawCollect {
    return {
      url: location.href,
      title: doc.title,
      lines: [],
      elements: [],
      frames: [],
      fresh,
      viewport: { width: vw, height: vh, scrollX, scrollY, docHeight: 0 },
      counts,
      error,
    };
  }

  // True while the last line is plain text that the next inline text may join.
  let inlineOpen = false;

  function pushText(text: string, depth: number, top: number, inView: boolean) {
    if (!opts.text || !text) return;
    const prev = lines[lines.length - 1];
    // Adjacent inline text at the same depth reads as one sentence: keep it on one line.
    if (inlineOpen && prev && prev[0] === depth && prev[1].length + text.length < 600) {
      prev[1] = prev[1] + ' ' + text;
      if (inView) prev[3] |= 2;
    } else {
      lines.push([depth, text, 0, inView ? 2 : 0, top]);
      inlineOpen = true;
    }
  }

  function breakInline() {
    inlineOpen = false;
  }

  // Geometry of the element whose children are being walked: text nodes take their position from it.
  let textTop = 0;
  let textInView = false;

  function walkChildren(
    parent: Node,
    depth: number,
    cursor: string,
    root: Document | ShadowRoot,
    nameCovered: boolean,
  ) {
    for (let c: Node | null = parent.firstChild; c; c = c.nextSibling)
      walkNode(c, depth, cursor, root, nameCovered);
  }

  function walkNode(
    node: Node,
    depth: number,
    cursor: string,
    root: Document | ShadowRoot,
    nameCovered: boolean,
  ) {
    if (node.nodeType === 3) {
      if (nameCovered) return;
      const t = clean(node.nodeValue);
      if (t) pushText(t, depth, textTop, textInView);
      return;
    }
    if (node.nodeType !== 1) return;
    const el = node as Tagged;
    const tag = el.localName;
    if (tag === 'script' || tag === 'style' || tag === 'noscript' || tag === 'template' || tag === 'head')
      return;
    if (tag === 'slot') {
      const assigned = (el as unknown as HTMLSlotElement).assignedNodes({ flatten: true });
      if (assigned.length > 0) {
        for (const a of assigned) walkNode(a, depth, cursor, root, nameCovered);
        return;
      }
      walkChildren(el, depth, cursor, root, nameCovered);
      return;
    }
    counts.nodes++;
    if (ignoreSel && el.matches(ignoreSel)) return;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
    const style = getComputedStyle(el);
    const display = style.display;
    if (display === 'none') return;
    const isContents = display === 'contents';
    // Plain inline wrappers (<b>, <span>, <sup>…) are most of a text-heavy page and never a line
    // of their own: skip their geometry and role work, keep walking their text.
    if (
      display === 'inline' &&
      PHRASING.has(tag) &&
      !el.hasAttribute('role') &&
      !el.hasAttribute('tabindex') &&
      !el.hasAttribute('onclick') &&
      !el.hasAttribute('aria-label') &&
      !hasClickListener(el) &&
      style.visibility === 'visible' &&
      (style.cursor !== 'pointer' || cursor === 'pointer') &&
      !shadowOf(el)
    ) {
      walkChildren(el, depth, style.cursor, root, nameCovered || (!!el.id && namingIds.has(el.id)));
      return;
    }
    const rect = el.getBoundingClientRect();
    const hidden =
      style.visibility === 'hidden' ||
      style.visibility === 'collapse' ||
      (!isContents && rect.width === 0 && rect.height === 0 && style.overflow !== 'visible');
    const role = hidden ? '' : roleOf(el);
    const inView =
      rect.bottom > 0 && rect.top < vh && rect.right > 0 && rect.left < vw && rect.width * rect.height > 0;

    if (tag === 'canvas') {
      counts.canvas++;
      counts.canvasArea += rect.width * rect.height;
    }
    if (tag === 'svg') {
      if (
        !hidden &&
        !clean(el.getAttribute('aria-label')) &&
        !el.querySelector('title') &&
        !clean(el.textContent)
      )
        counts.svgIcons++;
      // SVG internals are drawing instructions, not content; the svg line (if any) is enough.
      if (!role || role === 'img' || role === 'none') {
        const label =
          clean(el.getAttribute('aria-label')) || clean(el.querySelector(':scope > title')?.textContent);
        if (label && !nameCovered) pushLine(el, 'img', label, '', depth, rect, inView, false, root, false);
        return;
      }
    }

    const native = !hidden && nativeInteractive(el, role);
    // A span, div or li acting as a button or link gets that role, so the model and the matcher
    // can name it like any other control.
    const kind = hidden || native ? '' : clickKind(el, style, cursor);
    const interactive = native || kind !== '';
    const scrollable =
      !hidden &&
      tag !== 'html' &&
      tag !== 'body' &&
      (style.overflowY === 'auto' || style.overflowY === 'scroll') &&
      el.scrollHeight > el.clientHeight + 4;

    let childDepth = depth;
    let covered = nameCovered;
    if (!hidden && (interactive || scrollable || (role && role !== 'generic'))) {
      const effectiveRole =
        (kind === 'button' || kind === 'link') && PROMOTABLE.has(role)
          ? kind
          : role || (scrollable ? 'scrollable' : 'clickable');
      const { name, label } = nameOf(el, effectiveRole, root);
      if (role && role !== 'generic' && role !== 'none') counts.semantic++;
      if (interactive && !name) counts.unlabelled++;
      const emits =
        interactive ||
        scrollable ||
        tag === 'iframe' ||
        tag === 'frame' ||
        tag === 'img' ||
        tag === 'canvas' ||
        ((role === 'heading' || role === 'status' || role === 'alert') && !!name) ||
        STRUCTURAL.has(role) ||
        ((role === 'cell' || role === 'columnheader' || role === 'rowheader') && !!name);
      if (emits && (!nameCovered || interactive || tag === 'img')) {
        pushLine(el, effectiveRole, name, label, depth, rect, inView, interactive, root, scrollable);
        childDepth = depth + 1;
        // Name came from the content: the children's text is already on this line.
        const fromContent = NAME_FROM_CONTENT.has(role) || tag === 'summary' || effectiveRole === 'clickable';
        // Text inside a control is its name, or decoration when aria-label names it (an icon's ×).
        if (name && (fromContent || interactive)) covered = true;
        if (tag === 'iframe' || tag === 'frame') {
          // Stable per iframe element, so the caller can remember which Frame fills which slot.
          if (!el.__bfnKey)
            el.__bfnKey = g.__bfnFrameSeq = ((g.__bfnFrameSeq as number | undefined) ?? 0) + 1;
          const key = el.__bfnKey;
          const cs = style;
          const bl = parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
          const bt = parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop);
          const lastLine = lines[lines.length - 1]!;
          lastLine[3] |= 4;
          frames.push({
            key,
            line: lines.length - 1,
            xpath: xpathChain(el),
            x: rect.left + bl,
            y: rect.top + bt,
            w: el.clientWidth,
            h: el.clientHeight,
          });
          return;
        }
      }
    } else if (!hidden && tag === 'br') {
      breakInline();
    }
    if (tag === 'input' || tag === 'textarea' || tag === 'select' || tag === 'img' || tag === 'canvas')
      return;
    // A label's words are already the name of its control, a legend's or caption's the name of its
    // group or table; repeating them only costs tokens.
    if (tag === 'label' && (el as unknown as HTMLLabelElement).control) covered = true;
    if (tag === 'legend' || tag === 'caption') covered = true;
    if (!interactive && el.id && namingIds.has(el.id) && !STRUCTURAL.has(role) && role !== 'heading')
      covered = true;
    const childCursor = style.cursor;
    const shadow = shadowOf(el);
    // Block-level boxes end a run of inline text.
    const block = display !== 'inline' && !isContents;
    if (block) breakInline();
    const savedTop = textTop;
    const savedInView = textInView;
    const savedDialog = dialogKey;
    if (role === 'dialog' || role === 'alertdialog' || el.getAttribute('aria-modal') === 'true') {
      const d = el as Tagged & { __bfnDialog?: number };
      if (!d.__bfnDialog)
        d.__bfnDialog = g.__bfnDialogSeq = ((g.__bfnDialogSeq as number | undefined) ?? 0) + 1;
      dialogKey = d.__bfnDialog;
    }
    if (!isContents) {
      textTop = rect.top + scrollY;
      textInView = inView;
    }
    // Laid out but not rendered: a closed <details> shows only its summary, and
    // content-visibility: hidden shows nothing inside (browsers still give those boxes a size).
    if (tag === 'details' && !(el as unknown as HTMLDetailsElement).open) {
      const summary = el.querySelector(':scope > summary');
      if (summary) walkNode(summary, childDepth, childCursor, root, covered);
    } else if (style.contentVisibility === 'hidden') {
      // nothing inside is on screen
    } else if (shadow) walkChildren(shadow, childDepth, childCursor, shadow, covered);
    else walkChildren(el, childDepth, childCursor, root, covered);
    textTop = savedTop;
    textInView = savedInView;
    dialogKey = savedDialog;
    if (block) breakInline();
  }

  function pushLine(
    el: Tagged,
    role: string,
    name: string,
    label: string,
    depth: number,
    rect: DOMRect,
    inView: boolean,
    interactive: boolean,
    root: Document | ShadowRoot,
    scrollable: boolean,
  ) {
    const tag = el.localName;
    const url = urlOf(el);
    const addressable = interactive || scrollable || !!url || tag === 'iframe' || tag === 'canvas';
    let id = 0;
    if (addressable) {
      if (!el.__bfnId) el.__bfnId = nextId++;
      id = el.__bfnId;
      registry.set(id, el);
      const value = currentValue(el, role);
      const placeholder = clean(el.getAttribute('placeholder')) || undefined;
      const extra: PackedExtra = {};
      const states = statesOf(el, role);
      for (const _ in states) {
        extra.states = states;
        break;
      }
      if (value !== undefined) extra.value = cap(value, 200);
      if (placeholder) extra.placeholder = placeholder;
      if (label) extra.label = label;
      if (tag === 'input') extra.inputType = (el as unknown as HTMLInputElement).type;
      if (dialogKey) extra.dialog = dialogKey;
      if (tag === 'select') {
        extra.options = Array.from((el as unknown as HTMLSelectElement).options).map((o) =>
          clean(o.label || o.text),
        );
      }
      let hasExtra = false;
      for (const _ in extra) {
        hasExtra = true;
        break;
      }
      // Same-origin URLs travel without their origin; the caller puts it back.
      const shortUrl =
        url && origin !== 'null' && url.startsWith(`${origin}/`) ? url.slice(origin.length) : url;
      elements.push([
        id,
        role,
        cap(name, 160),
        tag,
        xpathChain(el),
        (inView ? 1 : 0) | (interactive ? 2 : 0) | (scrollable ? 4 : 0),
        shortUrl || 0,
        // Whole pixels are precise enough to click and cost half the bytes.
        rect.width > 0 || rect.height > 0
          ? [Math.round(rect.left), Math.round(rect.top), Math.round(rect.width), Math.round(rect.height)]
          : 0,
        hasExtra ? extra : 0,
      ]);
    }
    // Headings read as `h2: Title`: the level says it is a heading, in fewer tokens.
    let shown = role;
    if (role === 'heading') {
      const level = /^h([1-6])$/.exec(tag)?.[1] ?? el.getAttribute('aria-level');
      if (level) shown = `h${level}`;
    }
    const line: RawLine = [
      depth,
      `${shown}\u0000${name}`,
      id,
      (interactive ? 1 : 0) | (inView ? 2 : 0),
      Math.round(rect.top + scrollY),
    ];
    lines.push(line);
    inlineOpen = false;
    void root;
  }

  walkNode(scopeRoot!, 0, 'auto', doc, false);
  g.__bfnLocalNext = nextId;

  return {
    url: location.href,
    title: doc.title,
    lines,
    elements,
    frames,
    fresh,
    viewport: {
      width: vw,
      height: vh,
      scrollX,
      scrollY,
      docHeight: Math.max(doc.documentElement.scrollHeight, doc.body?.scrollHeight ?? 0),
    },
    counts,
  };
}
