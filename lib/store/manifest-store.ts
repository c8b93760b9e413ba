/**
 * The manifest on an `EvidenceStore` (imperative shell around manifest.ts).
 *
 * Design: per-sample manifest parts, merged into one chain when the run is sealed.
 *   `<tenant>/run_<id>/manifest/parts/sample_<sampleId>.jsonl`   one chain per sample
 *   `<tenant>/run_<id>/manifest/parts/run.jsonl`                 files the run itself writes (merge)
 *   `<tenant>/run_<id>/manifest.jsonl`                           the sealed chain (samples by id, run last)
 * Why parts: samples run in parallel on many machines, and neither S3 (as emulated) nor local files
 * give a portable compare-and-set on one shared object; a single manifest would lose appends under
 * concurrency. A sample's slices run one after another, so each part has one writer at a time
 * (appends inside one process are also serialized here). Sealing reads the parts, checks their links,
 * and re-chains every entry in a fixed order; the same parts always seal to the same head, so a
 * retried merge is harmless.
 * A file is put before its entry is appended: a crash in between leaves a file the manifest does not
 * name (reported as `added`) until the retried slice writes the same key again.
 */
import { createHash } from 'node:crypto';
import { keySegment, runEvidencePrefix } from './keys.ts';
import {
  appendEntry,
  buildChain,
  type ChainReport,
  chainHead,
  chainProblem,
  formatManifest,
  type ManifestEntry,
  type ManifestFile,
  parseManifest,
  verifyChain,
} from './manifest.ts';
import type { EvidenceObject, EvidenceStore } from './ports.ts';

export const manifestKey = (tenant: string, runId: string) =>
  `${runEvidencePrefix(tenant, runId)}manifest.jsonl`;
const partsPrefix = (tenant: string, runId: string) => `${runEvidencePrefix(tenant, runId)}manifest/parts/`;
const RUN_PART = 'run.jsonl';
const samplePart = (sampleId: string) => `sample_${keySegment(sampleId)}.jsonl`;

/** Keys that are the manifest itself, not evidence it covers. */
function isManifestKey(key: string, tenant: string, runId: string): boolean {
  return key === manifestKey(tenant, runId) || key.startsWith(`${runEvidencePrefix(tenant, runId)}manifest/`);
}

/**
 * The manifest's own files as `verify` accepts them: the sealed chain and parts named as we name
 * them. Anything else in the manifest folder (a `.tmp`, a stray file) is reported like any added file.
 */
function isManifestFile(key: string, tenant: string, runId: string): boolean {
  if (key === manifestKey(tenant, runId)) return true;
  const name = key.startsWith(partsPrefix(tenant, runId)) ? key.slice(partsPrefix(tenant, runId).length) : '';
  return name === RUN_PART || /^sample_[A-Za-z0-9_~-]+\.jsonl$/.test(name);
}

// Appends to one part from one process happen one at a time (e.g. a screenshot and an action log
// written together by the same sample).
const queues = new WeakMap<EvidenceStore, Map<string, Promise<unknown>>>();

function serialized<T>(store: EvidenceStore, key: string, fn: () => Promise<T>): Promise<T> {
  const perStore = queues.get(store) ?? new Map<string, Promise<unknown>>();
  queues.set(store, perStore);
  const before = perStore.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const settled = run.catch(() => undefined);
  perStore.set(key, settled);
  void settled.then(() => {
    if (perStore.get(key) === settled) perStore.delete(key);
  });
  return run;
}

async function readChain(evidence: EvidenceStore, key: string): Promise<ManifestEntry[] | undefined> {
  const bytes = await evidence.get(key);
  return bytes === undefined ? undefined : parseManifest(Buffer.from(bytes).toString('utf8'), key);
}

/**
 * Writes a run's evidence and records each file in the manifest part of a sample (or of the run itself
 * when `sampleId` is omitted). Every file a run stores under `run_<id>/` must go through here, or
 * `verifyRun` reports it as added.
 */
export class ManifestWriter {
  private readonly partKey: string;

  constructor(
    private readonly evidence: EvidenceStore,
    readonly tenant: string,
    readonly runId: string,
    readonly sampleId?: string,
  ) {
    this.partKey = partsPrefix(tenant, runId) + (sampleId === undefined ? RUN_PART : samplePart(sampleId));
  }

  /** Puts the file, then appends its hash to the manifest part. */
  async put(key: string, body: Uint8Array | string, contentType?: string): Promise<EvidenceObject> {
    if (
      !key.startsWith(runEvidencePrefix(this.tenant, this.runId)) ||
      isManifestKey(key, this.tenant, this.runId)
    ) {
      throw new Error(`evidence key ${key} is not a file of run ${this.runId}`);
    }
    const stored = await this.evidence.put(key, body, contentType);
    await this.record(stored);
    return stored;
  }

