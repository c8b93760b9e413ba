/**
 * The tamper-evident evidence manifest as pure functions: a hash chain where each entry hashes the
 * previous entry's hash together with its own index, key, file SHA-256 and size. Editing a file,
 * removing it, editing or moving an entry, or truncating the chain each break it somewhere; the chain
 * head (last entry's hash) is stored with the run, so even a wholly rewritten manifest is caught.
 */
import { createHash } from 'node:crypto';

export interface ManifestFile {
  key: string;
  /** Hex SHA-256 of the file's bytes, computed when it was written. */
  sha256: string;
  bytes: number;
}

export interface ManifestEntry extends ManifestFile {
  /** Position in the chain, from 0. */
  index: number;
  /** Hash of the entry before (GENESIS for the first). */
  prev: string;
  /** SHA-256 over prev, index, key, sha256 and bytes. */
  hash: string;
}

/** The `prev` of the first entry, and the head of an empty chain. */
export const GENESIS = '0'.repeat(64);

const HEX64 = /^[0-9a-f]{64}$/;

export function entryHash(prev: string, file: ManifestFile, index: number): string {
  // Fields joined by newlines, which no key, hex digest or number contains: no two inputs collide.
  return createHash('sha256')
    .update(
      ['browserfn-manifest-v1', prev, String(index), file.key, file.sha256, String(file.bytes)].join('\n'),
    )
    .digest('hex');
}

export function chainHead(chain: readonly ManifestEntry[]): string {
  return chain.at(-1)?.hash ?? GENESIS;
}

/** The entry that follows `chain` for `file` (the caller appends it). */
export function appendEntry(chain: readonly ManifestEntry[], file: ManifestFile): ManifestEntry {
  if (!file.key) throw new Error('manifest entry needs a key');
  if (!HEX64.test(file.sha256)) throw new Error(`manifest entry ${file.key}: sha256 must be 64 hex digits`);
  if (!Number.isInteger(file.bytes) || file.bytes < 0) {
    throw new Error(`manifest entry ${file.key}: bytes must be a whole number ≥ 0`);
  }
  const prev = chainHead(chain);
  const index = chain.length;
  return {
    index,
    key: file.key,
    sha256: file.sha256,
    bytes: file.bytes,
    prev,
    hash: entryHash(prev, file, index),
  };
}

/** Builds a whole chain from files in order. */
export function buildChain(files: readonly ManifestFile[]): ManifestEntry[] {
  const chain: ManifestEntry[] = [];
  for (const file of files) chain.push(appendEntry(chain, file));
  return chain;
}

export type ManifestProblemKind = 'edited' | 'removed' | 'reordered' | 'added' | 'head';

export interface ManifestProblem {
  kind: ManifestProblemKind;
  /** The first entry that no longer matches (absent for `added` and `head`). */
  index?: number;
  key?: string;
  /**
   * `file` when the evidence changed, `manifest` when the manifest itself did, `result` when a result
   * in the run store no longer matches the one sealed into the chain (lib/runs/verify-run.ts).
   */
  where: 'file' | 'manifest' | 'result';
  message: string;
}

export interface ChainReport {
  ok: boolean;
  entries: number;
  /** Head computed from the entries as they are now. */
  head: string;
  /** The first problem, in chain order (as `problems[0]`). */
  problem?: ManifestProblem;
  /** Every problem found, one per entry or file, in chain order then added files by name. */
  problems?: ManifestProblem[];
}

/** What is wrong with entry `i` itself given the hash before it: a broken link or a changed entry. */
function linkProblem(
  entries: readonly ManifestEntry[],
  i: number,
  prev: string,
): ManifestProblem | undefined {
  const entry = entries[i] as ManifestEntry;
  const at = { index: i, key: entry.key };
  if (entry.index !== i || entry.prev !== prev) {
    // Entries skipped ahead and the one written at this place is nowhere later: it was taken out.
    if (entry.index > i && !entries.slice(i + 1).some((e) => e.index === i)) {
      return {
        ...at,
        kind: 'removed',
        where: 'manifest',
        message: `manifest entries ${i}–${entry.index - 1} are missing before ${entry.key} (entry ${i})`,
      };
    }
    return {
      ...at,
      kind: 'reordered',
      where: 'manifest',
      message: `entry ${i} (${entry.key}) is out of order: it was written as entry ${entry.index} after another entry`,
    };
  }
  if (entryHash(prev, entry, i) !== entry.hash) {
    return {
      ...at,
      kind: 'edited',
      where: 'manifest',
      message: `entry ${i} (${entry.key}) was changed after it was written`,
    };
  }
  return undefined;
}

