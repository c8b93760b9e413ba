import type { Semantics } from './semantics.ts';

/**
 * Runs INSIDE a page frame, like semantics.ts: an element's states (checked, selected, expanded,
 * disabled…) and its current value, as the accessibility tree would report them. Self-contained
 * but for the semantics() helpers it is handed.
 */
export function states({ clean }: Semantics) {
  const DISABLABLE = new Set(['button', 'input', 'select', 'textarea', 'optgroup', 'option', 'fieldset']);

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
    // Only form controls (and form-associated custom elements) can match :disabled: a link never does,
    // and a selector match per link is most of a big page's state reads.
    if ((DISABLABLE.has(tag) || tag.includes('-')) && el.matches(':disabled')) s.disabled = true;
    else if (aria('aria-disabled') === 'true') s.disabled = true;
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

  return { statesOf, currentValue };
}

export type States = ReturnType<typeof states>;
