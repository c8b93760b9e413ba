import type { Features } from './features.ts';
import type { PackedExtra, RawFrameSlot } from './payload.ts';
import type { Semantics } from './semantics.ts';
import type { States } from './states.ts';
import type { XPaths } from './xpath.ts';

/**
 * Runs INSIDE a page frame, like collect.ts (self-contained but for the helpers it is handed): what
 * an element's record and line carry besides its role and name — its URL, the rarely present
 * fields (value, states, options, matcher facts…), the word its line shows for the role, and where
 * an iframe's content sits.
 */
export function records({
  clean,
  cap,
  currentValue,
  statesOf,
  factsOf,
  xpathChain,
}: Semantics & States & Features & XPaths) {
  /**
   * An absolute http(s) URL the URL parser would give back unchanged: lower-case host whose last
   * label is no number (no IPv4 rewriting), no port, a path of plain characters without dot
   * segments, plain query and fragment. Resolving it through `href` costs microseconds per link.
   */
  const CANONICAL =
    /^https?:\/\/(?:[a-z0-9-]+\.)*[a-z][a-z0-9-]*(?:\/(?!\.)[\w\-~%]*(?:\.[\w\-~%]+)*)+\/?(?:\?[\w\-.~/%=&+]*)?(?:#[\w\-.~/%=&+!$'()*,;:@?]*)?$/;
  /** A same-document link whose fragment the parser keeps as written. */
  const FRAGMENT = /^#[\w\-.~/%=&+!$'()*,;:@?]*$/;

  /**
   * A link's or image's URL; an origin-relative href travels as is when the document has an origin
   * the caller can put back (`asIs`: http, https or file, and no <base> changing it).
   * `docUrl` is the document's http(s) URL without its fragment ('' for any other scheme).
   */
  function urlOf(el: Element, asIs: boolean, docUrl: string): string | undefined {
    const tag = el.localName;
    if (tag === 'a' || tag === 'area') {
      const raw = el.getAttribute('href') ?? '';
      // An origin-relative path needs no resolving: it travels as is and the caller adds the origin.
      if (asIs && raw.startsWith('/') && !raw.startsWith('//') && !raw.includes('..')) return raw;
      if (CANONICAL.test(raw)) return raw;
      if (docUrl && asIs && FRAGMENT.test(raw)) return docUrl + raw;
      const href = (el as HTMLAnchorElement).href;
      return href && !href.startsWith('javascript:') ? href : undefined;
    }
    if (tag === 'img')
      return (el as HTMLImageElement).currentSrc || (el as HTMLImageElement).src || undefined;
    return undefined;
  }

  /** The fields of an addressable element that are rarely present (see PackedExtra); 0 for none. */
  function extraOf(
    el: Element,
    role: string,
    name: string,
    label: string,
    rect: DOMRect,
    interactive: boolean,
    dialogKey: number,
  ): PackedExtra | 0 {
    const tag = el.localName;
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
    const facts = interactive ? factsOf(el, role, !!name, rect) : undefined;
    if (facts) extra.facts = facts;
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
    return hasExtra ? extra : 0;
  }

  /** The role word of an element's line. */
  function shownRole(el: Element, role: string): string {
    const tag = el.localName;
    // Headings read as `h2: Title`: the level says it is a heading, in fewer tokens.
    let shown = role;
    if (role === 'heading') {
      const level = /^h([1-6])$/.exec(tag)?.[1] ?? el.getAttribute('aria-level');
      if (level) shown = `h${level}`;
    }
    return shown;
  }

  /** Where an iframe's content box sits in this frame's viewport, for the frame slot on `line`. */
  function frameSlot(
    el: Element & { __bfnKey?: number },
    style: CSSStyleDeclaration,
    rect: DOMRect,
    line: number,
  ): RawFrameSlot {
    const g = globalThis as unknown as Record<string, unknown>;
    // Stable per iframe element, so the caller can remember which Frame fills which slot.
    if (!el.__bfnKey) el.__bfnKey = g.__bfnFrameSeq = ((g.__bfnFrameSeq as number | undefined) ?? 0) + 1;
    const key = el.__bfnKey;
    const cs = style;
    const bl = parseFloat(cs.borderLeftWidth) + parseFloat(cs.paddingLeft);
    const bt = parseFloat(cs.borderTopWidth) + parseFloat(cs.paddingTop);
    return {
      key,
      line,
      xpath: xpathChain(el),
      x: rect.left + bl,
      y: rect.top + bt,
      w: el.clientWidth,
      h: el.clientHeight,
    };
  }

  return { urlOf, extraOf, shownRole, frameSlot };
}

export type Records = ReturnType<typeof records>;
