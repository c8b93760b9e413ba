/**
 * The set-of-marks picture taken apart, for bench:scenarios-som: each part of `capturePicture`
 * done on its own and timed, on a page already read (its snapshot given). Per call it records:
 *  - `roundTrip`: an empty evaluate through Playwright (the floor under every page call), and
 *    `roundTrip cdp` the same as a bare `Runtime.evaluate` on a CDP session;
 *  - `draw:<layer>`: the drawing call (wall), with `secrets` (secret-text lookup) and `insert`
 *    (building the overlay) as the page's own clock counts them, and `layout:<layer>` (the style
 *    recalc and layout the overlay causes, forced and timed in the page);
 *  - `withMarks:<layer>`: the capture with the overlay on (fast PNG, as the runner takes it): its
 *    paint and raster ride on it, so `withMarks` less `unchanged png fast` is what the overlay costs;
 *  - `remove`: the removal call (the runner no longer waits for it);
 *  - `unchanged <format>`: the capture of a page that has not changed since the last one (frame,
 *    encode, transfer) for PNG, PNG optimised for speed, JPEG, JPEG clipped to the viewport at
 *    scale 1, and `bytes <format>` its size; `decode <format>`: base64 to bytes in Node.
 */
import type { CDPSession, Page } from 'playwright-core';
import { drawMarksExpression, type MarksLayer, marksFor, REMOVE_MARKS } from '../../../lib/perception/som.ts';
import type { Snapshot } from '../../../lib/perception/types.ts';

export type Samples = Map<string, number[]>;

const FORMATS = {
  png: { format: 'png' },
  'png fast': { format: 'png', optimizeForSpeed: true },
  jpeg: { format: 'jpeg', quality: 80 },
} as const;

function note(into: Samples, key: string, value: number): void {
  const xs = into.get(key);
  if (xs) xs.push(value);
  else into.set(key, [value]);
}

async function timed<T>(into: Samples, key: string, fn: () => Promise<T>): Promise<T> {
  const t = performance.now();
  const out = await fn();
  note(into, key, performance.now() - t);
  return out;
}

/** One pass over the parts, on `page` (viewport at scale 1), through a CDP session of its own. */
export async function splitPicture(
  page: Page,
  cdp: CDPSession,
  snap: Snapshot,
  into: Samples,
): Promise<void> {
  const main = page.mainFrame();
  const capture = (params: object) =>
    cdp.send('Page.captureScreenshot', params as never) as Promise<{ data: string }>;
  await timed(into, 'roundTrip', () => main.evaluate('0'));
  await timed(into, 'roundTrip cdp', () => cdp.send('Runtime.evaluate', { expression: '0' }));
  const marks = marksFor(snap);
  for (const layer of ['elements', 'canvas'] as MarksLayer[]) {
    const inner = (await timed(into, `draw:${layer}`, () =>
      main.evaluate(drawMarksExpression(marks, [], null, layer)),
    )) as { secrets: number; draw: number };
    note(into, `draw:${layer} secrets (in page)`, inner.secrets);
    note(into, `draw:${layer} insert (in page)`, inner.draw);
    const layout = (await main.evaluate(
      '(() => { const t = performance.now(); document.documentElement.getBoundingClientRect(); return performance.now() - t; })()',
    )) as number;
    note(into, `layout:${layer} (in page)`, layout);
    await timed(into, `withMarks:${layer}`, () => capture(FORMATS['png fast']));
    await timed(into, 'remove', () => main.evaluate(REMOVE_MARKS));
    // The page repainted without the overlay: not counted (the next capture starts from a quiet page).
    await capture(FORMATS['png fast']);
  }
  const { width, height } = page.viewportSize() ?? { width: 1100, height: 900 };
  const variants: [string, object][] = [
    ...Object.entries(FORMATS),
    ['jpeg clip scale 1', { ...FORMATS.jpeg, clip: { x: 0, y: 0, width, height, scale: 1 } }],
  ];
  // Taken in turn, starting at another one each pass: where a capture falls in the frame cycle
  // depends on the one before (up to ~10 ms), which a fixed order would pin on one format.
  const turn = (into.get('roundTrip')?.length ?? 0) % variants.length;
  for (const [name, params] of [...variants.slice(turn), ...variants.slice(0, turn)]) {
    const { data } = await timed(into, `unchanged ${name}`, () => capture(params));
    const t = performance.now();
    const bytes = Buffer.from(data, 'base64');
    note(into, `decode ${name}`, performance.now() - t);
    note(into, `bytes ${name} (kB)`, bytes.length / 1024);
  }
}
