import type { ControlFacts } from './features.ts';
import type { WatchMark } from './watch.ts';

/**
 * What collect() sends back from a page frame, shaped to keep big pages' payloads small; the
 * caller (assemble.ts, snapshot.ts) turns it into a Snapshot.
 */

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
 * — flags: 1 interactive, 2 in viewport, 4 frame slot, 8 an element line, whose text is its role
 * word and whose name is the last field ('' on text lines).
 */
export type PageLine = [number, string, number, number, number, string];

/**
 * An element as the walk keeps it in the page: [id, role, name, tag, xpath, flags (1 in viewport,
 * 2 interactive, 4 scrollable, 8 role and name as on its line: sent empty), url ('' for none; one
 * starting with `/` is relative to the frame's origin), [x, y, w, h] | 0, extra | 0].
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
 * The lines and elements as they travel (wire.ts packs them in the page, assemble.ts reads them in
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
  /**
   * Per element: flags (PageElement's, plus 16 extra, 32 box, 64 url, 128 id jump), [id − (previous
   * id + 1)], xpath shared, [url shared], [x − previous x, y − (its line's top − scrollY), width −
   * previous width, height − previous height].
   */
  en: number[];
  /** The extras of the elements with flag 16, in order. */
  ex: PackedExtra[];
}

/** What collect() sends, its lines and elements packed. */
export interface RawCollect extends WireParts {
  url: string;
  title: string;
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
