import { describe, expect, it } from 'vitest';
import { ExtractBody, ObserveBody } from '../../lib/api/stagehand/wire.ts';
import { isSelectorMiss } from '../../lib/ops/page-state.ts';
import { SnapshotError } from '../../lib/perception/snapshot.ts';

describe('the scope options of observe and extract', () => {
  it('take ignoreSelectors as a list of strings', () => {
    const ignoreSelectors = ['nav', 'xpath=/html/body/footer'];
    expect(ObserveBody.parse({ options: { ignoreSelectors } }).options?.ignoreSelectors).toEqual(
      ignoreSelectors,
    );
    expect(ExtractBody.parse({ options: { selector: '//main', ignoreSelectors } }).options).toMatchObject({
      selector: '//main',
      ignoreSelectors,
    });
    expect(ObserveBody.safeParse({ options: { ignoreSelectors: 'nav' } }).success).toBe(false);
    expect(ExtractBody.safeParse({ options: { ignoreSelectors: [1] } }).success).toBe(false);
  });
});

describe('isSelectorMiss', () => {
  it('is true only for a read whose scope selector found nothing or was not valid', () => {
    expect(isSelectorMiss(new SnapshotError('no element matches selector: #nope'))).toBe(true);
    expect(isSelectorMiss(new SnapshotError('invalid selector: //main['))).toBe(true);
    // The page itself could not be read: no reason to read it again without the selector.
    expect(isSelectorMiss(new SnapshotError('could not read the page: Target closed'))).toBe(false);
    expect(isSelectorMiss(new Error('no element matches selector: #nope'))).toBe(false);
    expect(isSelectorMiss(undefined)).toBe(false);
  });
});
