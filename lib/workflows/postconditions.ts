/**
 * Post-conditions: what must be true after a pinned step for it to count as done. The judgement is
 * pure (`judgePostConditions` over the facts read from the page); the reading is one small shell
 * (`readFacts`) that polls, because a click that navigates or re-renders takes a moment to land.
 */
import type { Page } from 'playwright-core';
import { substitute } from '../actions/helpers.ts';
import { settle } from '../browser/settle.ts';
import { redactText } from '../perception/redact.ts';
import { locateByXPath } from './playwright-locate.ts';
import type { PostCondition } from './schema.ts';

/** What the page showed, for the conditions asked about. */
export interface PageFacts {
  url: string;
  /** selector → matched anything. */
  elements: Record<string, boolean>;
  /** The step's own element: its value and checked state (absent when it is gone). */
  value?: string;
  checked?: boolean;
  /** text → visible somewhere on the page. */
  texts: Record<string, boolean>;
}

export interface ConditionFailure {
  condition: PostCondition;
  /** What was seen instead, in words (never a secret's value). */
  saw: string;
}

/** `*` matches anything (including nothing); every other character is itself. Whole URL. */
export function urlMatches(pattern: string, url: string): boolean {
  const re = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${re}$`).test(url);
}

/** The conditions that do not hold, each with what was seen. Pure. */
export function judgePostConditions(
  conditions: readonly PostCondition[],
  facts: PageFacts,
  variables?: Record<string, string>,
): ConditionFailure[] {
  const failures: ConditionFailure[] = [];
  for (const c of conditions) {
    switch (c.kind) {
      case 'url':
        if (!urlMatches(c.pattern, facts.url))
          failures.push({ condition: c, saw: `the URL is ${facts.url}` });
        break;
      case 'element': {
        const present = facts.elements[c.selector] ?? false;
        if (present !== c.present)
          failures.push({
            condition: c,
            saw: present ? `${c.selector} is there` : `nothing matches ${c.selector}`,
          });
        break;
      }
      case 'value': {
        const want = substitute([c.equals], variables)[0] ?? '';
        if (facts.value === undefined) failures.push({ condition: c, saw: 'the element is gone' });
        else if (facts.value !== want)
          failures.push({ condition: c, saw: `the value is "${redactText(facts.value, variables)}"` });
        break;
      }
      case 'checked':
        if (facts.checked !== c.equals)
          failures.push({
            condition: c,
            saw:
              facts.checked === undefined
                ? 'the element is gone'
                : `it is ${facts.checked ? '' : 'not '}checked`,
          });
        break;
      case 'text':
        if (!facts.texts[c.contains])
          failures.push({ condition: c, saw: `"${c.contains}" is not on the page` });
        break;
    }
  }
  return failures;
}

/** One line per failure, for errors and heal reasons. */
export function describeFailures(failures: readonly ConditionFailure[]): string {
  return failures
    .map((f) => {
      const c = f.condition;
      const what =
        c.kind === 'url'
          ? `URL ${c.pattern}`
          : c.kind === 'element'
            ? `${c.selector} ${c.present ? 'present' : 'absent'}`
            : c.kind === 'value'
              ? 'value as typed'
              : c.kind === 'checked'
                ? c.equals
                  ? 'checked'
                  : 'unchecked'
                : `text "${c.contains}"`;
      return `${what}: ${f.saw}`;
    })
    .join('; ');
}

/** Reads the facts the conditions ask about; `target` is the step's element (value / checked). */
export async function readFacts(
  page: Page,
  conditions: readonly PostCondition[],
  target?: string,
): Promise<PageFacts> {
  const facts: PageFacts = { url: page.url(), elements: {}, texts: {} };
  const selectors = conditions.flatMap((c) => (c.kind === 'element' ? [c.selector] : []));
  const texts = conditions.flatMap((c) => (c.kind === 'text' ? [c.contains] : []));
  if (selectors.length || texts.length) {
    const seen = await page
      .evaluate(
        ({ selectors, texts }) => {
          const body = (document.body?.innerText ?? '').replace(/\s+/g, ' ');
          const elements: Record<string, boolean> = {};
          for (const s of selectors) {
            try {
              elements[s] = document.querySelector(s) !== null;
            } catch {
              elements[s] = false;
            }
          }
          const found: Record<string, boolean> = {};
          for (const t of texts) found[t] = body.includes(t.replace(/\s+/g, ' ').trim());
          return { elements, found };
        },
        { selectors, texts },
      )
      .catch(() => ({ elements: {}, found: {} }));
    facts.elements = seen.elements;
    facts.texts = seen.found;
  }
  if (target && conditions.some((c) => c.kind === 'value' || c.kind === 'checked')) {
    const found = await locateByXPath(page, target).catch(() => undefined);
    if (found && !('error' in found)) {
      const state = await found.handle
        .evaluate((el) => ({
          value: 'value' in el ? String((el as HTMLInputElement).value) : undefined,
          checked: 'checked' in el ? Boolean((el as HTMLInputElement).checked) : undefined,
        }))
        .catch(() => ({ value: undefined, checked: undefined }));
      await found.handle.dispose();
      if (state.value !== undefined) facts.value = state.value;
      if (state.checked !== undefined) facts.checked = state.checked;
    }
  }
  return facts;
}

/**
 * Waits (up to `timeoutMs`) for the conditions to hold; returns what still fails at the end (empty:
 * all hold). A navigation in flight is waited for first.
 */
export async function awaitPostConditions(
  page: Page,
  conditions: readonly PostCondition[],
  opts: { target?: string; variables?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ConditionFailure[]> {
  if (conditions.length === 0) return [];
  const deadline = performance.now() + (opts.timeoutMs ?? 5000);
  for (;;) {
    await settle(page, { timeoutMs: 1500, quietMs: 50 }).catch(() => undefined);
    const failures = judgePostConditions(
      conditions,
      await readFacts(page, conditions, opts.target),
      opts.variables,
    );
    if (failures.length === 0 || performance.now() > deadline) return failures;
    await new Promise((r) => setTimeout(r, 150));
  }
}
