/**
 * File-system primitives the local adapters share: atomic replace (unique temp name, then rename),
 * write-once (temp file hard-linked into place, which fails if the target exists), and a lock file so
 * read-modify-write stays correct across processes (several local workers on one store).
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import pLimit from 'p-limit';

/**
 * Files the local stores keep open at once, for the whole process. Without a bound, one read of a
 * 10,000-sample run opened 10,000 files together and the server ran out of descriptors (EMFILE) for
 * every tenant. Each slot covers one open-use-close, never a wait for another slot, so nesting (a
 * read inside a lock) cannot deadlock.
 */
export const MAX_OPEN_STORE_FILES = 64;
const fileSlots = pLimit(MAX_OPEN_STORE_FILES);

/** Runs one file operation in a slot of the shared bound. */
export function inFileSlot<T>(operation: () => Promise<T>): Promise<T> {
  return fileSlots(operation);
}

/** Slots in use and operations waiting for one (for tests and the benchmark). */
export function fileSlotUse(): { active: number; pending: number } {
  return { active: fileSlots.activeCount, pending: fileSlots.pendingCount };
}

function tempName(target: string): string {
  return `${target}.${randomUUID()}.tmp`;
}

export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await inFileSlot(() => readFile(file, 'utf8'))) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Replaces `file` atomically: readers see the old or the new content, never half of one. */
export async function writeFileAtomic(file: string, body: Uint8Array | string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = tempName(file);
  await inFileSlot(() => writeFile(tmp, body));
  try {
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** Writes `file` only if it does not exist yet; false when it did (its content is left alone). */
export async function writeFileOnce(file: string, body: Uint8Array | string): Promise<boolean> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = tempName(file);
  await inFileSlot(() => writeFile(tmp, body));
  try {
    await link(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await rm(tmp, { force: true });
  }
}

const LOCK_STALE_MS = 10_000;

/** Runs `fn` holding `<file>.lock`; a lock older than 10 s is taken as left by a killed process. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  await mkdir(dirname(lock), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      await inFileSlot(async () => {
        const handle = await open(lock, 'wx');
        await handle.close();
      });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = await stat(lock).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > LOCK_STALE_MS) await rm(lock, { force: true });
      else await new Promise((r) => setTimeout(r, Math.min(2 + attempt, 25)));
    }
  }
  try {
    return await fn();
  } finally {
    await rm(lock, { force: true });
  }
}
