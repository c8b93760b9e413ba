/** `EvidenceStore` on local files under one root (default `evidence/`); keys map to relative paths. */
import { createHash } from 'node:crypto';
import type { Dirent } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { writeFileAtomic } from './local-files.ts';
import type { EvidenceObject, EvidenceStore } from './ports.ts';

/** Keys are `/`-joined segments; none may be empty, `.`, `..` or hidden. */
export function checkEvidenceKey(key: string): string[] {
  const parts = key.split('/');
  if (parts.some((p) => p.length === 0 || p.startsWith('.') || p.includes('\\'))) {
    throw new Error(`evidence key "${key}" must be relative path segments without dots at their start`);
  }
  return parts;
}

export function sha256Hex(body: Uint8Array | string): string {
  return createHash('sha256').update(body).digest('hex');
}

export class LocalEvidenceStore implements EvidenceStore {
  constructor(readonly root: string) {}

  /** Where a key lives on disk (for the CLI to print paths a user can open). */
  pathOf(key: string): string {
    return join(this.root, ...checkEvidenceKey(key));
  }

  async put(key: string, body: Uint8Array | string): Promise<EvidenceObject> {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    await writeFileAtomic(this.pathOf(key), bytes);
    return { key, sha256: sha256Hex(bytes), bytes: bytes.byteLength };
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.pathOf(key)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    // Read only the folder the prefix names; a partial last segment filters its entries.
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const dir = folder ? join(this.root, ...checkEvidenceKey(folder.slice(0, -1))) : this.root;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { recursive: true, withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    return entries
      .filter((e) => e.isFile() && !e.name.endsWith('.tmp'))
      .map((e) => relative(this.root, join(e.parentPath, e.name)).split(sep).join('/'))
      .filter((k) => k.startsWith(prefix) && !k.split('/').some((p) => p.startsWith('.')))
      .sort();
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true });
  }
}
