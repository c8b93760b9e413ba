/**
 * Tenant name → storage key segment (a directory name, a key prefix): the injective, reversible escape
 * of keys.ts, so two tenants never share storage and a segment can never climb (`..`), name the root
 * (`.`) or split into two path components (`a/b`).
 */
import { fromKeySegment, keySegment } from './keys.ts';

export function tenantSegment(tenant: string): string {
  if (tenant.length === 0) throw new Error('tenant must not be empty');
  return keySegment(tenant);
}

/** The inverse of `tenantSegment`; throws on anything `tenantSegment` cannot have produced. */
export function tenantFromSegment(segment: string): string {
  return fromKeySegment(segment);
}
