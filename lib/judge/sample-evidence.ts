/**
 * Reads a finished sample back from the stores the way the judge needs it, and writes the verdict
 * next to the rest of its evidence (`judge.json`; through a run's manifested store it joins the
 * hash chain like every other file).
 */
import type { LlmClient } from '../llm/types.ts';
import { sampleEvidenceKey } from '../store/keys.ts';
import type { EvidenceStore, Json, RunStore } from '../store/ports.ts';
import { judgeSample } from './judge.ts';
import type { JudgedScreenshot, JudgedStep, JudgeInput, JudgeTask, Verdict } from './types.ts';

export const JUDGE_FILE = 'judge.json';

export class JudgeError extends Error {
  override name = 'JudgeError';
  constructor(
    readonly kind: 'not_found' | 'not_finished',
    message: string,
  ) {
    super(message);
  }
}

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

/** The step that saved each screenshot, from the action log's "saved NN_label.png" outcomes. */
function stepOfScreenshot(steps: JudgedStep[], file: string): number {
  for (const s of steps) if (s.actions.some((a) => a.outcome.includes(file))) return s.step;
  return 0;
}

export async function loadJudgeInput(
  stores: { runStore: RunStore; evidence: EvidenceStore },
  tenant: string,
  runId: string,
  sampleId: string,
  task: JudgeTask,
): Promise<JudgeInput> {
  const result = await stores.runStore.getResult(tenant, runId, sampleId);
  if (!result) throw new JudgeError('not_finished', `sample ${sampleId} of run ${runId} has no result yet`);
  const key = (file: string) => sampleEvidenceKey(tenant, runId, sampleId, file);
  const logBytes = await stores.evidence.get(key('action_log.json'));
  const steps = logBytes ? (JSON.parse(text(logBytes)) as JudgedStep[]) : [];
  const prefix = key('x').slice(0, -1);
  const screenshots: JudgedScreenshot[] = [];
  for (const k of await stores.evidence.list(prefix)) {
    if (!k.endsWith('.png')) continue;
    const png = await stores.evidence.get(k);
    const file = k.slice(prefix.length);
    if (png) screenshots.push({ file, step: stepOfScreenshot(steps, file), png });
  }
  return {
    task,
    status: result.status,
    reason: result.reason,
    data: result.data,
    steps: Array.isArray(steps) ? steps : [],
    screenshots,
  };
}

/** Judges one sample from its evidence and stores the verdict as `judge.json` beside it. */
export async function judgeStoredSample(
  stores: { runStore: RunStore; evidence: EvidenceStore },
  tenant: string,
  runId: string,
  sampleId: string,
  task: JudgeTask,
  llm: LlmClient | undefined,
): Promise<Verdict> {
  const input = await loadJudgeInput(stores, tenant, runId, sampleId, task);
  const verdict = await judgeSample(input, llm);
  await stores.evidence.put(
    sampleEvidenceKey(tenant, runId, sampleId, JUDGE_FILE),
    JSON.stringify(verdict, null, 2),
    'application/json',
  );
  return verdict;
}

/** A run spec's task as the judge reads it (goal, required fields and artifacts, schema, judge options). */
export function judgeTaskFromSpec(spec: { [k: string]: Json | undefined }): JudgeTask {
  const strings = (v: Json | undefined) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
  const judge = spec.judge && typeof spec.judge === 'object' && !Array.isArray(spec.judge) ? spec.judge : {};
  const rubric = strings(judge.rubric);
  const requiredFields = strings(spec.requiredFields);
  const requiredArtifacts = strings(spec.requiredArtifacts);
  const schema = spec.outputSchema;
  return {
    goal: typeof spec.goal === 'string' ? spec.goal : '',
    ...(requiredFields ? { requiredFields } : {}),
    ...(requiredArtifacts ? { requiredArtifacts } : {}),
    ...(schema && typeof schema === 'object' && !Array.isArray(schema)
      ? { schema: schema as Record<string, unknown> }
      : {}),
    ...(rubric ? { rubric } : {}),
    ...(typeof judge.expectedAnswer === 'string' ? { expectedAnswer: judge.expectedAnswer } : {}),
  };
}
