/**
 * `verify` over everything a run serves: every evidence file against the hash chain (manifest-store),
 * and the results the run store hands to `/results` and the report against `results.json`, the copy
 * the merge wrote into the chain. The run store itself is not hashed, so a result edited there after
 * the merge is caught by this comparison.
 */
import { evidenceKey } from '../store/keys.ts';
import type { ManifestProblem } from '../store/manifest.ts';
import { type RunVerification, verifyRun } from '../store/manifest-store.ts';
import type { EvidenceStore, Json, ResultRecord, RunStore } from '../store/ports.ts';

/** JSON with object keys sorted, so the same value stored by another adapter compares equal. */
export function canonicalJson(value: Json | undefined): string {
  if (value === undefined) return 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

/** Every result that differs between the run store and the sealed `results.json`, one each (pure). */
export function resultsProblems(
  stored: readonly ResultRecord[],
  sealed: readonly ResultRecord[],
  sealedKey: string,
): ManifestProblem[] {
  const sealedById = new Map(sealed.map((r) => [r.sampleId, r]));
  const storedById = new Map(stored.map((r) => [r.sampleId, r]));
  const ids = [...new Set([...storedById.keys(), ...sealedById.keys()])].sort();
  const problems: ManifestProblem[] = [];
  for (const id of ids) {
    const s = storedById.get(id);
    const h = sealedById.get(id);
    const where = { kind: 'edited' as const, key: sealedKey, where: 'result' as const };
    if (!s)
      problems.push({
        ...where,
        kind: 'removed',
        message: `the result of sample ${id} is in ${sealedKey} but no longer stored`,
      });
    else if (!h)
      problems.push({
        ...where,
        kind: 'added',
        message: `the stored result of sample ${id} is not in ${sealedKey}`,
      });
    else if (canonicalJson(s as unknown as Json) !== canonicalJson(h as unknown as Json))
      problems.push({
        ...where,
        message: `the stored result of sample ${id} differs from the one sealed in ${sealedKey}: it was edited after the merge`,
      });
  }
  return problems;
}

/** The first of `resultsProblems`. */
export const resultsProblem = (
  stored: readonly ResultRecord[],
  sealed: readonly ResultRecord[],
  sealedKey: string,
): ManifestProblem | undefined => resultsProblems(stored, sealed, sealedKey)[0];

export interface FullVerification extends RunVerification {
  /** The head checked against: the one the caller kept, or else the one stored with the run. */
  expectedHead: string;
}

/**
 * Verifies a merged run. `keptHead` is a chain head the caller kept outside both stores (printed by
 * the merge, or in `GET /v1/runs/{id}`): with it, even a rewritten manifest plus a rewritten run
 * record is caught.
 */
export async function verifyWholeRun(
  runStore: RunStore,
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  keptHead?: string,
): Promise<FullVerification | undefined> {
  const run = await runStore.getRun(tenant, runId);
  if (!run) return undefined;
  const expectedHead = keptHead ?? run.manifestHead;
  if (!expectedHead) throw new Error(`run ${runId} has no manifest yet (it has not been merged)`);
  const chain = await verifyRun(evidence, tenant, runId, expectedHead);
  const problems = chain.problems ?? (chain.problem ? [chain.problem] : []);
  // A kept head the manifest does not end at is already one problem; the run record's head, another.
  if (keptHead && run.manifestHead !== keptHead && !problems.some((p) => p.kind === 'head'))
    problems.push({
      kind: 'head',
      where: 'manifest',
      message: `the run records head ${run.manifestHead ?? '(none)'} but the head you kept is ${keptHead}`,
    });
  const key = evidenceKey(tenant, runId, 'results.json');
  const bytes = await evidence.get(key);
  let sealed: ResultRecord[] = [];
  if (bytes) {
    try {
      sealed =
        (JSON.parse(Buffer.from(bytes).toString('utf8')) as { results?: ResultRecord[] }).results ?? [];
    } catch {
      // Unreadable: its own chain entry already says it was edited; compare against no results.
    }
  }
  // Results are compared even when the chain is broken: each problem gets its own line.
  problems.push(...resultsProblems(await runStore.listResults(tenant, runId), sealed, key));
  return problems.length > 0
    ? { ...chain, expectedHead, ok: false, problem: problems[0], problems }
    : { ...chain, expectedHead };
}
