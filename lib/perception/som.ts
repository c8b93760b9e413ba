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

/**
 * Draws the marks in a shadow root on top of everything; removed right after the screenshot. The
 * secret text is looked up in the same call (`findRects`: secretTextRects' source) — one round trip
 * to the page, not two. `click` is a ring where the last coordinate click landed.
 */
function drawMarks(
  marks: Mark[],
  values: string[],
  findRects: (values: string[]) => { x: number; y: number; w: number; h: number }[],
  click: { x: number; y: number } | null,
): void {
  const secrets = findRects(values);
  const host = document.createElement('div');
  host.setAttribute('data-bfn-som', '');
  host.style.cssText = 'position:fixed;inset:0;z-index:2147483647;pointer-events:none;';
  const root = host.attachShadow({ mode: 'open' });
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
  document.documentElement.append(host);
}

function removeMarks(): void {
  for (const el of Array.from(document.querySelectorAll('[data-bfn-som]'))) el.remove();
}

export interface MarksOptions {
  /** Values no picture may show: fields holding them and text showing them are painted over. */
  secrets?: Record<string, string>;
  /** A ring at this viewport point (CSS pixels): where the last coordinate click landed. */
  click?: { x: number; y: number };
  /**
   * Takes the viewport picture once the marks are drawn (default: the driver's PNG screenshot). A
   * caller with a faster way for its page (scenarios: CDP's PNG optimised for speed) passes it.
   */
  capture?: () => Promise<Uint8Array>;
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
  await main.evaluate(
    `(${drawMarks.toString()})(${JSON.stringify(marks)}, ${JSON.stringify(values)}, ${secretTextRects.toString()}, ${JSON.stringify(options.click ?? null)})`,
  );
  try {
    return await (options.capture ? options.capture() : page.screenshot());
  } finally {
    await main.evaluate(`(${removeMarks.toString()})()`).catch(() => undefined);
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
