/**
 * Stored results checked against the copy the merge sealed, on every read (`/results`, the report):
 * the merge writes `results.json` into the run's manifest chain, so each result's hash is covered by
 * the chain head kept with the run. A result edited in the run store afterwards no longer matches its
 * sealed copy, and is marked `tampered` with the reason instead of being shown as good. (`verify`
 * checks the same and every evidence file too; this is the part every reader gets for free.)
 */
import { createHash } from 'node:crypto';
import { evidenceKey } from '../store/keys.ts';
import { chainHead, chainProblem, parseManifest } from '../store/manifest.ts';
import { manifestKey } from '../store/manifest-store.ts';
import type { EvidenceStore, Json, ResultRecord, RunRecord } from '../store/ports.ts';
import { canonicalJson } from './verify-run.ts';

/** Each sealed result's digest by sample id, or why the sealed copy itself cannot be trusted. */
export type ResultSeals = { bySample: Map<string, string> } | { broken: string };

/** A result as served: `tampered` and the reason when it is not what the merge sealed. */
export type CheckedResult = ResultRecord & { tampered?: true; tamperReason?: string };

const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
const digestOf = (r: ResultRecord) => sha256(canonicalJson(r as unknown as Json));

/** Marks each stored result that differs from its sealed copy (pure). No seals yet: nothing to mark. */
export function checkResults(
  results: readonly ResultRecord[],
  seals: ResultSeals | undefined,
  run: Pick<RunRecord, 'status'>,
): CheckedResult[] {
  if (!seals) return [...results];
  if ('broken' in seals)
    return results.map((r) => ({
      ...r,
      tampered: true,
      tamperReason: `the sealed results cannot be trusted: ${seals.broken}`,
    }));
  // A resumed run writes new results until its next merge seals them; once it has ended, none may be new.
  const open = run.status === 'queued' || run.status === 'running' || run.status === 'merging';
  return results.map((r) => {
    const sealed = seals.bySample.get(r.sampleId);
    if (sealed === undefined)
      return open
        ? r
        : {
            ...r,
            tampered: true,
            tamperReason: "not among the results the run's merge sealed: added after it",
          };
    if (sealed !== digestOf(r))
      return {
        ...r,
        tampered: true,
        tamperReason:
          "differs from the result the run's merge sealed (results.json, in the manifest chain): edited after it",
      };
    return r;
  });
}

async function readSeals(evidence: EvidenceStore, run: RunRecord, head: string): Promise<ResultSeals> {
  const mKey = manifestKey(run.tenant, run.runId);
  const manifest = await evidence.get(mKey);
  if (!manifest) return { broken: `${mKey} is missing` };
  let entries: ReturnType<typeof parseManifest>;
  try {
    entries = parseManifest(Buffer.from(manifest).toString('utf8'), mKey);
  } catch (err) {
    return { broken: (err as Error).message };
  }
  const problem = chainProblem(entries);
  if (problem) return { broken: problem.message };
  if (chainHead(entries) !== head)
    return { broken: `${mKey} does not end in the head recorded with the run` };
  const key = evidenceKey(run.tenant, run.runId, 'results.json');
  // A resumed run merged again wrote results.json again: its last entry is the copy that counts.
  const entry = entries.findLast((e) => e.key === key);
  if (!entry) return { broken: `${key} is not in the manifest` };
  const sealed = await evidence.get(key);
  if (!sealed) return { broken: `${key} is missing` };
  if (sha256(sealed) !== entry.sha256) return { broken: `${key} differs from its hash in the manifest` };
  try {
    const { results = [] } = JSON.parse(Buffer.from(sealed).toString('utf8')) as { results?: ResultRecord[] };
    return { bySample: new Map(results.map((r) => [r.sampleId, digestOf(r)])) };
  } catch {
    return { broken: `${key} is not JSON` };
  }
}

/** Sealed copies read once per chain head (a head never seals other bytes), for the last runs read. */
const memo = new Map<string, ResultSeals>();
const MEMO_RUNS = 64;

/** The run's sealed results; undefined before its first merge (nothing is sealed yet). */
export async function resultSeals(evidence: EvidenceStore, run: RunRecord): Promise<ResultSeals | undefined> {
  const head = run.manifestHead;
  if (!head) return undefined;
  const key = `${run.tenant}\n${run.runId}\n${head}`;
  const known = memo.get(key);
  if (known) return known;
  const seals = await readSeals(evidence, run, head);
  // Only a good copy is kept: a broken one is read again next time (it may have been restored).
  if ('bySample' in seals) {
    memo.set(key, seals);
    if (memo.size > MEMO_RUNS) memo.delete(memo.keys().next().value as string);
  }
  return seals;
}
