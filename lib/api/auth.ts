import { readFileSync } from 'node:fs';

/** API key → tenant id. */
export type KeyRing = Map<string, string>;

/**
 * Keys from `BROWSERFN_API_KEYS` (`key:tenant,key2:tenant2`; a bare key is its own tenant "default")
 * and/or a JSON file named by `BROWSERFN_API_KEYS_FILE` (`{ "key": "tenant" }`).
 */
export function keysFromEnv(env: NodeJS.ProcessEnv = process.env): KeyRing {
  const ring: KeyRing = new Map();
  for (const item of (env.BROWSERFN_API_KEYS ?? '').split(',')) {
    const entry = item.trim();
    if (!entry) continue;
    const at = entry.lastIndexOf(':');
    if (at > 0) ring.set(entry.slice(0, at), entry.slice(at + 1));
    else ring.set(entry, 'default');
  }
  if (env.BROWSERFN_API_KEYS_FILE) {
    const parsed = JSON.parse(readFileSync(env.BROWSERFN_API_KEYS_FILE, 'utf8')) as Record<string, unknown>;
    for (const [key, tenant] of Object.entries(parsed)) if (typeof tenant === 'string') ring.set(key, tenant);
  }
  return ring;
}

/** Tenant for an Authorization header, or undefined. Compares in constant time per key. */
export function tenantFor(ring: KeyRing, header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return m ? tenantForKey(ring, m[1]) : undefined;
}

/** Tenant for a bare key (the Stagehand SDK sends it as `x-bb-api-key`), or undefined. */
export function tenantForKey(ring: KeyRing, key: string | undefined): string | undefined {
  if (!key) return undefined;
  const given = Buffer.from(key);
  let found: string | undefined;
  for (const [known, tenant] of ring) {
    const k = Buffer.from(known);
    if (k.length === given.length && cryptoEqual(k, given)) found = tenant;
  }
  return found;
}

function cryptoEqual(a: Buffer, b: Buffer): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
