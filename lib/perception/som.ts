import { asDriver, type PageDriver, type PageInput } from '../browser/page-driver.ts';
import type { Snapshot, SnapshotElement } from './types.ts';

/** Colour per kind of element, so a glance tells buttons from fields from links. */
const COLOURS: Record<string, string> = {
  button: '#e6194b',
  link: '#3cb44b',
  textbox: '#4363d8',
  searchbox: '#4363d8',
  combobox: '#f58231',
  listbox: '#f58231',
  option: '#f58231',
  checkbox: '#911eb4',
  radio: '#911eb4',
  switch: '#911eb4',
  tab: '#008080',
  menuitem: '#008080',
  slider: '#9a6324',
  spinbutton: '#9a6324',
};
const OTHER = '#808000';

export const colourOf = (role: string): string => COLOURS[role] ?? OTHER;

export interface Mark {
  id: number;
  x: number;
  y: number;
  w: number;
  h: number;
  colour: string;
  /** Paint the box solid: its value is a secret (see redactSecrets) and must not be pictured. */
  mask?: boolean;
}

const HOLDS_SECRET = /%[A-Za-z_][\w.-]*%/;

/** The boxes to draw: elements of the snapshot that are in the viewport, in viewport coordinates. */
export function marksFor(snapshot: Snapshot): Mark[] {
  return snapshot.elements
    .filter(
      (e): e is SnapshotElement & { box: NonNullable<SnapshotElement['box']> } => e.inViewport && !!e.box,
    )
    .map((e) => {
      const mark: Mark = {
        id: e.id,
        x: e.box.x,
        y: e.box.y,
        w: e.box.width,
        h: e.box.height,
        colour: colourOf(e.role),
      };
      if (e.value && HOLDS_SECRET.test(e.value)) mark.mask = true;
      return mark;
    });
}

/**
 * Boxes (viewport coordinates) of visible text that contains a secret value: a status line that
 * echoes what was typed must not end up in a picture sent to a model.
 */
function secretTextRects(values: string[]): { x: number; y: number; w: number; h: number }[] {
  const out: { x: number; y: number; w: number; h: number }[] = [];
  if (values.length === 0) return out;
  const walker = document.createTreeWalker(document.body ?? document.documentElement, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = n.nodeValue ?? '';
    if (!values.some((v) => text.includes(v))) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of Array.from(range.getClientRects()))
      out.push({ x: r.left, y: r.top, w: r.width, h: r.height });
  }
  return out;
}

/** How the overlay is drawn: one element per box and label, or all of them on one canvas. */
export type MarksLayer = 'elements' | 'canvas';

/**
 * Draws the marks in a shadow root on top of everything; removed right after the screenshot. The
 * secret text is looked up in the same call (`findRects`: secretTextRects' source) — one round trip
 * to the page, not two. `click` is a ring where the last coordinate click landed. The host is
 * `contain: strict` (its layout and paint never spill into the page's). Returns what its parts took
 * (ms), for bench:scenarios-som.
 */
function drawMarks(
  marks: Mark[],
  values: string[],
  findRects: (values: string[]) => { x: number; y: number; w: number; h: number }[],
  click: { x: number; y: number } | null,
  layer: MarksLayer,
): { secrets: number; draw: number } {
  const t0 = performance.now();
  const secrets = findRects(values);
  const t1 = performance.now();
  // A removal that was not waited for and did not happen (the page was busy or navigating).
  for (const old of Array.from(document.querySelectorAll('[data-bfn-som]'))) old.remove();
  const host = document.createElement('div');
  host.setAttribute('data-bfn-som', '');
  host.style.cssText =
    'all:initial;position:fixed;left:0;top:0;width:100vw;height:100vh;z-index:2147483647;pointer-events:none;contain:strict;';
  const root = host.attachShadow({ mode: 'open' });
  const canvas = layer === 'canvas' ? document.createElement('canvas') : null;
  const g = canvas?.getContext('2d');
  if (canvas && g) {
    const dpr = window.devicePixelRatio || 1;
    const [w, h] = [window.innerWidth, window.innerHeight];
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
    canvas.style.cssText = `display:block;width:${w}px;height:${h}px;`;
    g.scale(dpr, dpr);
    g.font = 'bold 11px monospace';
    g.textBaseline = 'middle';
    for (const m of marks) {
      if (m.mask) {
        g.fillStyle = '#222';
        g.fillRect(m.x, m.y, m.w, m.h);
      }
      g.strokeStyle = m.colour;
      g.lineWidth = 2;
      g.strokeRect(m.x + 1, m.y + 1, Math.max(0, m.w - 2), Math.max(0, m.h - 2));
    }
    for (const m of marks) {
      const text = String(m.id);
      const x = Math.max(0, m.x);
      const y = m.y >= 14 ? m.y - 14 : m.y;
      g.fillStyle = m.colour;
      g.fillRect(x, y, g.measureText(text).width + 6, 14);
      g.fillStyle = '#fff';
      g.fillText(text, x + 3, y + 7);
    }
    g.fillStyle = '#222';
    for (const r of secrets) g.fillRect(r.x - 2, r.y - 2, r.w + 4, r.h + 4);
    if (click) {
      g.strokeStyle = '#ff00ff';
      g.lineWidth = 3;
      g.beginPath();
      g.arc(click.x, click.y, 9.5, 0, 2 * Math.PI);
      g.stroke();
    }
    root.append(canvas);
  } else {
    for (const m of marks) {
      const box = document.createElement('div');
      box.style.cssText = `position:fixed;left:${m.x}px;top:${m.y}px;width:${m.w}px;height:${m.h}px;border:2px solid ${m.colour};box-sizing:border-box;${m.mask ? 'background:#222;' : ''}`;
      const label = document.createElement('div');
      label.textContent = String(m.id);
      const above = m.y >= 14;
      label.style.cssText = `position:fixed;left:${Math.max(0, m.x)}px;top:${above ? m.y - 14 : m.y}px;background:${m.colour};color:#fff;font:bold 11px/14px monospace;padding:0 3px;`;
      root.append(box, label);
    }
    for (const r of secrets) {
      const cover = document.createElement('div');
      cover.style.cssText = `position:fixed;left:${r.x - 2}px;top:${r.y - 2}px;width:${r.w + 4}px;height:${r.h + 4}px;background:#222;`;
      root.append(cover);
    }
    if (click) {
      const ring = document.createElement('div');
      ring.style.cssText = `position:fixed;left:${click.x - 10}px;top:${click.y - 10}px;width:16px;height:16px;border:3px solid #ff00ff;border-radius:50%;`;
      root.append(ring);
    }
  }
  document.documentElement.append(host);
  return { secrets: t1 - t0, draw: performance.now() - t1 };
}

