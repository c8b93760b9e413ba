/**
 * API keys and the tenants they stand for: parsing, checking and matching, with web APIs only (the
 * Node server and the edge worker read the same BROWSERFN_API_KEYS the same way).
 */
const utf8 = new TextEncoder();

/** API key → tenant id. */
export type KeyRing = Map<string, string>;

/** A keys configuration the server must not start with. One line; never contains a key. */
export class KeyConfigError extends Error {
  override name = 'KeyConfigError';
}

/** A tenant becomes a storage key segment of up to 3 characters per byte; keep it under a file name's 255. */
const MAX_TENANT_BYTES = 64;

export type Entry = { key: string; tenant: string; where: string };

function checkEntry(e: Entry): void {
  if (!e.key) throw new KeyConfigError(`${e.where}: empty API key`);
  // The Authorization header parser takes one run of non-space characters: such a key could never match.
  if (/\s/.test(e.key)) throw new KeyConfigError(`${e.where}: API key contains whitespace`);
  if (!e.tenant) throw new KeyConfigError(`${e.where}: empty tenant`);
  if (utf8.encode(e.tenant).byteLength > MAX_TENANT_BYTES)
    throw new KeyConfigError(`${e.where}: tenant longer than ${MAX_TENANT_BYTES} bytes`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we refuse
  if (/[\u0000-\u001f\u007f]/.test(e.tenant))
    throw new KeyConfigError(`${e.where}: tenant contains a control character`);
}

export function fromList(list: string): Entry[] {
  const entries: Entry[] = [];
  list.split(',').forEach((item, i) => {
    const entry = item.trim();
    if (!entry) return;
    const where = `BROWSERFN_API_KEYS entry ${i + 1}`;
    const at = entry.lastIndexOf(':');
    if (at === -1) entries.push({ key: entry, tenant: 'default', where });
    else entries.push({ key: entry.slice(0, at).trim(), tenant: entry.slice(at + 1).trim(), where });
  });
  return entries;
}

/**
 * A ring from entries, checked whole: a bad entry is a one-line KeyConfigError (never naming a
 * key) rather than a puzzling 401 or a shared cache later.
 */
export function ringOf(entries: Entry[]): KeyRing {
  const ring: KeyRing = new Map();
  const seen = new Map<string, string>();
  for (const e of entries) {
    checkEntry(e);
    const first = seen.get(e.key);
    // One key, two tenants: which tenant a caller gets would depend on order. Name places, never the key.
    if (first) throw new KeyConfigError(`${e.where}: same API key as ${first}`);
    seen.set(e.key, e.where);
    ring.set(e.key, e.tenant);
  }
  return ring;
}

/** `key:tenant,key2:tenant2` as `BROWSERFN_API_KEYS` holds it (a bare key is tenant "default"). */
export function keysFromList(list: string | undefined): KeyRing {
  return ringOf(fromList(list ?? ''));
}

/** The same checks for a ring built in code (tests, embedders), so no path starts a server with a bad one. */
export function assertKeyRing(ring: KeyRing): void {
  let i = 0;
  for (const [key, tenant] of ring) checkEntry({ key, tenant, where: `API key ${++i}` });
}

/** Tenant for an Authorization header, or undefined. Compares in constant time per key. */
export function tenantFor(ring: KeyRing, header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return m ? tenantForKey(ring, m[1]) : undefined;
}

/** Tenant for a bare key (the Stagehand SDK sends it as `x-bb-api-key`), or undefined. */
export function tenantForKey(ring: KeyRing, key: string | undefined): string | undefined {
  if (!key) return undefined;
  const given = utf8.encode(key);
  let found: string | undefined;
  for (const [known, tenant] of ring) {
    const k = utf8.encode(known);
    if (k.length === given.length && cryptoEqual(k, given)) found = tenant;
  }
  return found;
}

function cryptoEqual(a: Uint8Array, b: Uint8Array): boolean {
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}
