import type { Semantics } from './semantics.ts';

/**
 * Runs INSIDE a page frame, like semantics.ts: the accessible name of an element, and the label
 * text when a `<label>` or aria-labelledby gave it. Self-contained but for the semantics() helpers
 * it is handed.
 */
export function names({ NAME_FROM_CONTENT, clean, cap }: Semantics) {
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

  /**
   * Text of the subtree as it would be read, with icon labels (alt, aria-label, svg title) filled in.
   * `style`: the element's computed style, when the caller holds it already.
   */
  function contentText(el: Element, style?: CSSStyleDeclaration): string {
    // Most named elements hold only text (a link's words, a cell's number). There the text as read
    // is the text itself, whitespace aside, unless CSS changes its case; innerText, which lays the
    // words out to find out, costs several times as much.
    const leaf = !el.firstElementChild;
    let text = clean(
      leaf && (style ?? getComputedStyle(el)).textTransform === 'none'
        ? el.textContent
        : ((el as HTMLElement).innerText ?? el.textContent),
    );
    // aria-hidden parts (a caret, an icon glyph) are not part of the name.
    if (text && !leaf && el.querySelector('[aria-hidden="true"]')) {
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
      // Beside a label on screen, a hidden one (the "is required" message kept back until it
      // applies) names nothing. Hidden labels alone (put there for screen readers) still do.
      const all = Array.from(ctl.labels);
      const shown = all.filter((l) => l.checkVisibility());
      for (const l of shown.length > 0 ? shown : all) {
        if (shown.length > 0 && !l.querySelector('select,textarea')) {
          // As read: hidden parts left out, blocks kept apart ("Keep me signed in" / "Only check…").
          // (An <input> adds no text to what is read.)
          parts.push(clean(l.innerText));
          continue;
        }
        // A select's options and a textarea's text would be read with the label: strip them.
        const clone = l.cloneNode(true) as HTMLElement;
        for (const c of Array.from(clone.querySelectorAll('input,select,textarea'))) c.remove();
        parts.push(clean(clone.textContent));
      }
      // The same words twice (a visible label and a screen-reader copy) are said once.
      const said = new Set<string>();
      return clean(
        parts
          .filter((p) => {
            const key = p.toLowerCase();
            return !said.has(key) && !!said.add(key);
          })
          .join(' '),
      );
    }
    return '';
  }

  function nameOf(
    el: Element,
    role: string,
    root: Document | ShadowRoot,
    style?: CSSStyleDeclaration,
  ): { name: string; label: string } {
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
      if (tag === 'input' && t === 'image') {
        // Chromium's order: alt, then the value a script or the page gave it, then title.
        const named = clean(el.getAttribute('alt')) || clean(el.getAttribute('value'));
        return { name: named || clean(el.getAttribute('title')) || 'Submit', label: '' };
      }
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
      const t = contentText(el, style);
      if (t) return { name: cap(t, 160), label: '' };
    }
    const title = clean(el.getAttribute('title'));
    if (title) return { name: title, label: '' };
    const ph = clean(el.getAttribute('placeholder') || el.getAttribute('aria-placeholder'));
    if (ph) return { name: ph, label: '' };
    return { name: '', label: '' };
  }

  return { nameOf };
}

export type Names = ReturnType<typeof names>;
