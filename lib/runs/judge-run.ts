/**
 * The judge over a run: each finished sample ruled on from its evidence (lib/judge), the verdict
 * written into the sample's part of the hash-chained manifest, and the run merged again so
 * combined.csv, the report, the totals and the chain head carry the verdicts.
 */
import { JUDGE_FILE, judgeStoredSample, judgeTaskFromSpec, type Verdict } from '../judge/index.ts';
import type { LlmClient } from '../llm/types.ts';
import { sampleEvidenceKey } from '../store/keys.ts';
import type { EvidenceStore, Json, RunStore } from '../store/ports.ts';
import { manifestedEvidence } from './manifested-evidence.ts';
import { mergeRun } from './merge.ts';

export interface JudgeRunDeps {
  runStore: RunStore;
  evidence: EvidenceStore;
  /** The judge model; without one, rules decide what they can and the rest is `uncertain`. */
  llm: LlmClient | undefined;
}

export class JudgeRunError extends Error {
  override name = 'JudgeRunError';
  constructor(
    readonly kind: 'not_found' | 'not_finished',
    message: string,
  ) {
    super(message);
  }
}

export interface JudgedSample {
  sampleId: string;
  verdict: Verdict;
}

/** Judges one sample (when `sampleId` is given) or every finished one, then re-merges the run. */
export async function judgeRun(
  deps: JudgeRunDeps,
  tenant: string,
  runId: string,
  opts: { sampleId?: string } = {},
): Promise<JudgedSample[]> {
  const run = await deps.runStore.getRun(tenant, runId);
  if (!run) throw new JudgeRunError('not_found', `run ${runId} not found`);
  const results = await deps.runStore.listResults(tenant, runId);
  const chosen = opts.sampleId ? results.filter((r) => r.sampleId === opts.sampleId) : results;
  if (opts.sampleId && chosen.length === 0) {
    const sample = await deps.runStore.getSample(tenant, runId, opts.sampleId);
    throw new JudgeRunError(
      sample ? 'not_finished' : 'not_found',
      sample ? `sample ${opts.sampleId} has not finished yet` : `run ${runId} has no sample ${opts.sampleId}`,
    );
  }
  const task = judgeTaskFromSpec(run.spec as { [k: string]: Json });
  const judged: JudgedSample[] = [];
  for (const r of chosen) {
    const stores = {
      runStore: deps.runStore,
      evidence: manifestedEvidence(deps.evidence, tenant, runId, r.sampleId),
    };
    judged.push({
      sampleId: r.sampleId,
      verdict: await judgeStoredSample(stores, tenant, runId, r.sampleId, task, deps.llm),
    });
  }
  // Merged again only once the run itself was merged: a run still going is merged at its end.
  if (run.manifestHead) await mergeRun(deps.runStore, deps.evidence, tenant, runId, { verdicts: true });
  return judged;
}

/** The stored verdict of a sample, if it was judged. */
export async function storedVerdict(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  sampleId: string,
): Promise<Verdict | undefined> {
  const bytes = await evidence
    .get(sampleEvidenceKey(tenant, runId, sampleId, JUDGE_FILE))
    .catch(() => undefined);
  if (!bytes) return undefined;
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as Verdict;
  } catch {
    return undefined;
  }
}
