import type { RawCollect } from './injected/payload.ts';
import { sha256Hex } from './sha256.ts';
import type { SnapshotElement } from './types.ts';

export const shortHash = (text: string): string => sha256Hex(text).slice(0, 16);

/**
 * The page's URL reduced to what identifies a *kind* of page: origin + path with ids blurred
 * (numbers, hashes, uuids) + sorted query keys without values.
 */
export function urlPattern(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname
      .split('/')
      .map((seg) => (/^\d+$|^[0-9a-f]{8,}$|^[0-9a-f-]{36}$/i.test(seg) ? '*' : seg))
      .join('/');
    const keys = [...new Set(u.searchParams.keys())].sort();
    return `${u.origin}${path}${keys.length ? `?${keys.join('&')}` : ''}`;
  } catch {
    return url;
  }
}

/**
 * Structure-only fingerprint: survives text edits and new list items, changes when the set of
 * controls changes. Used for cache keys and "did this page really change" checks.
 */
export function pageSignature(url: string, elements: SnapshotElement[]): string {
  const shape = new Set<string>();
  for (const e of elements) {
    if (!e.interactive) continue;
    const named =
      e.role === 'textbox' || e.role === 'combobox' || e.role === 'searchbox' || e.role === 'checkbox';
    shape.add(named ? `${e.role}:${e.name.toLowerCase()}` : e.role);
  }
  return shortHash(`${urlPattern(url)}\n${[...shape].sort().join('\n')}`);
}

/**
 * How much of the page the DOM can explain: 1.0 for ordinary pages; canvas area, unlabelled
 * controls and bare SVG icons pull it down, and so does a page with almost no semantic nodes.
 * Below ~0.6 a screenshot is worth its tokens.
 */
export function domConfidence(frames: RawCollect[], interactive: number): number {
  let canvasArea = 0;
  let unlabelled = 0;
  let svgIcons = 0;
  let semantic = 0;
  for (const f of frames) {
    canvasArea += f.counts.canvasArea;
    unlabelled += f.counts.unlabelled;
    svgIcons += f.counts.svgIcons;
    semantic += f.counts.semantic;
  }
  const main = frames[0];
  const viewportArea = main ? Math.max(1, main.viewport.width * main.viewport.height) : 1;
  let score = 1;
  score -= 0.4 * Math.min(1, canvasArea / viewportArea);
  score -= 0.3 * (interactive > 0 ? unlabelled / interactive : 0);
  score -= 0.2 * (svgIcons / Math.max(1, svgIcons + interactive));
  if (semantic < 10) score -= 0.2;
  return Math.round(Math.max(0, Math.min(1, score)) * 100) / 100;
}
