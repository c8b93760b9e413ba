/**
 * The run's tamper-evident manifest, behind the small port runs uses. This file is a stand-in the lead
 * replaces with the store's manifest (lib/store/manifest.ts + manifest-store.ts) at merge: only
 * `sealManifest` and `verifyManifest` are called from runs.
 */
import { createHash } from 'node:crypto';
import { runEvidencePrefix } from '../store/keys.ts';
import type { EvidenceStore } from '../store/ports.ts';

export interface ManifestEntry {
  key: string;
  sha256: string;
}

export interface ManifestCheck {
  ok: boolean;
  entries: number;
  /** The first entry that no longer matches: edited, removed, reordered or added. */
  firstBad?: { index: number; key: string; problem: string };
}

const hex = (s: string | Uint8Array) => createHash('sha256').update(s).digest('hex');
const link = (prev: string, e: ManifestEntry) => hex(`${prev}\n${e.key}\n${e.sha256}`);
const manifestKey = (tenant: string, runId: string) => `${runEvidencePrefix(tenant, runId)}manifest.json`;

interface Stored {
  entries: (ManifestEntry & { hash: string })[];
  head: string;
}

/** Writes the chain over `entries` (in order) and returns its head, to be stored on the run. */
export async function sealManifest(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  entries: ManifestEntry[],
): Promise<string> {
  let prev = '';
  const chained = entries.map((e) => {
    prev = link(prev, e);
    return { ...e, hash: prev };
  });
  const stored: Stored = { entries: chained, head: prev };
  await evidence.put(manifestKey(tenant, runId), JSON.stringify(stored, null, 2), 'application/json');
  return prev;
}

/** Re-hashes every file and the chain; `head` is the one stored on the run. */
export async function verifyManifest(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  head: string | undefined,
): Promise<ManifestCheck> {
  const raw = await evidence.get(manifestKey(tenant, runId));
  if (!raw)
    return { ok: false, entries: 0, firstBad: { index: 0, key: 'manifest.json', problem: 'missing' } };
  const stored = JSON.parse(Buffer.from(raw).toString('utf8')) as Stored;
  let prev = '';
  for (const [index, e] of stored.entries.entries()) {
    prev = link(prev, e);
    if (prev !== e.hash)
      return { ok: false, entries: index, firstBad: { index, key: e.key, problem: 'chain broken' } };
    const body = await evidence.get(e.key);
    if (!body) return { ok: false, entries: index, firstBad: { index, key: e.key, problem: 'file removed' } };
    if (hex(body) !== e.sha256)
      return { ok: false, entries: index, firstBad: { index, key: e.key, problem: 'file edited' } };
  }
  if (head !== undefined && prev !== head)
    return {
      ok: false,
      entries: stored.entries.length,
      firstBad: { index: stored.entries.length, key: '(head)', problem: 'chain head differs from the run' },
    };
  return { ok: true, entries: stored.entries.length };
}
