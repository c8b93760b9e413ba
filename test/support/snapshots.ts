import type { PageElement, PageLine, RawCollect } from '../../lib/perception/injected/payload.ts';
import { wire } from '../../lib/perception/injected/wire.ts';
import type { FrameCollect } from '../../lib/perception/tree.ts';
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

/**
 * A main frame's read as the page sends it: the walk's lines and elements packed by the in-page
 * packer, through JSON, for unit tests of what Node makes of it (assemble, buildSnapshot).
 */
export function packedRead(
  lines: PageLine[],
  elements: PageElement[],
  page: { url: string; title?: string; docHeight?: number; nodes?: number; semantic?: number },
): FrameCollect {
  const sent: RawCollect = {
    url: page.url,
    title: page.title ?? 't',
    ...wire().packWire(lines, elements),
    frames: [],
    fresh: true,
    viewport: { width: 1280, height: 800, scrollX: 0, scrollY: 0, docHeight: page.docHeight ?? 800 },
    counts: {
      nodes: page.nodes ?? lines.length,
      canvas: 0,
      canvasArea: 0,
      svgIcons: 0,
      unlabelled: 0,
      semantic: page.semantic ?? 0,
    },
  };
  const raw = JSON.parse(JSON.stringify(sent)) as RawCollect;
  return {
    raw,
    info: { index: 0, url: raw.url, xpath: '', offset: { x: 0, y: 0 } },
    clip: { x: 0, y: 0, w: 1280, h: 800 },
  };
}
