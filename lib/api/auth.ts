import { readFileSync } from 'node:fs';
import { type Entry, fromList, KeyConfigError, type KeyRing, ringOf } from './key-ring.ts';

export {
  assertKeyRing,
  KeyConfigError,
  type KeyRing,
  keysFromList,
  tenantFor,
  tenantForKey,
} from './key-ring.ts';

function fromFile(path: string): Entry[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new KeyConfigError(
      `BROWSERFN_API_KEYS_FILE ${path}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new KeyConfigError(
      `BROWSERFN_API_KEYS_FILE ${path}: not valid JSON (expected { "key": "tenant" })`,
    );
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new KeyConfigError(`BROWSERFN_API_KEYS_FILE ${path}: expected a JSON object { "key": "tenant" }`);
  return Object.entries(parsed).map(([key, tenant], i) => {
    const where = `BROWSERFN_API_KEYS_FILE ${path} entry ${i + 1}`;
    if (typeof tenant !== 'string') throw new KeyConfigError(`${where}: tenant must be a string`);
    return { key, tenant, where };
  });
}

/**
 * Keys from `BROWSERFN_API_KEYS` (`key:tenant,key2:tenant2`; a bare key is its own tenant "default")
 * and/or a JSON file named by `BROWSERFN_API_KEYS_FILE` (`{ "key": "tenant" }`). Checked whole at
 * start-up: a bad entry stops the server with a one-line KeyConfigError rather than surfacing later
 * as a puzzling 401 or a shared cache.
 */
export function keysFromEnv(env: NodeJS.ProcessEnv = process.env): KeyRing {
  const entries = fromList(env.BROWSERFN_API_KEYS ?? '');
  if (env.BROWSERFN_API_KEYS_FILE) entries.push(...fromFile(env.BROWSERFN_API_KEYS_FILE));
  return ringOf(entries);
}