  /** Appends a file already stored (with the hash computed when it was written). */
  record(file: ManifestFile): Promise<ManifestEntry> {
    return serialized(this.evidence, this.partKey, async () => {
      // Read every time (one GET): another writer object in this process, or a retried slice on
      // another machine, may have appended since; a cached copy would overwrite its entries.
      const chain = (await readChain(this.evidence, this.partKey)) ?? [];
      const entry = appendEntry(chain, file);
      await this.evidence.put(this.partKey, formatManifest([...chain, entry]), 'application/x-ndjson');
      return entry;
    });
  }
}

export interface SealedManifest {
  key: string;
  head: string;
  entries: number;
}

/** The temp name a file write uses until its rename (`<key>.<uuid>.tmp`, local-files.ts). */
const TEMP_WRITE = /\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.tmp$/;

/**
 * A process killed in the middle of writing a file leaves its temp file behind, and a resumed run
 * writes that file again under a new temp name. The run is sealed only when every sample is done, so
 * no writer of this run is alive: what is left under a temp name is an unfinished write, never
 * evidence, and would otherwise fail every later verify as a file the manifest does not know.
 */
async function sweepDeadWrites(evidence: EvidenceStore, tenant: string, runId: string): Promise<void> {
  if (!evidence.inventory) return;
  for (const entry of await evidence.inventory(runEvidencePrefix(tenant, runId)))
    if (entry.regular && TEMP_WRITE.test(entry.key)) await evidence.delete(entry.key);
}

/**
 * Merges the parts into `manifest.jsonl` (samples in id order, then the run's own files) and returns
 * the head to store with the run (`RunStore.updateRun(..., { manifestHead })`). A part whose own chain
 * is broken stops the seal: it was changed before the run ended.
 */
export async function sealManifest(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
): Promise<SealedManifest> {
  await sweepDeadWrites(evidence, tenant, runId);
  const prefix = partsPrefix(tenant, runId);
  const keys = await evidence.list(prefix);
  const names = keys.map((k) => k.slice(prefix.length));
  const ordered = [...names.filter((n) => n !== RUN_PART).sort(), ...names.filter((n) => n === RUN_PART)];
  const files: ManifestFile[] = [];
  for (const name of ordered) {
    const chain = (await readChain(evidence, prefix + name)) ?? [];
    const problem = chainProblem(chain);
    if (problem) throw new Error(`manifest part ${prefix + name}: ${problem.message}`);
    files.push(...chain.map(({ key, sha256, bytes }) => ({ key, sha256, bytes })));
  }
  const chain = buildChain(files);
  const key = manifestKey(tenant, runId);
  await evidence.put(key, formatManifest(chain), 'application/x-ndjson');
  return { key, head: chainHead(chain), entries: chain.length };
}

export interface RunVerification extends ChainReport {
  /** Files re-hashed (every file under the run except the manifests). */
  files: number;
}

const HASH_CONCURRENCY = 8;

/**
 * Re-hashes every file of the run and checks them against the sealed manifest and the head stored
 * with the run (`RunRecord.manifestHead`; without it, a rewritten manifest cannot be told apart).
 */
export async function verifyRun(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  head?: string,
): Promise<RunVerification> {
  const key = manifestKey(tenant, runId);
  const entries = await readChain(evidence, key);
  // Everything stored, not only what `list` shows: temp names, dot folders and links are reported too.
  const prefix = runEvidencePrefix(tenant, runId);
  const stored = evidence.inventory
    ? await evidence.inventory(prefix)
    : (await evidence.list(prefix)).map((k) => ({ key: k, regular: true }));
  const others = stored.filter((e) => !isManifestFile(e.key, tenant, runId));
  const strange = others.find((e) => !e.regular);
  if (strange)
    return {
      ok: false,
      entries: entries?.length ?? 0,
      head: entries ? chainHead(entries) : '',
      files: others.length,
      problem: {
        kind: 'added',
        key: strange.key,
        where: 'file',
        message: `${strange.key} is not a regular file (a link or a special file): evidence never is`,
      },
    };
  const keys = others.map((e) => e.key);
  if (!entries) {
    return {
      ok: false,
      entries: 0,
      head: '',
      files: keys.length,
      problem: {
        kind: 'removed',
        key,
        where: 'manifest',
        message: `${key} is missing: the run was not sealed`,
      },
    };
  }
  const current = new Map<string, string>();
  const known = new Set(entries.map((e) => e.key));
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const k = keys[next++] as string;
      // A file the manifest does not know is reported as added whatever it holds (a hidden name
      // cannot even be read through the store's API); no need to hash it.
      if (!known.has(k)) {
        current.set(k, 'not in the manifest');
        continue;
      }
      const bytes = await evidence.get(k);
      // Listed but gone by now: leave it out, so the chain reports it as removed.
      if (bytes !== undefined) current.set(k, createHash('sha256').update(bytes).digest('hex'));
    }
  };
  await Promise.all(Array.from({ length: Math.min(HASH_CONCURRENCY, keys.length) }, worker));
  return { ...verifyChain(entries, current, head), files: current.size };
}
