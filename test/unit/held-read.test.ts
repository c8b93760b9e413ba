import { describe, expect, it } from 'vitest';
import { mayChangePage } from '../../lib/api/stagehand/cdp-filter.ts';
import type { PageDriver } from '../../lib/browser/page-driver.ts';
import {
  builtFrom,
  type HeldRead,
  HOLD_MS,
  heldRead,
  holdRead,
  keepBuilt,
  mayReuse,
  parseNotice,
  startWalk,
} from '../../lib/perception/held-read.ts';
import type { Snapshot } from '../../lib/perception/types.ts';

const held = (over: Partial<HeldRead> = {}): HeldRead => ({
  key: 'k',
  collected: [{} as HeldRead['collected'][number]],
  live: [],
  mark: { doc: 'd1', seq: 3 },
  at: 1000,
  ...over,
});
const now = (over: Partial<Parameters<typeof mayReuse>[1]> = {}) => ({
  key: 'k',
  at: 1200,
  frames: 1,
  ...over,
});

describe('when a held read may answer for a new one', () => {
  it('may, for the same read options on an unchanged single-frame page within the hold limit', () => {
    expect(mayReuse(held(), now())).toBe(true);
    // A notice from before the read (or from an earlier document) says nothing about after it.
    expect(mayReuse(held(), now({ changed: { doc: 'd1', seq: 3 } }))).toBe(true);
    expect(mayReuse(held(), now({ changed: { doc: 'd0', seq: 9 } }))).toBe(true);
  });

  it('may not after a change notice for its document', () => {
    expect(mayReuse(held(), now({ changed: { doc: 'd1', seq: 4 } }))).toBe(false);
  });

  it('may not for other read options, past the hold limit, or on a page with frames', () => {
    expect(mayReuse(undefined, now())).toBe(false);
    expect(mayReuse(held(), now({ key: 'other' }))).toBe(false);
    expect(mayReuse(held(), now({ at: 1000 + HOLD_MS + 1 }))).toBe(false);
    expect(mayReuse(held(), now({ at: 999 }))).toBe(false);
    expect(mayReuse(held(), now({ frames: 2 }))).toBe(false);
    expect(mayReuse(held({ collected: [] }), now())).toBe(false);
  });
});

describe('which CDP commands from a client drop held reads', () => {
  it('keeps them for reads and set-up, drops them for input, script, navigation and emulation', () => {
    for (const m of [
      'DOM.getDocument',
      'Runtime.enable',
      'Page.captureScreenshot',
      'Accessibility.getFullAXTree',
    ])
      expect(mayChangePage(m), m).toBe(false);
    for (const m of [
      'Input.dispatchMouseEvent',
      'Runtime.evaluate',
      'Runtime.callFunctionOn',
      'Page.navigate',
      'Page.reload',
      'Emulation.setDeviceMetricsOverride',
      'DOM.setAttributeValue',
    ])
      expect(mayChangePage(m), m).toBe(true);
  });
});

describe('holding a read', () => {
  const page = { frames: () => [{}] } as unknown as PageDriver;
  const collected = [
    { raw: { watch: { doc: 'd', seq: 0 }, fresh: true } },
  ] as unknown as HeldRead['collected'];

  it('holds only the latest walk of the page, no longer marked as the document’s first', () => {
    const overtaken = startWalk(page);
    const latest = startWalk(page);
    holdRead(page, 'k', collected, [], overtaken);
    expect(heldRead(page, 'k')).toBeUndefined();
    holdRead(page, 'k', collected, [], latest);
    expect(heldRead(page, 'k')?.collected[0]?.raw.fresh).toBe(false);
    expect(heldRead(page, 'other')).toBeUndefined();
  });

  it('holds nothing for a read whose change notice was not armed', () => {
    const fresh = { frames: () => [{}] } as unknown as PageDriver;
    const unarmed = [{ raw: { fresh: true } }] as unknown as HeldRead['collected'];
    holdRead(fresh, 'k', unarmed, [], startWalk(fresh));
    expect(heldRead(fresh, 'k')).toBeUndefined();
  });
});

describe('the page’s change notice', () => {
  it('reads `<document>:<count>` and nothing else', () => {
    expect(parseNotice('k3x9:12')).toEqual({ doc: 'k3x9', seq: 12 });
    expect(parseNotice('k3x9')).toBeUndefined();
    expect(parseNotice(':3')).toBeUndefined();
    expect(parseNotice('k3x9:many')).toBeUndefined();
  });
});

describe('snapshots built from a held read', () => {
  const snap = (tree: string) => ({ tree }) as Snapshot;

  it('gives back the one built for the same budget and secrets, whatever the keywords, when nothing was trimmed', () => {
    const read = held();
    const whole = snap('whole page');
    keepBuilt(read, { shape: 'b6000', keywords: '["sign"]', trimmed: false, snapshot: whole });
    expect(builtFrom(read, 'b6000', '["tick"]')).toBe(whole);
    expect(builtFrom(read, 'b6000|secrets', '["sign"]')).toBeUndefined();
    expect(builtFrom(read, 'b600', '["sign"]')).toBeUndefined();
  });

  it('under a budget that trimmed lines, only for the same keywords', () => {
    const read = held();
    const trimmed = snap('the lines "footer" won');
    keepBuilt(read, { shape: 'b600', keywords: '["footer"]', trimmed: true, snapshot: trimmed });
    expect(builtFrom(read, 'b600', '["footer"]')).toBe(trimmed);
    expect(builtFrom(read, 'b600', '["prairie"]')).toBeUndefined();
  });

  it('keeps the latest few, oldest let go first', () => {
    const read = held();
    for (let i = 0; i < 5; i++)
      keepBuilt(read, { shape: `s${i}`, keywords: '[]', trimmed: false, snapshot: snap(`t${i}`) });
    expect(builtFrom(read, 's0', '[]')).toBeUndefined();
    expect(builtFrom(read, 's4', '[]')?.tree).toBe('t4');
    expect(builtFrom(read, 's1', '[]')?.tree).toBe('t1');
  });
});
