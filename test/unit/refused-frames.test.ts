/**
 * When a remote browser's frame is redirected to an address the guard refuses (refused-frames.ts):
 * unread from the hop on, read again once allowed, or once refused and sent to about:blank.
 */
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { holdDocument, isRefused, judgeDocument, releaseDocument } from '../../lib/browser/refused-frames.ts';

/** A frame as far as the rules look at it: its current URL. */
const frameAt = (url: string) => {
  const f = { now: url, url: () => f.now };
  return f as unknown as Frame & { now: string };
};

describe('frames held back from reads after a redirect hop', () => {
  it('is unread from the hop until the guard allows it', () => {
    const f = frameAt('https://site.test/a');
    expect(isRefused(f)).toBe(false);
    holdDocument(f, 'https://cdn.test/b#top');
    expect(isRefused(f)).toBe(true);
    judgeDocument(f, 'https://cdn.test/b', true);
    expect(isRefused(f)).toBe(false);
  });

  it('stays unread once refused, whatever it shows, until it has been sent to about:blank', () => {
    const f = frameAt('https://site.test/old');
    holdDocument(f, 'http://10.0.0.5/admin');
    judgeDocument(f, 'http://10.0.0.5/admin', false);
    // Refused before the document arrived: the old one is still there, and it stays unread too.
    expect(isRefused(f)).toBe(true);
    f.now = 'http://10.0.0.5/admin';
    expect(isRefused(f)).toBe(true);
    f.now = 'about:blank';
    releaseDocument(f, 'http://10.0.0.5/admin');
    expect(isRefused(f)).toBe(false);
  });

  it('goes by the last hop: an answer for an earlier one changes nothing', () => {
    const f = frameAt('https://site.test/');
    holdDocument(f, 'https://a.test/1');
    holdDocument(f, 'http://127.0.0.1:9/2');
    judgeDocument(f, 'https://a.test/1', true);
    expect(isRefused(f)).toBe(true);
    judgeDocument(f, 'http://127.0.0.1:9/2', false);
    expect(isRefused(f)).toBe(true);
  });
});
