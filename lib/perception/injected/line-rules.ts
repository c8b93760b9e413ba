import type { Interactivity } from './interactive.ts';
import type { Semantics } from './semantics.ts';

/**
 * Runs INSIDE a page frame, like collect.ts (self-contained but for the helpers it is handed): the
 * rules by which the walk weighs an element — a plain inline wrapper to see through, laid out but
 * hidden, scrolling its own content, worth a line of its own.
 */
export function lineRules({
  PHRASING,
  STRUCTURAL,
  hasClickListener,
  anchorButton,
}: Semantics & Interactivity) {
  /**
   * Plain inline wrappers (<b>, <span>, <sup>…) are most of a text-heavy page and never a line
   * of their own. (One that hosts a shadow root is not plain either: the walk checks that last.)
   */
  function plainInline(
    el: Element,
    display: string,
    visibility: string,
    ownCursor: string,
    cursor: string,
  ): boolean {
    return (
      display === 'inline' &&
      PHRASING.has(el.localName) &&
      !el.hasAttribute('role') &&
      !el.hasAttribute('tabindex') &&
      !el.hasAttribute('onclick') &&
      !el.hasAttribute('aria-label') &&
      !hasClickListener(el) &&
      !anchorButton(el) &&
      visibility === 'visible' &&
      (ownCursor !== 'pointer' || cursor === 'pointer')
    );
  }

  /** A box of no size: one that clips what overflows it shows nothing of its content. */
  const zeroSize = (rect: DOMRect): boolean => rect.width === 0 && rect.height === 0;

  /**
   * Displays whose boxes never scroll their content and skip none of it: neither CSS overflow nor
   * containment (so content-visibility) applies to them.
   */
  const NO_OVERFLOW = new Set([
    'inline',
    'table-row',
    'table-row-group',
    'table-header-group',
    'table-footer-group',
    'table-column',
    'table-column-group',
  ]);

  /** A box (not the page itself) that scrolls its own content. */
  function scrollsItself(el: Element, display: string, overflowY: string): boolean {
    const tag = el.localName;
    return (
      tag !== 'html' &&
      tag !== 'body' &&
      // Overflow applies to none of these boxes (a link, a table row).
      !NO_OVERFLOW.has(display) &&
      (overflowY === 'auto' || overflowY === 'scroll') &&
      el.scrollHeight > el.clientHeight + 4
    );
  }

  /** Whether an element with a role, a way to act on it or a scrollbar gets a line of its own. */
  function worthALine(
    tag: string,
    role: string,
    name: string,
    interactive: boolean,
    scrollable: boolean,
  ): boolean {
    return (
      interactive ||
      scrollable ||
      tag === 'iframe' ||
      tag === 'frame' ||
      tag === 'img' ||
      tag === 'canvas' ||
      ((role === 'heading' || role === 'status' || role === 'alert') && !!name) ||
      STRUCTURAL.has(role) ||
      ((role === 'cell' || role === 'columnheader' || role === 'rowheader') && !!name)
    );
  }

  /** Whether content-visibility can apply to a box of this display (containment can). */
  const containable = (display: string): boolean => !NO_OVERFLOW.has(display);

  return { plainInline, zeroSize, scrollsItself, worthALine, containable };
}

export type LineRules = ReturnType<typeof lineRules>;
