/**
 * Where one page read's time goes, phase by phase, for bench:snapshot's first-read profile. Off
 * unless a sink is set: then no clock is read, so a read pays nothing for being measurable.
 *
 * Phases a read reports (ms): `driver` (wrapping the page), `evaluate` (the main frame's round trip,
 * walk included), `inPageInstall` / `inPageWalk` (as the page's own clock saw them), `parse` (the
 * payload's JSON.parse), `frames` (child frames stitched under their slots), `assemble`, `format`,
 * `select` (budget or chunk), `finish` (signature, hashes, confidence, redaction), `payloadChars`.
 */
export type PhaseSink = (phase: string, value: number) => void;

let sink: PhaseSink | undefined;

/** Sets (or clears, with undefined) where phase figures go. */
export function onReadPhase(next: PhaseSink | undefined): void {
  sink = next;
}

/** A start time, or 0 when nobody listens. */
export const phaseStart = (): number => (sink ? performance.now() : 0);

/** Reports the time since `t0` as `phase`; returns a new start time for the next phase. */
export function phaseEnd(phase: string, t0: number): number {
  if (!sink) return 0;
  const now = performance.now();
  sink(phase, now - t0);
  return now;
}

/** Reports a figure that is no duration (a size, a time the page measured). */
export function phaseFigure(phase: string, value: number): void {
  sink?.(phase, value);
}
