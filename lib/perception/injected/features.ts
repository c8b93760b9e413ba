/**
 * Runs INSIDE a page frame, like collect.ts (self-contained, no imports): the facts about a form
 * control that the matcher grounds instructions on but a model rarely needs to read — its
 * `autocomplete` token, the words of its `name` / `id` attributes, the text just before it (or a
 * floating label just after it) when nothing names it, which form (or field group) it belongs to, and whether a user can see it at
 * all. Computed only for form controls and buttons, so big text pages pay nothing.
 */
export interface ControlFacts {
  autocomplete?: string;
  /** `name` and `id` attribute values, space-separated. */
  attrs?: string;
  /** Preceding label-ish text, only when the control has no accessible name. */
  nearby?: string;
  /** Form or field-group number, local to this collect call. */
  group?: number;
  /** Present and sized, but transparent, clipped to nothing or placed outside the page. */
  concealed?: boolean;
  /** A submit button of a `<form>` (what Enter in its fields would press). */
  submit?: boolean;
  /** In the page's chrome (header, navigation, footer, sidebar) or in its main landmark. */
  region?: 'chrome' | 'main';
}

export function features() {
  const CONTROLS = 'input:not([type=hidden]),select,textarea,button';
  const FIELD_TAGS = new Set(['input', 'select', 'textarea', 'button']);
  const BOUNDARY = new Set(['FORM', 'BODY', 'HTML', 'FIELDSET', 'DIALOG']);
  /** Controls a user types into (an <input>'s type, or textarea): the ones a floating label names. */
  const TAKES_TEXT = /^(?:text|email|password|tel|url|search|number|textarea)$/;
  /** Text with a letter or digit in it: what could name something. */
  const WORDY = /[\p{L}\p{N}]/u;
  const clean = (s: string | null | undefined): string => (s ? s.replace(/\s+/g, ' ').trim() : '');
  // Page chrome: a login form there is the header's drop-down, not the page's own form.
  const CHROME =
    'header, nav, footer, aside, [role=banner], [role=navigation], [role=contentinfo], [role=complementary]';

  let groups = new Map<Element, number>();
  const controlCounts = new Map<Element, number>();

  function reset() {
    groups = new Map();
    controlCounts.clear();
  }

  function controlsIn(el: Element): number {
    let n = controlCounts.get(el);
    if (n === undefined) {
      n = el.querySelectorAll(CONTROLS).length;
      controlCounts.set(el, n);
    }
    return n;
  }

  /** The `<form>` that owns the control, or else the nearest ancestor holding another control. */
  function groupOf(el: Element): number {
    let holder: Element | null = (el as HTMLInputElement).form ?? el.closest('form');
    if (!holder) {
      let p = el.parentElement;
      for (let depth = 0; p && depth < 8 && p.localName !== 'body'; depth++, p = p.parentElement) {
        if (controlsIn(p) >= 2) {
          holder = p;
          break;
        }
      }
    }
    if (!holder) return 0;
    let id = groups.get(holder);
    if (id === undefined) {
      id = groups.size + 1;
      groups.set(holder, id);
    }
    return id;
  }

  /** Text of the nearest preceding sibling (or an ancestor's) with words, within the field group. */
  function nearbyText(el: Element): string {
    let node: Element | null = el;
    for (let level = 0; node && level < 4; level++) {
      for (let s = node.previousElementSibling, k = 0; s && k < 3; s = s.previousElementSibling, k++) {
        if (s.matches(CONTROLS) || s.querySelector(CONTROLS)) return '';
        // innerText of an element not rendered is its raw text: a hidden error message is no label.
        if (!s.checkVisibility()) continue;
        const t = clean((s as HTMLElement).innerText);
        // A required-field "*" or a separator says nothing: look further back.
        if (t && WORDY.test(t)) {
          const lines = t.split('\n');
          return clean(lines[lines.length - 1]).slice(0, 80);
        }
      }
      const parent: Element | null = node.parentElement;
      if (!parent || BOUNDARY.has(parent.tagName)) return '';
      // Text directly in the parent before the control ("Username: <input>").
      let before = '';
      for (let c = parent.firstChild; c && c !== node; c = c.nextSibling)
        if (c.nodeType === 3) before += c.nodeValue ?? '';
      if (clean(before)) return clean(before).slice(0, 80);
      node = parent;
    }
    return '';
  }

  /**
   * A floating label: short text right after a control that nothing else names, inside the
   * control's own wrapper (`<input><label>Email</label>`, `<input><div class="title">Email</div>`),
   * placed over or under the box by CSS. Text after the wrapper of another control is not taken.
   */
  function followingText(el: Element): string {
    if (!TAKES_TEXT.test(el.localName === 'textarea' ? 'textarea' : ((el as HTMLInputElement).type ?? '')))
      return '';
    let node: Element | null = el;
    for (let level = 0; node && level < 2; level++) {
      let s: Element | null = node.nextElementSibling;
      while (s && !s.checkVisibility()) s = s.nextElementSibling;
      if (s) {
        if (s.matches(CONTROLS) || s.querySelector(CONTROLS)) return '';
        const forOther = s.localName === 'label' && (s as HTMLLabelElement).htmlFor;
        if (forOther && forOther !== el.id) return '';
        const t = clean((s as HTMLElement).innerText);
        if (t) return t.length <= 40 && !t.includes('\n') && WORDY.test(t) ? t : '';
      }
      const parent: Element | null = node.parentElement;
      if (!parent || BOUNDARY.has(parent.tagName) || controlsIn(parent) > 1) return '';
      node = parent;
    }
    return '';
  }

  function concealed(el: Element, rect: DOMRect): boolean {
    if (rect.width <= 1 || rect.height <= 1) return true;
    if (rect.right + window.scrollX <= 0 || rect.bottom + window.scrollY <= 0) return true;
    if (!el.checkVisibility({ opacityProperty: true })) return true;
    // An ancestor that clips to (almost) nothing: the sr-only and collapsed-panel patterns.
    let p = el.parentElement;
    for (let depth = 0; p && depth < 6 && p.localName !== 'body'; depth++, p = p.parentElement) {
      const r = p.getBoundingClientRect();
      if ((r.width <= 1 || r.height <= 1) && getComputedStyle(p).overflow !== 'visible') return true;
    }
    return false;
  }

  /** Facts for a form control or button; undefined for anything else. */
  function factsOf(el: Element, role: string, hasName: boolean, rect: DOMRect): ControlFacts | undefined {
    const tag = el.localName;
    if (!FIELD_TAGS.has(tag) && role !== 'button' && role !== 'textbox') return undefined;
    const facts: ControlFacts = {};
    const ac = clean(el.getAttribute('autocomplete')).toLowerCase();
    if (ac && ac !== 'on' && ac !== 'off') facts.autocomplete = ac;
    const attrs = clean(`${el.getAttribute('name') ?? ''} ${el.id}`);
    if (attrs) facts.attrs = attrs.slice(0, 80);
    if (!hasName && tag !== 'button') {
      const near = nearbyText(el) || followingText(el);
      if (near) facts.nearby = near;
    }
    const group = groupOf(el);
    if (group) facts.group = group;
    if (concealed(el, rect)) facts.concealed = true;
    const chrome = el.closest(CHROME);
    // A <header> inside an article or section is that part's header, not the page's.
    if (chrome && !(chrome.localName === 'header' && chrome.parentElement?.closest('article, section, main')))
      facts.region = 'chrome';
    else if (el.closest('main, [role=main]')) facts.region = 'main';
    const t: string = (el as HTMLInputElement).type;
    if ((tag === 'button' && t === 'submit') || (tag === 'input' && (t === 'submit' || t === 'image')))
      if ((el as HTMLButtonElement).form) facts.submit = true;
    return facts;
  }

  return { factsOf, resetFeatures: reset };
}

export type Features = ReturnType<typeof features>;
