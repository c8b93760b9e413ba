import type { Features } from './features.ts';
import type { Interactivity } from './interactive.ts';
import type { LineRules } from './line-rules.ts';
import type { Names } from './names.ts';
import type { PageElement, RawCollect, RawFrameSlot } from './payload.ts';
import type { Records } from './record.ts';
import type { Scoping } from './scope.ts';
import type { Semantics } from './semantics.ts';
import type { States } from './states.ts';
import type { Wire } from './wire.ts';
import type { XPaths } from './xpath.ts';

/**
 * Runs INSIDE a page frame (serialised with Function.prototype.toString), so it must be
 * self-contained: no imports (types aside), no references to module scope, only browser globals
 * and the helpers handed in (`sem`, made by the factories source.ts lists).
 *
 * One pass over the composed tree (shadow roots and slots included) that turns each element worth
 * a line into outline text, an id, a durable XPath chain and its box (see payload.ts).
 */

export interface CollectOptions {
  /** Scope: CSS, or XPath (`xpath=…`, or starting with `/` or `(`); its first match is walked. */
  selector?: string;
  /** Elements left out with their subtrees: CSS or XPath each; one that is not valid is skipped. */
  ignore?: string[];
  text: boolean;
  /**
   * A warm-up, not a read: walks at most this many elements and leaves no trace (no ids, no
   * registry, the document still unread), so the page's JIT has compiled and profiled the walk
   * before the first real read asks for it (start.ts). Its result is thrown away.
   */
  warm?: number;
}

/** The helpers collect() is handed, one object made by all the factories in source.ts. */
export type Helpers = Semantics &
  Names &
  States &
  Interactivity &
  Features &
  XPaths &
  Records &
  LineRules &
  Scoping &
  Wire;

