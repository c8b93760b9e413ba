/**
 * What a recorded element action leaves for compiling it into a workflow step: the element's
 * locator candidates (read before acting: a click may take the element away) and what the page
 * showed after it (URL, the field's value, the box's checked state). Secrets are put back as their
 * `%name%` placeholders before anything is kept.
 */
import { asDriver, type PageInput } from '../browser/page-driver.ts';
import { type PageCandidate, readCandidates } from './candidates.ts';
import { findElementByXPath } from './locate.ts';
import { redactText } from './redact.ts';
import type { DurableLocator } from './types.ts';

export interface ElementRecording {
  role: string;
  name: string;
  candidates: PageCandidate[];
  after?: {
    url: string;
    navigated: boolean;
    value?: string;
    checked?: boolean;
    /** A line of text the action made appear on the same page ("Saved to your list"). */
    appeared?: string;
  };
}

/** A recording in progress: the page's text lines before the action are kept only until it is done. */
export interface PendingRecording extends ElementRecording {
  linesBefore?: string[];
}

const MAX_LINES = 5000;

async function visibleLines(page: PageInput): Promise<string[] | undefined> {
  return asDriver(page)
    .mainFrame()
    .call(
      (max: number) =>
        (document.body?.innerText ?? '')
          .split('\n')
          .map((l) => l.replace(/\s+/g, ' ').trim())
          .filter(Boolean)
          .slice(0, max),
      MAX_LINES,
    )
    .catch(() => undefined);
}

/**
 * The line worth checking for next time: new, short, made of words (digits are usually this
 * sample's own: prices, counts, dates), and holding no secret.
 */
export function appearedLine(
  before: readonly string[],
  after: readonly string[],
  secrets?: Record<string, string>,
): string | undefined {
  const old = new Set(before);
  return after.find(
    (l) =>
      !old.has(l) &&
      l.length >= 3 &&
      l.length <= 60 &&
      /\p{L}{2}/u.test(l) &&
      !/\d/.test(l) &&
      redactText(l, secrets) === l,
  );
}

export async function recordBefore(page: PageInput, locator: DurableLocator): Promise<PendingRecording> {
  const candidates = await readCandidates(page, locator).catch(() => [
    { kind: 'xpath' as const, value: locator.xpath },
  ]);
  const linesBefore = await visibleLines(page);
  return { role: locator.role, name: locator.name, candidates, ...(linesBefore ? { linesBefore } : {}) };
}

export async function recordAfter(
  input: PageInput,
  pending: PendingRecording,
  locator: DurableLocator,
  urlBefore: string,
  secrets?: Record<string, string>,
): Promise<ElementRecording> {
  const page = asDriver(input);
  const { linesBefore, ...rec } = pending;
  const url = page.url();
  const after: NonNullable<ElementRecording['after']> = { url, navigated: url !== urlBefore };
  if (!after.navigated) {
    const found = await findElementByXPath(page, locator.xpath).catch(() => undefined);
    if (found && !('error' in found)) {
      const state = await found.element
        .call((el) => ({
          value:
            el instanceof HTMLInputElement ||
            el instanceof HTMLTextAreaElement ||
            el instanceof HTMLSelectElement
              ? el.value
              : undefined,
          checked:
            el instanceof HTMLInputElement && /^(checkbox|radio)$/.test(el.type) ? el.checked : undefined,
        }))
        .catch(() => ({ value: undefined, checked: undefined }));
      await found.element.dispose();
      if (state.value !== undefined) after.value = redactText(state.value, secrets);
      if (state.checked !== undefined) after.checked = state.checked;
    }
    if (linesBefore) {
      // A message the click brings up renders a moment later.
      await page.settle({ timeoutMs: 800, quietMs: 50 }).catch(() => undefined);
      const now = await visibleLines(page);
      const line = now ? appearedLine(linesBefore, now, secrets) : undefined;
      if (line) after.appeared = line;
    }
  }
  return { ...rec, after };
}