/** The first broken link or changed entry of a chain, without looking at the files. */
export function chainProblem(entries: readonly ManifestEntry[]): ManifestProblem | undefined {
  let prev = GENESIS;
  for (const [i, entry] of entries.entries()) {
    const broken = linkProblem(entries, i, prev);
    if (broken) return broken;
    prev = entry.hash;
  }
  return undefined;
}

/**
 * Checks `entries` against the files as they are now (`current`: key → fresh SHA-256 of every file
 * under the run, manifests excluded) and the head stored with the run. Names EVERY problem, one per
 * entry or file, in chain order: a broken link (reordered, or entries removed from the manifest), an
 * entry changed after it was written, a file that is missing or whose bytes changed; then a head that
 * differs from the stored one (truncated or rewritten manifest; only when no entry is broken, as a
 * broken entry already explains it); then each file that no entry names (added). `problem` is the
 * first of them. A key written more than once is checked against its last entry: a rewrite supersedes.
 */
export function verifyChain(
  entries: readonly ManifestEntry[],
  current: ReadonlyMap<string, string>,
  expectedHead?: string,
): ChainReport {
  const lastIndexOf = new Map<string, number>();
  for (const [i, e] of entries.entries()) lastIndexOf.set(e.key, i);
  const problems: ManifestProblem[] = [];

  let prev = GENESIS;
  for (const [i, entry] of entries.entries()) {
    const at = { index: i, key: entry.key };
    const broken = linkProblem(entries, i, prev);
    // Go on from the entry's own hash: the next entry is judged by its own link, not by this one's.
    prev = entry.hash;
    if (broken) {
      problems.push(broken);
      continue;
    }
    if (lastIndexOf.get(entry.key) !== i) continue;
    const now = current.get(entry.key);
    if (now === undefined)
      problems.push({
        ...at,
        kind: 'removed',
        where: 'file',
        message: `${entry.key} (entry ${i}) is missing`,
      });
    else if (now !== entry.sha256)
      problems.push({
        ...at,
        kind: 'edited',
        where: 'file',
        message: `${entry.key} (entry ${i}) was edited: its SHA-256 is ${now}, the manifest says ${entry.sha256}`,
      });
  }
  const brokenEntries = problems.some((p) => p.where === 'manifest');
  if (expectedHead !== undefined && prev !== expectedHead && !brokenEntries)
    problems.push({
      kind: 'head',
      where: 'manifest',
      message: `the manifest ends at ${prev} but the run recorded ${expectedHead}: entries were removed or rewritten`,
    });
  for (const key of [...current.keys()].filter((k) => !lastIndexOf.has(k)).sort())
    problems.push({ kind: 'added', key, where: 'file', message: `${key} is not in the manifest` });
  return problems.length > 0
    ? { ok: false, entries: entries.length, head: chainHead(entries), problem: problems[0], problems }
    : { ok: true, entries: entries.length, head: prev };
}

/** One JSON object per line. */
export function formatManifest(entries: readonly ManifestEntry[]): string {
  return entries
    .map((e) =>
      JSON.stringify({
        index: e.index,
        key: e.key,
        sha256: e.sha256,
        bytes: e.bytes,
        prev: e.prev,
        hash: e.hash,
      }),
    )
    .map((line) => `${line}\n`)
    .join('');
}

/** Parses a manifest; a line that is not a well-formed entry is an error naming the line. */
export function parseManifest(text: string, name = 'manifest'): ManifestEntry[] {
  const entries: ManifestEntry[] = [];
  for (const [n, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`${name} line ${n + 1} is not JSON`);
    }
    const e = value as Partial<ManifestEntry>;
    if (
      typeof e !== 'object' ||
      e === null ||
      typeof e.key !== 'string' ||
      typeof e.sha256 !== 'string' ||
      typeof e.bytes !== 'number' ||
      typeof e.index !== 'number' ||
      typeof e.prev !== 'string' ||
      typeof e.hash !== 'string'
    ) {
      throw new Error(
        `${name} line ${n + 1} is not a manifest entry (index, key, sha256, bytes, prev, hash)`,
      );
    }
    entries.push({
      index: e.index,
      key: e.key,
      sha256: e.sha256,
      bytes: e.bytes,
      prev: e.prev,
      hash: e.hash,
    });
  }
  return entries;
}