export function collect(opts: CollectOptions, sem: Helpers): RawCollect {
  const { NAME_FROM_CONTENT, STRUCTURAL, PROMOTABLE, clean, cap, roleOf, nameOf } = sem;
  const { nativeInteractive, clickKind, urlOf, extraOf, shownRole, frameSlot, xpathChain } = sem;
  const { plainInline, zeroSize, containable, scrollsItself, worthALine, packWire } = sem;
  sem.resetFeatures();
  sem.resetXpaths();
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
  const dry = opts.warm !== undefined;
  let budget = opts.warm ?? Number.POSITIVE_INFINITY;
  const registry = new Map<number, Element>();
  if (!dry) g.__bfnEls = registry;
  // Ids are local to this document and live as long as their element; the caller maps them into
  // one page-wide id space. A document never snapshotted before starts at 1.
  const fresh = !g.__bfnSeen;
  let nextId = fresh ? 1 : ((g.__bfnLocalNext as number | undefined) ?? 1);
  if (!dry) g.__bfnSeen = true;

  // The lines go straight into their travelling form (wire.ts); the elements are packed at the end.
  const lines = sem.lineWriter();
  const elements: PageElement[] = [];
  // The origin the caller puts back on the URLs that travel without it (assemble.ts): one of a
  // scheme it can rebuild the same way (a file: page's is "file://"); others travel whole.
  const origin = /^(https?|file):$/.test(location.protocol) ? location.origin : '';
  const hasBase = !!doc.querySelector('base[href]');
  // What a same-document link (`#part`) resolves to, but its fragment.
  const docUrl = /^https?:$/.test(location.protocol) ? location.href.split('#')[0]! : '';
  // Elements whose text names a control elsewhere (aria-labelledby): that name already says it.
  const namingIds = new Set<string>();
  for (const ref of Array.from(doc.querySelectorAll('[aria-labelledby]')))
    for (const id of (ref.getAttribute('aria-labelledby') ?? '').split(/\s+/)) if (id) namingIds.add(id);
  const frames: RawFrameSlot[] = [];
  // Key of the open dialog (role dialog / alertdialog, <dialog open>, aria-modal) being walked.
  let dialogKey = 0;
  const counts = { nodes: 0, canvas: 0, canvasArea: 0, svgIcons: 0, unlabelled: 0, semantic: 0 };

  function shadowOf(el: Element): ShadowRoot | null {
    return el.shadowRoot ?? closedRoots?.get(el) ?? null;
  }

  const scope = sem.scopeOf(doc, opts.selector, opts.ignore);
  const { ignoredEls, ignoreSel } = scope;
  if (scope.error !== undefined) return emptyResult(scope.error);

  function emptyResult(error: string): RawCollect {
    return {
      url: location.href,
      title: doc.title,
      ...packWire([], []),
      frames: [],
      fresh,
      viewport: { width: vw, height: vh, scrollX, scrollY, docHeight: 0 },
      counts,
      error,
    };
  }

  // True while the last line is plain text that the next inline text may join.
  let inlineOpen = false;

  /** Whether a box shows any of itself in the viewport. */
  const shows = (r: DOMRect): boolean =>
    r.bottom > 0 && r.top < vh && r.right > 0 && r.left < vw && r.width * r.height > 0;

  // The element whose children are being walked: text nodes take their position from its box,
  // read the first time one of them needs it (most boxes hold only other boxes).
  let textOwner: Element | undefined;
  let ownerBox: DOMRect | undefined;

  function pushText(text: string, depth: number) {
    if (!opts.text) return;
    if (textOwner && !ownerBox) ownerBox = textOwner.getBoundingClientRect();
    const box = ownerBox;
    const inView = !!box && shows(box);
    // Adjacent inline text at the same depth reads as one sentence: keep it on one line.
    if (inlineOpen && lines.lastDepth() === depth && lines.lastText().length + text.length < 600) {
      lines.joinText(text, inView);
    } else {
      lines.text(depth, text, inView ? 2 : 0, box ? box.top + scrollY : 0);
      inlineOpen = true;
    }
  }

  function breakInline() {
    inlineOpen = false;
  }

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
      if (t) pushText(t, depth);
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
    if (--budget < 0) return;
    if ((ignoredEls.size > 0 && ignoredEls.has(el)) || (ignoreSel && el.matches(ignoreSel))) return;
    // aria-hidden on <html> or <body> is an authoring mistake (a modal library hiding "the app" with
    // the modal inside it); ARIA has user agents ignore it there, and so do we: the page is on screen.
    const ariaHidden = el.getAttribute('aria-hidden') === 'true' && tag !== 'body' && tag !== 'html';
    if (ariaHidden || el.hasAttribute('inert')) return;
    const style = getComputedStyle(el);
    // Each read of a computed style property costs about a microsecond (the value is built anew
    // every time): the ones every element needs are read once, here.
    const display = style.display;
    if (display === 'none') return;
    const isContents = display === 'contents';
    const visibility = style.visibility;
    const ownCursor = style.cursor;
    // Plain inline wrappers are never a line of their own: skip their geometry and role work,
    // keep walking their text.
    if (plainInline(el, display, visibility, ownCursor, cursor) && !shadowOf(el)) {
      walkChildren(el, depth, ownCursor, root, nameCovered || (!!el.id && namingIds.has(el.id)));
      return;
    }
    // The box is read only when something needs it (a line, a 0×0 test, a text child's place):
    // about half the elements of a page are boxes of boxes that never do.
    let rect: DOMRect | undefined;
    // Hidden: invisible, or 0×0 while clipping what overflows it. Overflow applies to block-level
    // boxes, and scrolling needs it there too: one read of it, then the box only if it clips. Other
    // boxes (a link, a table row) mostly get a line, and so the box, anyway: that comes first.
    let hidden = visibility === 'hidden' || visibility === 'collapse';
    let overflowY = '';
    if (!isContents && containable(display)) {
      // Computed as "<x> <y>", or one keyword for both.
      const overflow = style.overflow;
      overflowY = overflow.slice(overflow.indexOf(' ') + 1);
      if (!hidden && overflow !== 'visible') {
        rect = el.getBoundingClientRect();
        hidden = zeroSize(rect);
      }
    } else if (!isContents && !hidden) {
      rect = el.getBoundingClientRect();
      hidden = zeroSize(rect) && style.overflow !== 'visible';
    }
    const role = hidden ? '' : roleOf(el);

    if (tag === 'canvas') {
      rect ??= el.getBoundingClientRect();
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
        if (label && !nameCovered) {
          rect ??= el.getBoundingClientRect();
          pushLine(el, 'img', label, '', depth, rect, shows(rect), false, root, false);
        }
        return;
      }
    }

    const native = !hidden && nativeInteractive(el, role);
    // A span, div or li acting as a button or link gets that role, so the model and the matcher
    // can name it like any other control.
    const kind = hidden || native ? '' : clickKind(el, ownCursor, cursor);
    const interactive = native || kind !== '';
    const scrollable = !hidden && scrollsItself(el, display, overflowY);

    let childDepth = depth;
    let covered = nameCovered;
    if (!hidden && (interactive || scrollable || (role && role !== 'generic'))) {
      const effectiveRole =
        (kind === 'button' || kind === 'link') && PROMOTABLE.has(role)
          ? kind
          : role || (scrollable ? 'scrollable' : 'clickable');
      const { name, label } = nameOf(el, effectiveRole, root, style);
      if (role && role !== 'generic' && role !== 'none') counts.semantic++;
      if (interactive && !name) counts.unlabelled++;
      const emits = worthALine(tag, role, name, interactive, scrollable);
      if (emits && (!nameCovered || interactive || tag === 'img')) {
        rect ??= el.getBoundingClientRect();
        pushLine(el, effectiveRole, name, label, depth, rect, shows(rect), interactive, root, scrollable);
        childDepth = depth + 1;
        // Name came from the content: the children's text is already on this line.
        const fromContent = NAME_FROM_CONTENT.has(role) || tag === 'summary' || effectiveRole === 'clickable';
        // Text inside a control is its name, or decoration when aria-label names it (an icon's ×).
        if (name && (fromContent || interactive)) covered = true;
        if (tag === 'iframe' || tag === 'frame') {
          lines.markFrame();
          frames.push(frameSlot(el, style, rect, lines.count() - 1));
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
    const childCursor = ownCursor;
    const shadow = shadowOf(el);
    // Block-level boxes end a run of inline text.
    const block = display !== 'inline' && !isContents;
    if (block) breakInline();
    const savedOwner = textOwner;
    const savedBox = ownerBox;
    const savedDialog = dialogKey;
    if (role === 'dialog' || role === 'alertdialog' || el.getAttribute('aria-modal') === 'true') {
      const d = el as Tagged & { __bfnDialog?: number };
      if (!d.__bfnDialog)
        d.__bfnDialog = g.__bfnDialogSeq = ((g.__bfnDialogSeq as number | undefined) ?? 0) + 1;
      dialogKey = d.__bfnDialog;
    }
    if (!isContents) {
      textOwner = el;
      ownerBox = rect;
    }
    // Laid out but not rendered: a closed <details> shows only its summary, and
    // content-visibility: hidden shows nothing inside (browsers still give those boxes a size).
    if (tag === 'details' && !(el as unknown as HTMLDetailsElement).open) {
      const summary = el.querySelector(':scope > summary');
      if (summary) walkNode(summary, childDepth, childCursor, root, covered);
    } else if (containable(display) && style.contentVisibility === 'hidden') {
      // nothing inside is on screen (a link or a table row ignores the property)
    } else if (shadow) walkChildren(shadow, childDepth, childCursor, shadow, covered);
    else walkChildren(el, childDepth, childCursor, root, covered);
    textOwner = savedOwner;
    ownerBox = savedBox;
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
    const shown = shownRole(el, role);
    const url = urlOf(el, !!origin && !hasBase, docUrl);
    const addressable = interactive || scrollable || !!url || tag === 'iframe' || tag === 'canvas';
    let id = 0;
    if (addressable) {
      if (dry) id = nextId++;
      else {
        if (!el.__bfnId) el.__bfnId = nextId++;
        id = el.__bfnId;
      }
      registry.set(id, el);
      const extra = extraOf(el, role, name, label, rect, interactive, dialogKey);
      // Same-origin URLs travel without their origin; the caller puts it back.
      const shortUrl = url && origin && url.startsWith(`${origin}/`) ? url.slice(origin.length) : url;
      const capped = cap(name, 160);
      // Said by the line already (most elements): not sent twice.
      const asLine = capped === name && shown === role;
      elements.push([
        id,
        asLine ? '' : role,
        asLine ? '' : capped,
        tag,
        xpathChain(el),
        (inView ? 1 : 0) | (interactive ? 2 : 0) | (scrollable ? 4 : 0) | (asLine ? 8 : 0),
        shortUrl || '',
        // Whole pixels are precise enough to click and cost half the bytes.
        rect.width > 0 || rect.height > 0
          ? [Math.round(rect.left), Math.round(rect.top), Math.round(rect.width), Math.round(rect.height)]
          : 0,
        extra,
      ]);
    }
    lines.element(
      depth,
      shown,
      name,
      id,
      (interactive ? 1 : 0) | (inView ? 2 : 0),
      Math.round(rect.top + scrollY),
    );
    inlineOpen = false;
    void root;
  }

  walkNode(scope.root!, 0, 'auto', doc, false);
  if (!dry) g.__bfnLocalNext = nextId;
  // The per-walk caches key on elements: emptied now, they keep no removed DOM alive until the next read.
  sem.resetFeatures();
  sem.resetXpaths();

  return {
    url: location.href,
    title: doc.title,
    ...sem.finishWire(lines, elements, scrollY),
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
