/**
 * Tenant name → storage key segment (a directory name, a key prefix). The mapping is injective and
 * reversible, so two tenants never share storage, and it yields only `[A-Za-z0-9_~-]`, so a
 * segment can never climb (`..`), name the root (`.`), or split into two path components (`a/b`).
 * Every UTF-8 byte outside `[A-Za-z0-9_-]` becomes `~XX` (upper-case hex); `~` itself is escaped,
 * which is what keeps the mapping one-to-one.
 */
const KEPT = /^[A-Za-z0-9_-]$/;

export function tenantSegment(tenant: string): string {
  if (tenant.length === 0) throw new Error('tenant must not be empty');
  let out = '';
  for (const ch of tenant) {
    if (KEPT.test(ch)) {
      out += ch;
      continue;
    }
    for (const byte of Buffer.from(ch, 'utf8')) out += `~${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The inverse of `tenantSegment`; throws on anything `tenantSegment` cannot have produced. */
export function tenantFromSegment(segment: string): string {
  if (!/^(?:[A-Za-z0-9_-]|~[0-9A-F]{2})+$/.test(segment)) throw new Error(`not a tenant segment: ${segment}`);
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    if (segment[i] === '~') {
      bytes.push(Number.parseInt(segment.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(segment.charCodeAt(i));
  }
  const tenant = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes));
  if (tenantSegment(tenant) !== segment) throw new Error(`not a tenant segment: ${segment}`);
  return tenant;
}
