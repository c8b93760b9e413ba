/**
 * How names from callers (tenants, run ids, sample ids, file names) become storage keys. Tenant and id
 * segments are escaped injectively, so `a/b`, `a_b` and `a b` stay three different keys, and no segment
 * can climb (`..`) or name the root (`.`): a dot is escaped like every other byte outside [A-Za-z0-9_-].
 */

const PLAIN = /^[A-Za-z0-9_-]$/;
// TextEncoder, not Buffer: the edge worker keys its action cache by tenant with this too.
const utf8 = new TextEncoder();

/** Reversible escape of one key segment: plain bytes kept, every other UTF-8 byte as `~XX`. */
export function keySegment(value: string): string {
  if (value.length === 0) throw new Error('a storage key segment cannot be empty');
  let out = '';
  for (const char of value) {
    if (PLAIN.test(char)) {
      out += char;
      continue;
    }
    for (const byte of utf8.encode(char)) out += `~${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Inverse of `keySegment`; throws on anything `keySegment` cannot have produced. */
export function fromKeySegment(segment: string): string {
  if (!/^(?:[A-Za-z0-9_-]|~[0-9A-F]{2})+$/.test(segment)) throw new Error(`not a key segment: ${segment}`);
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === '~') {
      bytes.push(Number.parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(segment.charCodeAt(i));
  }
  const value = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  if (keySegment(value) !== segment) throw new Error(`not a key segment: ${segment}`);
  return value;
}

/**
 * A file name we write ourselves (`03_checkout.png`, a download's suggested name): readable, one path
 * component, never hidden, never `..`. Not injective — names are made unique by their step prefix.
 */
export function safeFileName(name: string, fallback = 'file'): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    .normalize('NFKC')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .slice(0, 120);
  return cleaned.length > 0 ? cleaned : fallback;
}

/** Evidence key of a run's file: `<tenant>/run_<runId>/<...path>`; path parts are made safe file names. */
export function evidenceKey(tenant: string, runId: string, ...path: string[]): string {
  return [keySegment(tenant), `run_${keySegment(runId)}`, ...path.map((p) => safeFileName(p))].join('/');
}

/** Key prefix of everything a run wrote (with the trailing slash). */
export function runEvidencePrefix(tenant: string, runId: string): string {
  return `${keySegment(tenant)}/run_${keySegment(runId)}/`;
}

/** Evidence key of one sample's file: `<tenant>/run_<runId>/samples/<sampleId>/<file>`. */
export function sampleEvidenceKey(tenant: string, runId: string, sampleId: string, file: string): string {
  return `${runEvidencePrefix(tenant, runId)}samples/${keySegment(sampleId)}/${safeFileName(file)}`;
}
