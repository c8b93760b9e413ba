import type { Snapshot, SnapshotElement } from '../../lib/perception/types.ts';

/**
 * A synthetic snapshot around the given elements, shaped like a real one (one frame, stats from
 * the elements), for unit tests of what reads snapshots: the matcher, the grounding model.
 */
export function snapshotOf(
  elements: SnapshotElement[],
  url = 'https://shop.test/',
  extra: Partial<Snapshot> = {},
): Snapshot {
  return {
    url,
    title: 'test',
    tree: '',
    elements,
    urls: {},
    frames: [{ index: 0, url, xpath: '', offset: { x: 0, y: 0 } }],
    stats: {
      nodes: elements.length,
      elements: elements.length,
      interactive: elements.filter((e) => e.interactive).length,
      lines: elements.length,
      chars: 0,
      tokens: 0,
      ms: 0,
      omittedLines: 0,
      omittedInteractive: 0,
    },
    signature: 'sig',
    contentHash: 'hash',
    confidence: 1,
    ...extra,
  };
}
