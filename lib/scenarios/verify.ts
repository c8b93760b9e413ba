/**
 * The 15 verification types, run deterministically in the page: an element check reads the facts
 * of the element behind an outline id (text, value, visibility, enabled, checked, classes,
 * attributes) and compares them in `judgeVerification` (pure); a count check counts a CSS
 * selector's matches. What was found is kept as evidence; secrets never appear in it.
 */
import type { Page } from 'playwright-core';
import { substitute } from '../actions/helpers.ts';
import { redactText } from '../perception/redact.ts';
import type { Snapshot } from '../perception/types.ts';
import { locateById } from '../workflows/playwright-locate.ts';
import { COUNT_TYPES, NEEDS_EXPECTED, type VerificationCommand, type VerificationType } from './decision.ts';

/** What the page says about one element (read in the page). */
export interface ElementReading {
  text: string;
  value?: string;
  visible: boolean;
  enabled: boolean;
  checked?: boolean;
  classes: string[];
  attributes: Record<string, string>;
}

export interface VerificationOutcome {
  ok: boolean;
  /** What was seen, for the model and the evidence. */
  actual: string;
  message: string;
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Compares a reading (or a count, or "the element is gone") with a check. Pure. */
export function judgeVerification(
  check: VerificationType,
  seen: { element: ElementReading } | { count: number } | { absent: true },
  expected: string | undefined,
): VerificationOutcome {
  const want = expected ?? '';
  const verdict = (ok: boolean, actual: string, what: string): VerificationOutcome => ({
    ok,
    actual,
    message: `${check}${expected !== undefined ? ` "${want}"` : ''}: ${ok ? 'passed' : 'failed'} (${what})`,
  });
  if (NEEDS_EXPECTED.has(check) && expected === undefined)
    return { ok: false, actual: '', message: `${check}: needs "expected"` };
  if ('count' in seen) {
    const n = Number(want);
    if (!Number.isInteger(n))
      return {
        ok: false,
        actual: String(seen.count),
        message: `${check}: "expected" must be a whole number`,
      };
    const ok =
      check === 'countEquals'
        ? seen.count === n
        : check === 'countGreaterThan'
          ? seen.count > n
          : seen.count < n;
    return verdict(ok, String(seen.count), `${seen.count} found`);
  }
  if ('absent' in seen)
    return check === 'isHidden'
      ? verdict(true, 'not on the page', 'the element is not on the page')
      : verdict(false, 'not on the page', 'the element is not on the page');
  const el = seen.element;
  switch (check) {
    case 'textContains':
      return verdict(
        norm(el.text).includes(norm(want)),
        norm(el.text).slice(0, 300),
        `text "${norm(el.text).slice(0, 120)}"`,
      );
    case 'textEquals':
      return verdict(
        norm(el.text) === norm(want),
        norm(el.text).slice(0, 300),
        `text "${norm(el.text).slice(0, 120)}"`,
      );
    case 'valueEquals':
      return verdict((el.value ?? '') === want, el.value ?? '', `value "${(el.value ?? '').slice(0, 120)}"`);
    case 'valueEmpty':
      return verdict((el.value ?? '') === '', el.value ?? '', `value "${(el.value ?? '').slice(0, 120)}"`);
    case 'isVisible':
      return verdict(el.visible, el.visible ? 'visible' : 'hidden', el.visible ? 'visible' : 'hidden');
    case 'isHidden':
      return verdict(!el.visible, el.visible ? 'visible' : 'hidden', el.visible ? 'visible' : 'hidden');
    case 'isEnabled':
      return verdict(el.enabled, el.enabled ? 'enabled' : 'disabled', el.enabled ? 'enabled' : 'disabled');
    case 'isDisabled':
      return verdict(!el.enabled, el.enabled ? 'enabled' : 'disabled', el.enabled ? 'enabled' : 'disabled');
    case 'isChecked':
    case 'isUnchecked': {
      const state = el.checked === undefined ? 'not checkable' : el.checked ? 'checked' : 'unchecked';
      const ok = el.checked !== undefined && el.checked === (check === 'isChecked');
      return verdict(ok, state, state);
    }
    case 'hasClass':
      return verdict(
        el.classes.includes(want.trim()),
        el.classes.join(' '),
        `classes "${el.classes.join(' ')}"`,
      );
    case 'hasAttribute': {
      const at = want.indexOf('=');
      const name = (at < 0 ? want : want.slice(0, at)).trim();
      const has = Object.hasOwn(el.attributes, name);
      const ok = has && (at < 0 || el.attributes[name] === want.slice(at + 1));
      const actual = has ? `${name}="${el.attributes[name]}"` : `no ${name}`;
      return verdict(ok, actual, actual);
    }
    default:
      return { ok: false, actual: '', message: `${check}: not a verification type` };
  }
}

/**
 * Runs in the page on the element (or the first of a list: a selector's matches, read in the same
 * call that finds them; none → null): the facts the checks compare.
 */
function readElement(target: Element | Element[]) {
  const el = Array.isArray(target) ? target[0] : target;
  if (!el) return null;
  const h = el as HTMLElement & { value?: unknown; checked?: unknown; disabled?: unknown };
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  const visible =
    (typeof h.checkVisibility === 'function'
      ? h.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })
      : true) &&
    box.width > 0 &&
    box.height > 0 &&
    style.visibility !== 'hidden';
  const tag = el.tagName.toLowerCase();
  const formControl = tag === 'input' || tag === 'textarea' || tag === 'select';
  const value = formControl ? String(h.value ?? '') : undefined;
  const ariaChecked = el.getAttribute('aria-checked');
  const checkable = tag === 'input' && ['checkbox', 'radio'].includes((el as HTMLInputElement).type);
  const checked = checkable ? Boolean(h.checked) : ariaChecked === null ? undefined : ariaChecked === 'true';
  const disabled =
    Boolean(h.disabled) ||
    el.getAttribute('aria-disabled') === 'true' ||
    el.closest('fieldset[disabled]') !== null;
  const attributes: Record<string, string> = {};
  for (const a of Array.from(el.attributes)) attributes[a.name] = a.value;
  const text = (h.innerText ?? el.textContent ?? '') || (value ?? '');
  return {
    text,
    ...(value !== undefined ? { value } : {}),
    visible,
    enabled: !disabled,
    ...(checked !== undefined ? { checked } : {}),
    classes: Array.from(el.classList),
    attributes,
  };
}