function removeMarks(): void {
  for (const el of Array.from(document.querySelectorAll('[data-bfn-som]'))) el.remove();
}

/** The expression that draws the overlay (bench:scenarios-som times its parts). */
export function drawMarksExpression(
  marks: Mark[],
  values: string[],
  click: { x: number; y: number } | null,
  layer: MarksLayer = DEFAULT_LAYER,
): string {
  return `(${drawMarks.toString()})(${JSON.stringify(marks)}, ${JSON.stringify(values)}, ${secretTextRects.toString()}, ${JSON.stringify(click)}, ${JSON.stringify(layer)})`;
}

export const REMOVE_MARKS = `(${removeMarks.toString()})()`;

const DEFAULT_LAYER: MarksLayer = 'elements';

export interface MarksOptions {
  /** Values no picture may show: fields holding them and text showing them are painted over. */
  secrets?: Record<string, string>;
  /** A ring at this viewport point (CSS pixels): where the last coordinate click landed. */
  click?: { x: number; y: number };
  /**
   * Takes the viewport picture once the marks are drawn (default: the driver's PNG screenshot, as
   * evidence keeps it). A caller whose picture only a model sees (scenarios: JPEG) passes its own.
   */
  capture?: () => Promise<Uint8Array>;
  /**
   * Runs the overlay's scripts (draw, remove) in the main frame's page world (default: the
   * driver's evaluate). A caller with a shorter path to the page (scenarios: a bare CDP
   * Runtime.evaluate, a few ms less a call than Playwright's) passes it.
   */
  run?: (expression: string) => Promise<unknown>;
  /**
   * Send the overlay's removal but do not wait for it (a page call's round trip less per picture):
   * for a caller whose next page read comes after a model call, long after the removal ran. A read
   * right after the picture, over another connection to the page, could still see the overlay.
   */
  removeLater?: boolean;
  /** How the overlay is drawn (default: the faster one measured by bench:scenarios-som). */
  layer?: MarksLayer;
}

/**
 * Screenshot of the viewport (PNG) with a coloured, numbered box on every element of the snapshot:
 * the numbers are the same ids as in the text tree. The overlay is removed right after.
 */
export async function marksPicture(
  page: PageDriver,
  snapshot: Snapshot,
  options: MarksOptions = {},
): Promise<Uint8Array> {
  const marks = marksFor(snapshot);
  const values = Object.values(options.secrets ?? {}).filter((v) => v.length > 0);
  const main = page.mainFrame();
  const run = options.run ?? ((expression: string) => main.evaluate(expression));
  await run(drawMarksExpression(marks, values, options.click ?? null, options.layer));
  try {
    return await (options.capture ? options.capture() : page.screenshot());
  } finally {
    const removed = run(REMOVE_MARKS).catch(() => undefined);
    if (!options.removeLater) await removed;
  }
}

/** `marksPicture` for the Node callers, as a Buffer (what the Playwright adapter's screenshot is). */
export async function setOfMarks(
  page: PageInput,
  snapshot: Snapshot,
  options: MarksOptions = {},
): Promise<Buffer> {
  const png = await marksPicture(asDriver(page), snapshot, options);
  return Buffer.isBuffer(png) ? png : Buffer.from(png);
}

/** Where on screen (top document) text holding a secret value is shown. */
export async function findSecretText(
  page: PageInput,
  values: string[],
): Promise<{ x: number; y: number; w: number; h: number }[]> {
  if (values.length === 0) return [];
  return (await asDriver(page)
    .mainFrame()
    .evaluate(`(${secretTextRects.toString()})(${JSON.stringify(values)})`)) as {
    x: number;
    y: number;
    w: number;
    h: number;
  }[];
}
