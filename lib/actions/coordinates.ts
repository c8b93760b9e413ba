/**
 * The coordinate action set every computer-use provider is translated into, and the exact mapping
 * from the pixels of the image a model was shown to the page's CSS pixels. A point is only meaningful
 * with the picture it was read from: each action carries the `ScreenFrame` it refers to.
 */

/** Which picture a point refers to, and the page it was taken of. */
export interface ScreenFrame {
  /** Size of the image the model saw (after any downscaling), in its pixels. */
  imageWidth: number;
  imageHeight: number;
  /** The page's viewport in CSS pixels when the picture was taken. */
  viewportWidth: number;
  viewportHeight: number;
  /** Device pixels per CSS pixel of the page (the raw screenshot was this much larger). */
  dpr: number;
}

export interface Point {
  x: number;
  y: number;
}

export type MouseButton = 'left' | 'right' | 'middle';

/** Provider-neutral computer actions; points are in the frame's image pixels. */
export type CoordinateAction =
  | { kind: 'click'; at: Point; button: MouseButton; clicks: 1 | 2 | 3 }
  | { kind: 'move'; at: Point }
  | { kind: 'drag'; path: Point[] }
  | { kind: 'scroll'; at: Point; dx: number; dy: number }
  | { kind: 'type'; text: string }
  /** One chord: keys held together, e.g. ['Control', 'A']. */
  | { kind: 'keys'; chord: string[] }
  | { kind: 'wait'; ms: number }
  | { kind: 'screenshot' }
  | { kind: 'goto'; url: string }
  | { kind: 'back' };

/** Image pixels → CSS pixels of the viewport, clamped inside it (a model may point at the very edge). */
export function toViewport(p: Point, f: ScreenFrame): Point {
  const sx = f.viewportWidth / f.imageWidth;
  const sy = f.viewportHeight / f.imageHeight;
  return {
    x: Math.min(f.viewportWidth - 1, Math.max(0, p.x * sx)),
    y: Math.min(f.viewportHeight - 1, Math.max(0, p.y * sy)),
  };
}

/** CSS pixels of the viewport → image pixels (to mark where a click landed on the next picture). */
export function toImage(p: Point, f: ScreenFrame): Point {
  return { x: (p.x * f.imageWidth) / f.viewportWidth, y: (p.y * f.imageHeight) / f.viewportHeight };
}

/**
 * The size to send a screenshot at: providers bill and reason by image pixels, and each has a
 * largest size it takes without scaling on its own side (which would shift the model's points).
 */
export function fitImage(
  viewportWidth: number,
  viewportHeight: number,
  maxLongSide: number,
  maxPixels: number,
) {
  const byLong = maxLongSide / Math.max(viewportWidth, viewportHeight);
  const byArea = Math.sqrt(maxPixels / (viewportWidth * viewportHeight));
  const scale = Math.min(1, byLong, byArea);
  return { width: Math.round(viewportWidth * scale), height: Math.round(viewportHeight * scale) };
}

/** Playwright's names for keys the providers spell their own ways ("ctrl", "CMD", "Return", "PageDown"). */
const KEY_NAMES: Record<string, string> = {
  ctrl: 'Control',
  control: 'Control',
  cmd: 'Meta',
  command: 'Meta',
  meta: 'Meta',
  super: 'Meta',
  win: 'Meta',
  alt: 'Alt',
  option: 'Alt',
  shift: 'Shift',
  enter: 'Enter',
  return: 'Enter',
  esc: 'Escape',
  escape: 'Escape',
  tab: 'Tab',
  space: ' ',
  backspace: 'Backspace',
  delete: 'Delete',
  del: 'Delete',
  up: 'ArrowUp',
  down: 'ArrowDown',
  left: 'ArrowLeft',
  right: 'ArrowRight',
  arrowup: 'ArrowUp',
  arrowdown: 'ArrowDown',
  arrowleft: 'ArrowLeft',
  arrowright: 'ArrowRight',
  pageup: 'PageUp',
  page_up: 'PageUp',
  pagedown: 'PageDown',
  page_down: 'PageDown',
  home: 'Home',
  end: 'End',
  insert: 'Insert',
};

export function keyName(key: string): string {
  const k = key.trim();
  const known = KEY_NAMES[k.toLowerCase()];
  if (known) return known;
  if (/^f([1-9]|1[0-2])$/i.test(k)) return k.toUpperCase();
  return k.length === 1 ? k : k[0]!.toUpperCase() + k.slice(1);
}

/** "ctrl+a", "Control+Shift+T", ["CTRL", "A"] → ['Control', 'a'|'A'…] as one chord. */
export function parseChord(keys: string | string[]): string[] {
  const parts = Array.isArray(keys)
    ? keys.flatMap((k) => (k.length > 1 ? k.split('+') : [k]))
    : keys.split('+');
  return parts.filter((k) => k.length > 0).map(keyName);
}

/** A readable line for logs and the action log ("click (412, 88) → button 'Save'"). */
export function describeCoordinateAction(a: CoordinateAction): string {
  const at = (p: Point) => `(${Math.round(p.x)}, ${Math.round(p.y)})`;
  switch (a.kind) {
    case 'click':
      return `${a.clicks === 1 ? '' : a.clicks === 2 ? 'double ' : 'triple '}${a.button === 'left' ? '' : `${a.button} `}click ${at(a.at)}`;
    case 'move':
      return `move to ${at(a.at)}`;
    case 'drag':
      return `drag ${a.path.map(at).join(' → ')}`;
    case 'scroll':
      return `scroll ${a.dx},${a.dy} at ${at(a.at)}`;
    case 'type':
      return `type "${a.text}"`;
    case 'keys':
      return `press ${a.chord.join('+')}`;
    case 'wait':
      return `wait ${a.ms} ms`;
    case 'screenshot':
      return 'screenshot';
    case 'goto':
      return `go to ${a.url}`;
    case 'back':
      return 'go back';
  }
}
