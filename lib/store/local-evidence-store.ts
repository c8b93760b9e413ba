/**
 * `EvidenceStore` on local files under one root (default `evidence/`); keys map to relative paths.
 * Only regular files are evidence: a symbolic link (to a file or a folder on the way) is never
 * followed, so a link planted in a run's folder cannot serve a file from elsewhere on the disk.
 */
import { createHash } from 'node:crypto';
import { constants, type Dirent } from 'node:fs';
import { open, readdir, realpath, rm } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { inFileSlot, writeFileAtomic } from './local-files.ts';
import type { EvidenceEntry, EvidenceObject, EvidenceStore } from './ports.ts';

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
  /** The root with its own links resolved (it may itself sit under one, e.g. /tmp on macOS). */
  private realRoot: string | undefined;

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

  /** A regular file at exactly its key's path, or undefined: links anywhere on the way read as absent. */
  get(key: string): Promise<Uint8Array | undefined> {
    // In a slot of the shared file bound: a burst of downloads cannot exhaust the descriptors either.
    return inFileSlot(() => this.read(key));
  }

  private async read(key: string): Promise<Uint8Array | undefined> {
    const path = this.pathOf(key);
    try {
      // O_NOFOLLOW refuses a link as the last part; the real path catches a linked folder on the way.
      const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        if (!(await handle.stat()).isFile()) return undefined;
        this.realRoot ??= await realpath(this.root);
        if ((await realpath(path)) !== join(this.realRoot, ...checkEvidenceKey(key))) return undefined;
        return new Uint8Array(await handle.readFile());
      } finally {
        await handle.close();
      }
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR' || code === 'EISDIR') return undefined;
      throw err;
    }
  }

  /**
   * Everything under the prefix as it lies on disk, hidden and temporary names included, each marked
   * as a regular file or not (for `verify`: whatever the manifest does not know is reported).
   */
  async inventory(prefix: string): Promise<EvidenceEntry[]> {
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
      .filter((e) => !e.isDirectory())
      .map((e) => ({
        key: relative(this.root, join(e.parentPath, e.name)).split(sep).join('/'),
        regular: e.isFile(),
      }))
      .filter((e) => e.key.startsWith(prefix))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
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
