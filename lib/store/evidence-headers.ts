/**
 * How run files are served: as data, never as a page of the API's origin. Evidence holds whatever the
 * visited pages sent (an HTML download, an SVG, a JSON that sniffs as HTML); a browser that rendered
 * it here would run its script with the API's origin. So every file but a screenshot is an
 * attachment, nothing is sniffed, and anything rendered anyway is a sandboxed, script-less document.
 * Pure: headers from a key.
 */

const TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  json: 'application/json',
  jsonl: 'application/x-ndjson',
  csv: 'text/csv; charset=utf-8',
  html: 'text/html; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/** Raster images the report and callers show inline; they carry no script. (SVG does: not here.) */
const INLINE = new Set(['png', 'jpg', 'jpeg']);

/** A sandboxed document with no scripts, plugins, forms or same-origin access. */
export const EVIDENCE_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'";

export function evidenceHeaders(key: string): Record<string, string> {
  const name = key.slice(key.lastIndexOf('/') + 1);
  const ext = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
  // Names reaching here passed the evidence path rule (letters, digits, . _ ~ -): safe in quotes.
  const quoted = name.replace(/[^A-Za-z0-9._~-]/g, '_');
  return {
    'content-type': TYPES[ext] ?? 'application/octet-stream',
    'content-disposition': `${INLINE.has(ext) ? 'inline' : 'attachment'}; filename="${quoted}"`,
    'x-content-type-options': 'nosniff',
    'content-security-policy': EVIDENCE_CSP,
    'cache-control': 'private, no-store',
  };
}
