import type { ControlFacts } from './features.ts';
import type { WatchMark } from './watch.ts';

/**
 * What collect() sends back from a page frame, shaped to keep big pages' payloads small; the
 * caller (tree.ts, snapshot.ts) turns it into a Snapshot.
 */

/** [depth, text, elementId (0 = none), flags, docTop] — flags: 1 interactive, 2 in viewport, 4 frame slot. */
export type RawLine = [number, string, number, number, number];

/** Rarely present element fields, sent only when there is something to send. */
export interface PackedExtra {
  value?: string;
  placeholder?: string;
  label?: string;
  inputType?: string;
  options?: string[];
  states?: Record<string, boolean | string>;
  /** Key of the open dialog holding the element (see SnapshotElement.dialog). */
  dialog?: number;
  /** Matcher facts about form controls and buttons (see features.ts). */
  facts?: ControlFacts;
}

/**
 * One element, as a tuple to keep big pages' payloads small:
 * [id, role, name, tag, xpath, flags (1 in viewport, 2 interactive, 4 scrollable, 8 role and name
 *  as on its line), url | 0, [x, y, w, h] | 0, extra | 0]. A url starting with `/` is relative to
 * the frame's origin. With flag 8, role and name are sent empty: the element's line (the one with
 * its id) says them. The xpath is whole, or [n, rest]: the first n characters of the previous
 * element's xpath followed by rest (elements come in document order, so neighbours share most of
 * their path).
 */
export type PackedElement = [
  number,
  string,
  string,
  string,
  string | [number, string],
  number,
  string | 0,
  [number, number, number, number] | 0,
  PackedExtra | 0,
];

export interface RawFrameSlot {
  key: number;
  line: number;
  xpath: string;
  /** Content-box origin of the iframe inside this frame's viewport. */
  x: number;
  y: number;
  w: number;
  h: number;
}

/**
 * A line as the walk keeps it in the page: [depth, text, elementId (0 = none), flags, docTop, name]
 * — flags as RawLine's, plus 8 for an element line, whose text is its role word and whose name is
 * the last field ('' on text lines).
 */
export type PageLine = [number, string, number, number, number, string];

/**
 * An element as the walk keeps it in the page: PackedElement with its xpath whole and '' for no url.
 */
export type PageElement = [
  number,
  string,
  string,
  string,
  string,
  number,
  string,
  [number, number, number, number] | 0,
  PackedExtra | 0,
];

/**
 * The lines and elements as they travel (wire.ts packs them in the page, unpack.ts reads them in
 * Node): strings joined by DEL (U+007F, which neither JSON nor the CDP message escapes, and which no
 * page text needs: it prints nothing), numbers in flat arrays. Tuples of short strings cost ~18
 * characters of quotes, brackets and commas each, and every quote is escaped again inside the CDP
 * message. See wire.ts for the order of the fields.
 */
export interface WireParts {
  /** Each line's text; for an element line, its name. */
  lt: string;
  /**
   * Per line: depth × 32 + flags (1 interactive, 2 in viewport, 4 frame slot, 8 element line, 16 has
   * the next element), then its top − the top of the line of the same kind before it (text lines sit
   * at their block's top, element lines at their own), then for an element line its role's index in `rl`.
   */
  ln: number[];
  /** The role words of element lines, each once, in the order first seen. */
  rl: string[];
  /** Per element: tag, the xpath past what it shares with the previous one, the url past what it shares, role and name unless flag 8. */
  et: string;
  /** Per element: id − (previous id + 1), flags (PackedElement's, plus 16 extra, 32 box, 64 url), xpath shared, [url shared], [x, y, w, h]. */
  en: number[];
  /** The extras of the elements with flag 16, in order. */
  ex: PackedExtra[];
}

/** What collect() sends: RawCollect with its lines and elements packed. */
export type WireCollect = Omit<RawCollect, 'lines' | 'elements'> & WireParts;

export interface RawCollect {
  url: string;
  title: string;
  lines: RawLine[];
  elements: PackedElement[];
  frames: RawFrameSlot[];
  /** First snapshot of this document: its ids start over. */
  fresh: boolean;
  viewport: { width: number; height: number; scrollX: number; scrollY: number; docHeight: number };
  counts: {
    nodes: number;
    canvas: number;
    canvasArea: number;
    svgIcons: number;
    unlabelled: number;
    semantic: number;
  };
  error?: string;
  /**
   * The page's own clock: [ms installing the collector (0 when it was there), ms walking, epoch ms
   * when the script started]; `sentAt`: epoch ms once the read was stringified.
   */
  timing?: [number, number, number];
  sentAt?: number;
  /** Where the document's change count stood at this read, when its change notice was armed. */
  watch?: WatchMark;
}
