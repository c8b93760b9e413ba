import type { Semantics } from './semantics.ts';

/**
 * Runs INSIDE a page frame, like semantics.ts: whether a user can act on an element — by what it
 * is (a control's role or tag) or by how the page treats it (click handlers, a pointer cursor,
 * tabindex) — and whether a clickable box is a button or a link. Self-contained but for the
 * semantics() helpers it is handed.
 */
export function interactivity({ INTERACTIVE_ROLES, clean }: Semantics) {
  /** Roles the page gave that say nothing about clicking: a click handler may make them a button. */
  const PROMOTABLE = new Set(['', 'generic', 'listitem']);
  /** Real controls: a box around one of these is not itself a control. */
  const REAL_CONTROLS =
    'a[href], button, input:not([type="hidden"]), select, textarea, [role="button"], [role="link"], [role="checkbox"], [role="radio"], [role="tab"], [role="menuitem"], [role="option"], [role="switch"], [onclick], [tabindex]:not([tabindex="-1"])';
  /** A handler's source that changes the page's address: the element is a link, not a button. */
  const NAVIGATES = /\blocation\b|\.href\b|window\.open\b|\bnavigate\(|pushState\(|\brouter\.push\b/;
  /** Text longer than this under a bare listener is delegation or tracking, not a button's name. */
  const LONG_TEXT = 80;
  const clickers = (globalThis as unknown as { __bfnClickers?: WeakMap<Element, unknown[]> }).__bfnClickers;

  /** Class or id words by which a page calls a control a button. */
  const BUTTON_WORDS = /(?:^|[\s_-])(?:btn|bttn|button|cta)(?:[\s_-]|$)/i;

  /**
   * An <a> without href is no link, and the browser gives it no pointer cursor: it is there for a
   * script to handle its clicks. When its class or id calls it a button, it is one, even where the
   * handler is out of sight (delegated to a framework root) or gone (a saved copy of the page).
   */
  function anchorButton(el: Element): boolean {
    return (
      el.localName === 'a' &&
      !el.hasAttribute('href') &&
      BUTTON_WORDS.test(`${el.getAttribute('class') ?? ''} ${el.id}`)
    );
  }

  /** Click-type listeners added with addEventListener (recorded by the init script), if any. */
  const hasClickListener = (el: Element): boolean => !!clickers && clickers.has(el);

  /** Interactive by what it is: a role or element made for input. */
  function nativeInteractive(el: Element, role: string): boolean {
    if (INTERACTIVE_ROLES.has(role)) return true;
    const tag = el.localName;
    if (tag === 'summary' || tag === 'video' || tag === 'audio') return true;
    return (el as HTMLElement).isContentEditable;
  }

  /** Whether a few levels of descendants hold an element with a click handler of its own. */
  function wrapsHandler(el: Element): boolean {
    const inner = el.getElementsByTagName('*');
    for (let i = 0; i < inner.length && i < 50; i++) {
      const d = inner[i]!;
      if (hasClickListener(d) || (d as HTMLElement).onclick) return true;
    }
    return false;
  }

  function navigates(el: Element): boolean {
    if (el.hasAttribute('data-href') || el.hasAttribute('data-url')) return true;
    let src = el.getAttribute('onclick') ?? '';
    for (const f of clickers?.get(el) ?? []) {
      const fn = typeof f === 'function' ? f : (f as { handleEvent?: unknown } | null)?.handleEvent;
      if (typeof fn === 'function') src += `\n${Function.prototype.toString.call(fn).slice(0, 2000)}`;
    }
    return NAVIGATES.test(src);
  }

  /**
   * How an element with no interactive role shows it can be clicked: 'button' or 'link' for a
   * handler, own `cursor: pointer`, tabindex or a button's class (on an <a> without href) on
   * something with text; 'clickable' for what is interactive but not button-like (draggable, a
   * handler around other controls, no text); ''
   * for nothing, and for noise: a pointer-cursor box around a real control, a cursor inherited
   * from a clickable parent, a bare listener on a big block of text.
   */
  function clickKind(el: Element, ownCursor: string, parentCursor: string): string {
    const tag = el.localName;
    if (tag === 'body' || tag === 'html') return '';
    const onclick = el.hasAttribute('onclick') || !!(el as HTMLElement).onclick;
    const listener = hasClickListener(el);
    const tabindex = el.getAttribute('tabindex');
    const tabbable = tabindex !== null && Number(tabindex) >= 0;
    const draggable = el.getAttribute('draggable') === 'true';
    // cursor:pointer set on this element (not just inherited) is how most custom widgets say "click me".
    const pointer = ownCursor === 'pointer' && parentCursor !== 'pointer';
    const named = anchorButton(el);
    if (!onclick && !listener && !tabbable && !draggable && !pointer && !named) return '';
    const explicit = onclick || tabbable || draggable;
    if (el.querySelector(REAL_CONTROLS)) return explicit ? 'clickable' : '';
    const text =
      clean(el.getAttribute('aria-label')) || clean(el.textContent) || clean(el.getAttribute('title'));
    // A pointer cursor on an empty box with no area is styling, not a control.
    const box = el as HTMLElement;
    if (!text && !explicit && !listener && (!box.offsetWidth || !box.offsetHeight)) return '';
    if (!text) return 'clickable';
    if (text.length > LONG_TEXT) return explicit || pointer ? 'clickable' : '';
    // A pointer box around a smaller element with its own handler: that element is the control.
    if (pointer && !explicit && !listener && wrapsHandler(el)) return '';
    if (!onclick && !listener && !pointer && !tabbable && !named) return 'clickable';
    return navigates(el) ? 'link' : 'button';
  }

  function isInteractive(
    el: Element,
    role: string,
    style: CSSStyleDeclaration,
    parentCursor: string,
  ): boolean {
    return nativeInteractive(el, role) || clickKind(el, style.cursor, parentCursor) !== '';
  }

  return {
    isInteractive,
    nativeInteractive,
    clickKind,
    hasClickListener,
    anchorButton,
    PROMOTABLE,
  };
}

export type Interactivity = ReturnType<typeof interactivity>;
