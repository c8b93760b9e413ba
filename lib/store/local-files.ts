/**
 * File-system primitives the local adapters share: atomic replace (unique temp name, then rename),
 * write-once (temp file hard-linked into place, which fails if the target exists), and a lock file so
 * read-modify-write stays correct across processes (several local workers on one store).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
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

/**
 * Reads and parses a JSON file now, in one synchronous call; undefined when it does not exist.
 * Why not the promise API: the store's files are small (a run, a sample, its progress) and on local
 * disk. `fs/promises.readFile` makes five thread-pool round trips per file (open, stat, read, read,
 * close), and under load each one waits its turn behind every other tenant's callbacks: one tenant
 * polling a 10,000-sample run made another tenant's one-file status read ~10 times slower, and the
 * promise machinery cost ~5 times the CPU of the read itself. One call holds one descriptor for
 * microseconds, so it needs no slot of the shared bound. Loops over many files yield between chunks
 * (`readJsonFiles`).
 */
export function readJsonFileNow<T>(file: string): T | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as T;
}

export async function readJsonFile<T>(file: string): Promise<T | undefined> {
  return readJsonFileNow<T>(file);
}

/** Files read between two turns of the event loop by `readJsonFiles` (~1 ms of blocking at most). */
const FILES_PER_TURN = 32;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Reads many JSON files in order (missing ones left out), a chunk at a time with a turn of the event
 * loop between chunks, so a listing of a big run lets every other request in every millisecond or so.
 */
export async function readJsonFiles<T>(files: readonly string[]): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < files.length; i += FILES_PER_TURN) {
    if (i > 0) await nextTurn();
    for (const file of files.slice(i, i + FILES_PER_TURN)) {
      const item = readJsonFileNow<T>(file);
      if (item !== undefined) out.push(item);
    }
  }
  return out;
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
