/**
 * The EvidenceStore a run's code writes through: every `put` lands in the run's hash-chained manifest
 * (lib/store/manifest-store.ts), in the part of one sample or, without `sampleId`, of the run itself.
 * Runs hands this to whatever slice implementation it binds (`SliceDeps.evidence`), so any agent's
 * screenshots, logs and downloads are covered without the agent knowing about the manifest.
 */
import { runEvidencePrefix } from '../store/keys.ts';
import { ManifestWriter } from '../store/manifest-store.ts';
import type { EvidenceStore } from '../store/ports.ts';

export function manifestedEvidence(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  sampleId?: string,
): EvidenceStore {
  const writer = new ManifestWriter(evidence, tenant, runId, sampleId);
  const runPrefix = runEvidencePrefix(tenant, runId);
  return {
    // Refuses keys outside this run (and the manifest's own files), naming the key.
    put: (key, body, contentType) => writer.put(key, body, contentType),
    get: (key) => evidence.get(key),
    list: (prefix) => evidence.list(prefix),
    delete: async (key) => {
      // Evidence is append-only: a deleted file would read as tampering at `verify`.
      if (key.startsWith(runPrefix))
        throw new Error(`evidence ${key} is part of run ${runId}'s manifest and cannot be deleted`);
      await evidence.delete(key);
    },
    ...(evidence.link ? { link: (key, seconds) => evidence.link!(key, seconds) } : {}),
  };
}
