/**
 * The data a model reads about a page, and the maps that tie what it says back to live elements.
 * Everything here is plain JSON; live handles (Playwright frames) are kept beside it, never in it.
 */

/** Short per-snapshot id, shared by the text tree (`[12] button: Sign in`) and set-of-marks labels. */
export type ElementId = number;

/** CSS pixels in the top-level viewport's coordinate space. */
export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Finds an element again after the snapshot is gone (next call, next Lambda, cache replay).
 * `xpath` is a chain of XPath segments joined by ` >> `: a hop after an `<iframe>`/`<frame>` enters its
 * document, any other hop enters the element's shadow root (open or closed). `role` + `name` are the
 * fallback when the structure moved, and the check that a replay still hits the same thing.
 */
export interface DurableLocator {
  xpath: string;
  role: string;
  name: string;
}

export interface ElementStates {
  checked?: boolean | 'mixed';
  selected?: boolean;
  disabled?: boolean;
  expanded?: boolean;
  required?: boolean;
  readonly?: boolean;
  focused?: boolean;
}

export interface SnapshotElement {
  id: ElementId;
  role: string;
  /** Accessible name as the browser would compute it (labels, aria-*, alt, title, text). */
  name: string;
  tag: string;
  /** Index into `Snapshot.frames`. */
  frame: number;
  locator: DurableLocator;
  /** Absolute link / image URL when the element has one. */
  url?: string;
  /** Present when the element is rendered with a size; in top-level viewport coordinates. */
  box?: Box;
  inViewport: boolean;
  interactive: boolean;
  scrollable?: boolean;
  value?: string;
  placeholder?: string;
  /** Visible label text (from <label>, aria-labelledby) kept apart from the name for matching. */
  label?: string;
  inputType?: string;
  options?: string[];
  /**
   * Set when the element sits inside an open dialog (`<dialog open>`, role dialog / alertdialog,
   * aria-modal): a number that is the same for all elements of one dialog within a frame.
   */
  dialog?: number;
  states: ElementStates;
  /** Form controls and buttons only: what the matcher grounds on beyond the name (not in the tree text). */
  facts?: ElementFacts;
}

/** What a page says about a form control besides its name; read by the zero-token matcher. */
export interface ElementFacts {
  /** The `autocomplete` token(s), lower-case ("username", "current-password"); never "on"/"off". */
  autocomplete?: string;
  /** The `name` and `id` attribute values, space-separated ("login_email loginEmail"). */
  attrs?: string;
  /** Text just before the control, when nothing names it ("Username:" in a table cell). */
  nearby?: string;
  /** The form (or nearest group of controls) it belongs to; equal numbers = same form. */
  form?: number;
  /** Laid out but not usable by a person: transparent, clipped to nothing, or outside the page. */
  concealed?: boolean;
  /** A submit button of a `<form>`: what pressing Enter in its fields would press. */
  submit?: boolean;
  /** In the page's chrome (header, navigation, footer, sidebar), or in its main landmark. */
  region?: 'chrome' | 'main';
}

export interface FrameInfo {
  index: number;
  url: string;
  /** Parent frame index; undefined for the main frame. */
  parent?: number;
  /** XPath chain (see DurableLocator) of the <iframe> element that holds this frame. */
  xpath: string;
  /** Offset of the frame's viewport inside the top-level viewport. */
  offset: { x: number; y: number };
}

export interface SnapshotStats {
  /** DOM elements walked. */
  nodes: number;
  /** Elements with an id in this snapshot. */
  elements: number;
  interactive: number;
  lines: number;
  chars: number;
  /** Estimated tokens of `tree` (chars / 3, close to o200k on outlines; benchmarks use the real tokenizer). */
  tokens: number;
  ms: number;
  /** Lines left out by the token budget / chunking. */
  omittedLines: number;
  omittedInteractive: number;
}

export interface Snapshot {
  url: string;
  title: string;
  /** Compact indented text, one element per line. */
  tree: string;
  elements: SnapshotElement[];
  /** id → absolute URL for links and images (the ids a model may answer with for URL fields). */
  urls: Record<string, string>;
  frames: FrameInfo[];
  stats: SnapshotStats;
  /** Structure-only hash (URL pattern + roles of interactive elements): stable across text edits. */
  signature: string;
  /** Hash of the full tree text: changes when anything a model would see changes. */
  contentHash: string;
  /** 1.0 when the DOM tells the whole story; lower for canvas / unlabelled icons / SVG-heavy pages. */
  confidence: number;
  /** Viewport chunking: which chunk this is and how many there are. */
  chunk?: { index: number; count: number };
  /** Human-readable note on what the budget/chunk left out, also appended to the tree. */
  omitted?: string;
  /**
   * Every element of the page in document order, present when the budget or chunk left some out
   * of `tree` and `elements`. Only for deciding without a model (see `wholePage`).
   */
  complete?: SnapshotElement[];
}

/**
 * The snapshot with every element, for the zero-token matcher: it must judge the whole page, or a
 * match among the lines a budget happened to keep can win over the right element it left out. A
 * model, by contrast, may only answer with an id it was shown (`elements`).
 */
export function wholePage(snapshot: Snapshot): Snapshot {
  return snapshot.complete ? { ...snapshot, elements: snapshot.complete } : snapshot;
}

export interface SnapshotOptions {
  /** CSS or XPath (`/…`, `xpath=…`) selector to scope the snapshot to (first match, in the main frame). */
  selector?: string;
  /** CSS or XPath selectors whose subtrees are left out. */
  ignore?: string[];
  /** Token budget for the tree; keeps in-viewport, interactive and keyword-matching lines first. */
  budget?: number;
  /** Words that raise a line's priority under a budget (e.g. from the instruction). */
  keywords?: string[];
  /** Viewport-height chunk of the document to include (0-based). */
  chunk?: number;
  /** Descend into iframes (default true). */
  frames?: boolean;
  /** Include non-interactive text lines (default true). */
  text?: boolean;
  /** Max characters of text per line (default 120). */
  maxTextLength?: number;
}

export function elementById(snapshot: Snapshot, id: ElementId): SnapshotElement | undefined {
  // Ids are assigned 1..n in order, so the array index is a fast first guess.
  const guess = snapshot.elements[id - 1];
  if (guess?.id === id) return guess;
  return snapshot.elements.find((e) => e.id === id);
}
