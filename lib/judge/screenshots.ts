/**
 * Which screenshots the judge model sees: the ones relevant to the key points, near-duplicates
 * dropped by a perceptual hash, at most a few. Images are the expensive part of a judge prompt, and
 * ten shots of the same page tell it nothing the last one does not.
 */
import { PNG } from 'pngjs';
import type { KeyPoint } from './key-points.ts';
import type { JudgedScreenshot, JudgedStep } from './types.ts';

/**
 * 64-bit difference hash: the image shrunk to 9×8 grey cells (area averages), one bit per pair of
 * neighbours in a row. Similar pictures differ in few bits, whatever their size or compression.
 */
export function differenceHash(png: Uint8Array): bigint | undefined {
  let img: PNG;
  try {
    img = PNG.sync.read(Buffer.from(png));
  } catch {
    return undefined;
  }
  const cols = 9;
  const rows = 8;
  const cells = new Float64Array(cols * rows);
  const counts = new Uint32Array(cols * rows);
  // Sampling every few pixels is plenty for 72 cells and keeps a 1288×711 shot cheap.
  const stride = Math.max(1, Math.floor(Math.min(img.width, img.height) / 96));
  for (let y = 0; y < img.height; y += stride) {
    const row = Math.min(rows - 1, Math.floor((y * rows) / img.height));
    for (let x = 0; x < img.width; x += stride) {
      const col = Math.min(cols - 1, Math.floor((x * cols) / img.width));
      const i = (y * img.width + x) * 4;
      const grey =
        0.299 * (img.data[i] ?? 0) + 0.587 * (img.data[i + 1] ?? 0) + 0.114 * (img.data[i + 2] ?? 0);
      cells[row * cols + col] = (cells[row * cols + col] ?? 0) + grey;
      counts[row * cols + col] = (counts[row * cols + col] ?? 0) + 1;
    }
  }
  let hash = 0n;
  for (let r = 0; r < rows; r++)
    for (let c = 0; c < cols - 1; c++) {
      const a = (cells[r * cols + c] ?? 0) / Math.max(1, counts[r * cols + c] ?? 1);
      const b = (cells[r * cols + c + 1] ?? 0) / Math.max(1, counts[r * cols + c + 1] ?? 1);
      hash = (hash << 1n) | (a > b ? 1n : 0n);
    }
  return hash;
}

export function hammingDistance(a: bigint, b: bigint): number {
  let x = a ^ b;
  let n = 0;
  while (x) {
    n += Number(x & 1n);
    x >>= 1n;
  }
  return n;
}

const words = (s: string): Set<string> =>
  new Set(
    s
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w.length > 2),
  );

/** How much a screenshot's step speaks of the key points: shared words, the final shot counting extra. */
export function relevance(
  shot: JudgedScreenshot,
  steps: JudgedStep[],
  points: KeyPoint[],
  isLast: boolean,
): number {
  const step = steps.find((s) => s.step === shot.step);
  const stepText = step
    ? [
        step.url,
        step.evaluation,
        step.memory,
        step.nextGoal,
        ...step.actions.map((a) => `${a.tool} ${a.outcome}`),
      ].join(' ')
    : '';
  const have = words(`${shot.file} ${stepText}`);
  let score = 0;
  for (const p of points) for (const w of words(p.point)) if (have.has(w)) score += 1;
  return score + (isLast ? 3 : 0);
}

/** Distinct pictures at most this many bits apart are the same page for the judge. */
export const NEAR_DUPLICATE_BITS = 5;

/**
 * The screenshots to show, oldest first: the most relevant `max`, never two near-duplicates (of a
 * pair, the later one stays: it shows the page as the agent left it).
 */
export function selectScreenshots(
  shots: JudgedScreenshot[],
  steps: JudgedStep[],
  points: KeyPoint[],
  max = 3,
): JudgedScreenshot[] {
  const ordered = [...shots].sort((a, b) => a.step - b.step || a.file.localeCompare(b.file));
  const hashed = ordered.map((s) => ({ s, hash: differenceHash(s.png) }));
  const distinct: typeof hashed = [];
  for (const h of hashed.reverse()) {
    const dup = distinct.some(
      (d) =>
        h.hash !== undefined &&
        d.hash !== undefined &&
        hammingDistance(h.hash, d.hash) <= NEAR_DUPLICATE_BITS,
    );
    if (!dup) distinct.push(h);
  }
  const last = ordered.at(-1);
  return distinct
    .map(({ s }) => ({ s, score: relevance(s, steps, points, s === last) }))
    .sort((a, b) => b.score - a.score || b.s.step - a.s.step)
    .slice(0, max)
    .map(({ s }) => s)
    .sort((a, b) => a.step - b.step || a.file.localeCompare(b.file));
}
