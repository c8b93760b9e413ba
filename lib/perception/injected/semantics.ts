/**
 * Runs INSIDE a page frame, like collect.ts: what the accessibility tree would say about an
 * element — role, accessible name, states, value, "can a user act on it" — computed from the DOM
 * in the page instead of asking the browser for its full AX tree over CDP (the slow part).
 * Self-contained: returns its helpers so collect() can use them.
 */
export function semantics() {
  const INTERACTIVE_ROLES = new Set([
    'button',
    'link',
    'textbox',
    'searchbox',
    'combobox',
    'listbox',
    'option',
    'checkbox',
    'radio',
    'switch',
    'slider',
    'spinbutton',
    'tab',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'treeitem',
    'scrollbar',
  ]);
  const NAME_FROM_CONTENT = new Set([
    'button',
    'link',
    'heading',
    'cell',
    'columnheader',
    'rowheader',
    'option',
    'tab',
    'menuitem',
    'menuitemcheckbox',
    'menuitemradio',
    'checkbox',
    'radio',
    'switch',
    'treeitem',
    'tooltip',
    'legend',
    'caption',
    'label',
    'clickable',
  ]);
  // Roles worth a line of their own even without a name: they give the model structure.
  const STRUCTURAL = new Set([
    'navigation',
    'main',
    'banner',
    'contentinfo',
    'complementary',
    'form',
    'dialog',
    'alertdialog',
    'search',
    'region',
    'list',
    'listitem',
    'table',
    'row',
    'menu',
    'menubar',
    'tablist',
    'tabpanel',
    'radiogroup',
    'group',
    'tree',
    'grid',
    'article',
    'alert',
    'status',
  ]);
  const LANDMARK_SCOPES = new Set(['ARTICLE', 'ASIDE', 'MAIN', 'NAV', 'SECTION']);
  const PHRASING = new Set([
    'b',
    'i',
    'em',
    'strong',
    'span',
    'sup',
    'sub',
    'small',
    'code',
    'abbr',
    'cite',
    'mark',
    'u',
    's',
    'q',
    'time',
    'var',
    'kbd',
    'samp',
    'bdi',
    'bdo',
    'font',
    'wbr',
  ]);

  const clean = (s: string | null | undefined): string => (s ? s.replace(/\s+/g, ' ').trim() : '');
  const cap = (s: string, n: number): string => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  function implicitRole(el: Element): string {
    const tag = el.localName;
    switch (tag) {
      case 'a':
      case 'area':
        return el.hasAttribute('href') ? 'link' : '';
      case 'button':
        return 'button';
      case 'summary':
        return 'button';
      case 'input': {
        const t = ((el as HTMLInputElement).type || 'text').toLowerCase();
        if (t === 'hidden') return 'none';
        if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image' || t === 'file')
          return 'button';
        if (t === 'checkbox') return 'checkbox';
        if (t === 'radio') return 'radio';
        if (t === 'range') return 'slider';
        if (t === 'number') return 'spinbutton';
        if (t === 'search') return el.hasAttribute('list') ? 'combobox' : 'searchbox';
        if (el.hasAttribute('list')) return 'combobox';
        return 'textbox';
      }
      case 'select':
        return (el as HTMLSelectElement).multiple || (el as HTMLSelectElement).size > 1
          ? 'listbox'
          : 'combobox';
      case 'textarea':
        return 'textbox';
      case 'option':
        return 'option';
      case 'h1':
      case 'h2':
      case 'h3':
      case 'h4':
      case 'h5':
      case 'h6':
        return 'heading';
      case 'img':
        return el.getAttribute('alt') === '' ? 'none' : 'img';
      case 'nav':
        return 'navigation';
      case 'main':
        return 'main';
      case 'aside':
        return 'complementary';
      case 'header':
      case 'footer': {
        for (let p = el.parentElement; p; p = p.parentElement) if (LANDMARK_SCOPES.has(p.tagName)) return '';
        return tag === 'header' ? 'banner' : 'contentinfo';
      }
      case 'form':
        return 'form';
      case 'section':
        return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : '';
      case 'ul':
      case 'ol':
      case 'menu':
        return 'list';
      case 'li':
        return 'listitem';
      case 'table':
        return 'table';
      case 'tr':
        return 'row';
      case 'td':
        return 'cell';
      case 'th':
        return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
      case 'dialog':
        return 'dialog';
      case 'fieldset':
      case 'details':
        return 'group';
      case 'legend':
        return 'legend';
      case 'caption':
        return 'caption';
      case 'progress':
        return 'progressbar';
      case 'meter':
        return 'meter';
      case 'output':
        return 'status';
      case 'article':
        return 'article';
      case 'iframe':
      case 'frame':
        return 'iframe';
      case 'canvas':
        return 'canvas';
      case 'video':
      case 'audio':
        return el.hasAttribute('controls') ? tag : '';
      default:
        return '';
    }
  }

  function roleOf(el: Element): string {
    const explicit = el.getAttribute('role');
    if (explicit) {
      const first = explicit.trim().split(/\s+/)[0] ?? '';
      if (first === 'presentation' || first === 'none') return '';
      if (first) return first;
    }
    if ((el as HTMLElement).isContentEditable && !el.parentElement?.isContentEditable) return 'textbox';
    return implicitRole(el);
  }

  function textOfIds(ids: string, root: Document | ShadowRoot): string {
    const parts: string[] = [];
    for (const id of ids.split(/\s+/)) {
      if (!id) continue;
      const ref = root.getElementById ? root.getElementById(id) : document.getElementById(id);
      if (ref)
        parts.push(
          clean(ref.getAttribute('aria-label')) || clean((ref as HTMLElement).innerText ?? ref.textContent),
        );
    }
    return clean(parts.join(' '));
  }

  /** Text of the subtree as it would be read, with icon labels (alt, aria-label, svg title) filled in. */
  function contentText(el: Element): string {
    let text = clean((el as HTMLElement).innerText ?? el.textContent);
    // aria-hidden parts (a caret, an icon glyph) are not part of the name.
    if (text && el.querySelector('[aria-hidden="true"]')) {
      const copy = el.cloneNode(true) as HTMLElement;
      for (const hidden of Array.from(copy.querySelectorAll('[aria-hidden="true"]'))) hidden.remove();
      text = clean(copy.textContent);
    }
    if (text) return text;
    const labelled = el.querySelector('[aria-label], img[alt], svg title, [title]');
    if (!labelled) return '';
    if (labelled.localName === 'title') return clean(labelled.textContent);
    return clean(
      labelled.getAttribute('aria-label') || labelled.getAttribute('alt') || labelled.getAttribute('title'),
    );
  }

  function labelsOf(el: Element): string {
    const ctl = el as HTMLInputElement;
    if (ctl.labels && ctl.labels.length > 0) {
      const parts: string[] = [];
      for (const l of Array.from(ctl.labels)) {
        // A wrapping label's text includes the control's own value text; strip nested controls.
        const clone = l.cloneNode(true) as HTMLElement;
        for (const c of Array.from(clone.querySelectorAll('input,select,textarea'))) c.remove();
        parts.push(clean(clone.textContent));
      }
      return clean(parts.join(' '));
    }
    return '';
  }

  function nameOf(el: Element, role: string, root: Document | ShadowRoot): { name: string; label: string } {
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const t = textOfIds(by, root);
      if (t) return { name: t, label: t };
    }
    const aria = clean(el.getAttribute('aria-label'));
    if (aria) return { name: aria, label: '' };
    const tag = el.localName;
    if (tag === 'input' || tag === 'select' || tag === 'textarea') {
      const t = (el as HTMLInputElement).type;
      if (tag === 'input' && (t === 'submit' || t === 'reset' || t === 'button')) {
        const v = clean((el as HTMLInputElement).value);
        return { name: v || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : ''), label: '' };
      }
      if (tag === 'input' && t === 'image')
        return { name: clean(el.getAttribute('alt')) || 'Submit', label: '' };
      const label = labelsOf(el);
      if (label) return { name: label, label };
    }
    if (tag === 'img' || tag === 'area') {
      const alt = clean(el.getAttribute('alt'));
      if (alt) return { name: alt, label: '' };
    }
    if (tag === 'fieldset') {
      const legend = el.querySelector(':scope > legend');
      if (legend) return { name: clean(legend.textContent), label: '' };
    }
    if (tag === 'table') {
      const caption = el.querySelector(':scope > caption');
      if (caption) return { name: clean(caption.textContent), label: '' };
    }
    if (tag === 'svg') {
      const title = el.querySelector(':scope > title');
      if (title) return { name: clean(title.textContent), label: '' };
    }
    if (NAME_FROM_CONTENT.has(role) || tag === 'summary') {
      const t = contentText(el);
      if (t) return { name: cap(t, 160), label: '' };
    }
    const title = clean(el.getAttribute('title'));
    if (title) return { name: title, label: '' };
    const ph = clean(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'));
    if (ph) return { name: ph, label: '' };
    return { name: '', label: '' };
  }

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
   * handler, own `cursor: pointer` or tabindex on something with text; 'clickable' for what is
   * interactive but not button-like (draggable, a handler around other controls, no text); ''
   * for nothing, and for noise: a pointer-cursor box around a real control, a cursor inherited
   * from a clickable parent, a bare listener on a big block of text.
   */
  function clickKind(el: Element, style: CSSStyleDeclaration, parentCursor: string): string {
    const tag = el.localName;
    if (tag === 'body' || tag === 'html') return '';
    const onclick = el.hasAttribute('onclick') || !!(el as HTMLElement).onclick;
    const listener = hasClickListener(el);
    const tabindex = el.getAttribute('tabindex');
    const tabbable = tabindex !== null && Number(tabindex) >= 0;
    const draggable = el.getAttribute('draggable') === 'true';
    // cursor:pointer set on this element (not just inherited) is how most custom widgets say "click me".
    const pointer = style.cursor === 'pointer' && parentCursor !== 'pointer';
    if (!onclick && !listener && !tabbable && !draggable && !pointer) return '';
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
    if (!onclick && !listener && !pointer && !tabbable) return 'clickable';
    return navigates(el) ? 'link' : 'button';
  }

  function isInteractive(
    el: Element,
    role: string,
    style: CSSStyleDeclaration,
    parentCursor: string,
  ): boolean {
    return nativeInteractive(el, role) || clickKind(el, style, parentCursor) !== '';
  }

  function statesOf(el: Element, role: string): Record<string, boolean | string> {
    const s: Record<string, boolean | string> = {};
    const tag = el.localName;
    const aria = (n: string) => el.getAttribute(n);
    if (
      tag === 'input' &&
      ((el as HTMLInputElement).type === 'checkbox' || (el as HTMLInputElement).type === 'radio')
    ) {
      s.checked = (el as HTMLInputElement).indeterminate ? 'mixed' : (el as HTMLInputElement).checked;
    } else if (aria('aria-checked') !== null) {
      const v = aria('aria-checked');
      s.checked = v === 'mixed' ? 'mixed' : v === 'true';
    } else if (role === 'switch' || role === 'checkbox' || role === 'radio') {
      s.checked = aria('aria-pressed') === 'true';
    }
    if (tag === 'option') s.selected = (el as HTMLOptionElement).selected;
    else if (aria('aria-selected') !== null) s.selected = aria('aria-selected') === 'true';
    if (aria('aria-expanded') !== null) s.expanded = aria('aria-expanded') === 'true';
    else if (tag === 'details') s.expanded = (el as HTMLDetailsElement).open;
    else if (tag === 'summary' && el.parentElement?.localName === 'details')
      s.expanded = (el.parentElement as HTMLDetailsElement).open;
    if (el.matches(':disabled') || aria('aria-disabled') === 'true') s.disabled = true;
    if ((el as HTMLInputElement).required || aria('aria-required') === 'true') s.required = true;
    if ((el as HTMLInputElement).readOnly || aria('aria-readonly') === 'true') s.readonly = true;
    if (aria('aria-pressed') === 'true' && role === 'button') s.pressed = true;
    return s;
  }

  function currentValue(el: Element, role: string): string | undefined {
    const tag = el.localName;
    if (tag === 'input') {
      const i = el as HTMLInputElement;
      if (i.type === 'checkbox' || i.type === 'radio' || i.type === 'submit' || i.type === 'button')
        return undefined;
      if (i.type === 'reset' || i.type === 'image' || i.type === 'file') return undefined;
      // Never read a password back out: it would land in the model's prompt.
      if (i.type === 'password') return i.value ? '••••••' : undefined;
      return i.value || undefined;
    }
    if (tag === 'textarea') return (el as HTMLTextAreaElement).value || undefined;
    if (tag === 'select') {
      const sel = el as HTMLSelectElement;
      const chosen = Array.from(sel.selectedOptions).map((o) => clean(o.label || o.text));
      return chosen.join(', ') || undefined;
    }
    if (role === 'textbox' && (el as HTMLElement).isContentEditable)
      return clean((el as HTMLElement).innerText) || undefined;
    const now = el.getAttribute('aria-valuenow') ?? el.getAttribute('aria-valuetext');
    return now ?? undefined;
  }

  return {
    INTERACTIVE_ROLES,
    NAME_FROM_CONTENT,
    STRUCTURAL,
    PHRASING,
    clean,
    cap,
    roleOf,
    nameOf,
    isInteractive,
    nativeInteractive,
    clickKind,
    hasClickListener,
    PROMOTABLE,
    statesOf,
    currentValue,
  };
}

export type Semantics = ReturnType<typeof semantics>;
