/**
 * The one rule for names that arrive from callers and become storage keys or file paths: run, sample
 * and job ids, and the path of an evidence file. Every edge (HTTP API, CLI, queue messages) checks
 * them here, so an over-long id or a path that climbs, names a hidden file or carries a NUL byte is a
 * 400 naming the field instead of a file-system error deep inside a store (a 500).
 * Pure: no I/O.
 */

/** Ids: 1–128 letters, digits or `. _ - @ : +` (what `newRunId` and sample ids are made of). */
export const ID_RULE = /^[\w.@:+-]{1,128}$/;
export const ID_RULE_TEXT = '1–128 letters, digits or . _ - @ : + (no spaces or slashes)';

/** One evidence path segment as our writers make them (`safeFileName`, `keySegment`): never hidden. */
const SEGMENT_RULE = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]{0,254}$/;
const MAX_SEGMENTS = 16;

/** Why `value` is not an id (naming `field`), or undefined when it is one. */
export function idProblem(field: string, value: string): string | undefined {
  if (ID_RULE.test(value)) return undefined;
  const shown = value.length > 40 ? `${value.slice(0, 40)}… (${value.length} characters)` : value;
  // Control characters are shown as `?`: the message is echoed into JSON, logs and terminals.
  const printable = [...shown]
    .map((ch) => (ch.charCodeAt(0) < 32 || ch.charCodeAt(0) === 127 ? '?' : ch))
    .join('');
  return `${field}: "${printable}" must be ${ID_RULE_TEXT}`;
}

export type EvidencePath = { parts: string[] } | { problem: string };

/**
 * An evidence path as it appears in a URL (`samples/s1/01_start.png`, each segment percent-encoded
 * at most once): its decoded segments, or why it is refused. An encoded slash (`x%2f..%2fy`), a NUL
 * (`combined.csv%00.png`), `..`, a dot-file or a dot folder are all refused, never normalized away.
 */
export function parseEvidencePath(encoded: string): EvidencePath {
  const problem = (why: string) => ({ problem: `path: ${why}` });
  const raw = encoded.split('/');
  if (raw.length > MAX_SEGMENTS) return problem(`at most ${MAX_SEGMENTS} segments`);
  const parts: string[] = [];
  for (const segment of raw) {
    let part: string;
    try {
      part = decodeURIComponent(segment);
    } catch {
      return problem('not a valid percent-encoded path');
    }
    if (!SEGMENT_RULE.test(part))
      return problem(
        'a relative file path inside the run: segments of letters, digits and . _ ~ - (not starting with a dot), no encoded slashes',
      );
    parts.push(part);
  }
  return { parts };
}
