import type { ElementFacts, Snapshot, SnapshotElement } from '../../lib/perception/types.ts';

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

/** One control of a `formPage`: its role and name, the form it belongs to, its matcher facts. */
export type ControlSpec = Partial<SnapshotElement> & {
  role: string;
  name?: string;
  form?: number;
  f?: ElementFacts;
};

/**
 * A synthetic page of form controls for the matcher's unit tests: ids 1..n in reading order, each
 * visible with a box, in the form its spec names.
 */
export function formPage(specs: ControlSpec[], url = 'https://shop.test/'): Snapshot {
  const elements: SnapshotElement[] = specs.map(({ form, f, ...s }, i) => {
    const id = i + 1;
    const facts: ElementFacts = { ...(form ? { form } : {}), ...f };
    return {
      id,
      name: '',
      tag: s.role === 'button' ? 'button' : s.role === 'link' ? 'a' : 'input',
      frame: 0,
      locator: { xpath: `/html/body/*[${id}]`, role: s.role, name: s.name ?? '' },
      inViewport: true,
      interactive: true,
      box: { x: 10, y: 10 * id, width: 200, height: 30 },
      states: {},
      ...(Object.keys(facts).length > 0 ? { facts } : {}),
      ...s,
    };
  });
  return snapshotOf(elements, url);
}
