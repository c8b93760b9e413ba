/** Small numeric and text-table helpers for the benchmarks. */

export interface Summary {
  n: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
  mean: number;
}

/** Linear-interpolated percentile (p in 0..100) of unsorted samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const a = sorted[lo]!;
  const b = sorted[hi]!;
  return a + (b - a) * (rank - lo);
}

export function summarize(samples: readonly number[]): Summary {
  const n = samples.length;
  return {
    n,
    p50: round(percentile(samples, 50)),
    p95: round(percentile(samples, 95)),
    min: round(n ? Math.min(...samples) : Number.NaN),
    max: round(n ? Math.max(...samples) : Number.NaN),
    mean: round(n ? samples.reduce((s, x) => s + x, 0) / n : Number.NaN),
  };
}

/** One decimal for ms-sized figures; whole numbers stay whole. */
export const round = (x: number, digits = 1): number => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** a / b, or NaN when b is zero / missing. */
export const ratio = (a: number, b: number): number =>
  b > 0 && Number.isFinite(a) ? round(a / b, 2) : Number.NaN;

export const geomean = (xs: readonly number[]): number => {
  const ok = xs.filter((x) => Number.isFinite(x) && x > 0);
  if (ok.length === 0) return Number.NaN;
  return round(Math.exp(ok.reduce((s, x) => s + Math.log(x), 0) / ok.length), 2);
};

export const fmt = (x: number | string | undefined, digits = 1): string => {
  if (x === undefined) return '-';
  if (typeof x === 'string') return x;
  if (!Number.isFinite(x)) return '-';
  return Number.isInteger(x) ? x.toLocaleString('en-US') : x.toFixed(digits);
};

export const fmtRatio = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(2)}x` : '-');

export type Align = 'left' | 'right';

/** Renders rows as an aligned plain-text table (first column left, the rest right, unless told). */
export function renderTable(header: string[], rows: string[][], align?: Align[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (s: string, i: number) => {
    const a = align?.[i] ?? (i === 0 ? 'left' : 'right');
    return a === 'left' ? s.padEnd(widths[i]!) : s.padStart(widths[i]!);
  };
  const line = (r: string[]) =>
    r
      .map((c, i) => cell(c, i))
      .join('  ')
      .trimEnd();
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `fn`, returns its result and the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - t0 };
}
