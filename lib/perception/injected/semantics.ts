/**
 * Runs INSIDE a page frame, like collect.ts: what the accessibility tree would say about an
 * element — role, accessible name, states, value, "can a user act on it" — computed from the DOM
 * in the page instead of asking the browser for its full AX tree over CDP (the slow part).
 * Self-contained: returns its helpers so collect() can use them.
 *
 * This part holds roles, the role sets the walk decides on, and the text helpers the other parts
 * share; accessible names are in names.ts, states and values in states.ts, "can a user act on it"
 * in interactive.ts. Each of those is handed the helpers made before it (see source.ts).
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

  /**
   * Whitespace collapsed to single spaces, ends trimmed. Called for every text node and most
   * attributes of a page: text that holds no whitespace but single spaces (most of it) skips the
   * replace, and only an edge space left to trim costs a trim.
   */
  const UNCLEAN = /[^\S ]| {2}/;
  const clean = (s: string | null | undefined): string => {
    if (!s) return '';
    if (UNCLEAN.test(s)) return s.replace(/\s+/g, ' ').trim();
    return s.charCodeAt(0) === 32 || s.charCodeAt(s.length - 1) === 32 ? s.trim() : s;
  };
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

  return {
    INTERACTIVE_ROLES,
    NAME_FROM_CONTENT,
    STRUCTURAL,
    PHRASING,
    clean,
    cap,
    roleOf,
  };
}

export type Semantics = ReturnType<typeof semantics>;
