/**
 * What a recorded element action leaves for compiling it into a workflow step: the element's
 * locator candidates (read before acting: a click may take the element away) and what the page
 * showed after it (URL, the field's value, the box's checked state). Secrets are put back as their
 * `%name%` placeholders before anything is kept.
 */
import type { Page } from 'playwright-core';
import { type PageCandidate, readCandidates } from './candidates.ts';
import { locateByXPath } from './locate.ts';
import { redactText } from './redact.ts';
import type { DurableLocator } from './types.ts';

export interface ElementRecording {
  role: string;
  name: string;
  candidates: PageCandidate[];
  after?: { url: string; navigated: boolean; value?: string; checked?: boolean };
}

export async function recordBefore(page: Page, locator: DurableLocator): Promise<ElementRecording> {
  const candidates = await readCandidates(page, locator).catch(() => [
    { kind: 'xpath' as const, value: locator.xpath },
  ]);
  return { role: locator.role, name: locator.name, candidates };
}

export async function recordAfter(
  page: Page,
  rec: ElementRecording,
  locator: DurableLocator,
  urlBefore: string,
  secrets?: Record<string, string>,
): Promise<ElementRecording> {
  const url = page.url();
  const after: NonNullable<ElementRecording['after']> = { url, navigated: url !== urlBefore };
  if (!after.navigated) {
    const found = await locateByXPath(page, locator.xpath).catch(() => undefined);
    if (found && !('error' in found)) {
      const state = await found.handle
        .evaluate((el) => ({
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
      await found.handle.dispose();
      if (state.value !== undefined) after.value = redactText(state.value, secrets);
      if (state.checked !== undefined) after.checked = state.checked;
    }
  }
  return { ...rec, after };
}