/**
 * Runs one verification on the live page. Ids refer to `snap`; `expected` may name a secret as
 * `%name%` (compared with the value, reported as the placeholder).
 */
export async function runVerification(
  page: Page,
  snap: Snapshot,
  v: VerificationCommand,
  variables?: Record<string, string>,
): Promise<VerificationOutcome> {
  const expected = v.expected === undefined ? undefined : substitute([v.expected], variables)[0];
  const clean = (o: VerificationOutcome): VerificationOutcome => ({
    ok: o.ok,
    actual: redactText(o.actual, variables),
    message: redactText(o.message, variables),
  });
  if (COUNT_TYPES.has(v.check)) {
    if (!v.selector)
      return { ok: false, actual: '', message: `${v.check}: needs "selector" (CSS of the elements counted)` };
    let count: number;
    try {
      count = await page.locator(v.selector).count();
    } catch (err) {
      return {
        ok: false,
        actual: '',
        message: `${v.check}: selector "${v.selector}" is not valid CSS (${(err as Error).message.split('\n')[0]})`,
      };
    }
    return clean(judgeVerification(v.check, { count }, expected));
  }
  // An element of the outline by id; else the first match of a CSS selector (text lines have no
  // id); else, for the text checks, the page's whole visible text.
  let element: ElementReading | null;
  if (v.id !== undefined) {
    if (!snap.elements.some((e) => e.id === v.id))
      return { ok: false, actual: '', message: `${v.check}: [${v.id}] is not an id of the current outline` };
    const found = await locateById(page, snap, v.id);
    if ('error' in found) return clean(judgeVerification(v.check, { absent: true }, expected));
    try {
      element = (await found.handle.evaluate(readElement)) as ElementReading | null;
    } finally {
      // Not waited for: the reading is done, the release needs no answer.
      void found.handle.dispose().catch(() => undefined);
    }
  } else if (v.selector || v.check === 'textContains' || v.check === 'textEquals') {
    // Found and read in one call, without waiting: an absent element is a finding (isHidden
    // passes), not a wait.
    try {
      element = (await page.locator(v.selector ?? 'body').evaluateAll(readElement)) as ElementReading | null;
    } catch (err) {
      const message = (err as Error).message.split('\n')[0];
      return {
        ok: false,
        actual: '',
        message: `${v.check}: selector "${v.selector ?? 'body'}" could not be read (${message})`,
      };
    }
    if (!element && !v.selector)
      return { ok: false, actual: '', message: `${v.check}: the page has no body` };
  } else
    return {
      ok: false,
      actual: '',
      message: `${v.check}: needs "id" (an outline element) or "selector" (CSS)`,
    };
  if (!element) return clean(judgeVerification(v.check, { absent: true }, expected));
  return clean(judgeVerification(v.check, { element }, expected));
}
