/**
 * Creating, loading and resuming runs in the RunStore, and the small execution input the state
 * machine starts from. A planned run stores `{ prompt }` as its spec until the Plan state has written
 * `generated_task_spec.json`; `loadSpec` reads whichever applies.
 */
import { randomBytes } from 'node:crypto';
import { evidenceKey, keySegment } from '../store/keys.ts';
import type { EvidenceStore, JsonObject, RunRecord, RunStore, SampleRecord } from '../store/ports.ts';
import type { Sample } from './samples.ts';
import { parseTaskSpec, type TaskSpec } from './task-spec.ts';

/** What the state machine starts with: ids, concurrency, and the sample ids or where they are in S3. */
export interface ExecutionInput {
  tenant: string;
  runId: string;
  concurrency: number;
  prompt?: string;
  /** Present when the samples are still to be discovered from the spec's listings (the Discover state). */
  discovery?: true;
  items?: string[];
  itemsBucket?: string;
  itemsKey?: string;
  mapResultsPrefix?: string;
}

/**
 * Where the Distributed Map reads sample ids on AWS; absent locally (ids travel in the input).
 * `key` is the EvidenceStore key the ids are written under, `objectKey` the S3 object key the state
 * machine reads (the store's bucket prefix in front, when it has one).
 */
export type ItemsLocation = (
  tenant: string,
  runId: string,
) => { bucket: string; key: string; objectKey?: string; resultsPrefix: string };

/**
 * The AWS items location: ids and the Map's result files under `<tenant>/_state/run_<id>/`, beside
 * the run's evidence and not inside `run_<id>/`, where `verify` would read them as added files.
 */
export function itemsInBucket(bucket: string, keyPrefix = ''): ItemsLocation {
  return (tenant, runId) => {
    const dir = `${keySegment(tenant)}/_state/run_${keySegment(runId)}`;
    return {
      bucket,
      key: `${dir}/items.json`,
      objectKey: `${keyPrefix}${dir}/items.json`,
      resultsPrefix: `${keyPrefix}${dir}/map-results`,
    };
  };
}

export class RunNotFound extends Error {
  override name = 'RunNotFound';
}

/** Sortable by creation time, unguessable enough to not collide: `20261123-190746-a1b2c3`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}

export const GENERATED_SPEC = 'generated_task_spec.json';

const specCache = new Map<string, TaskSpec>();

export async function loadSpec(evidence: EvidenceStore, run: RunRecord): Promise<TaskSpec> {
  const cacheKey = `${run.tenant}\n${run.runId}`;
  const cached = specCache.get(cacheKey);
  if (cached) return cached;
  let spec: TaskSpec;
  if (typeof run.spec.goal === 'string') spec = parseTaskSpec(run.spec);
  else {
    const raw = await evidence.get(evidenceKey(run.tenant, run.runId, GENERATED_SPEC));
    if (!raw) throw new Error(`run ${run.runId} has no task spec yet (its Plan step has not finished)`);
    spec = parseTaskSpec((JSON.parse(Buffer.from(raw).toString('utf8')) as { spec: unknown }).spec);
  }
  if (specCache.size > 500) specCache.clear();
  specCache.set(cacheKey, spec);
  return spec;
}

export function sampleRecords(tenant: string, runId: string, samples: Sample[], now: string): SampleRecord[] {
  return samples.map((s) => ({
    tenant,
    runId,
    sampleId: s.sampleId,
    url: s.url,
    input: s.input,
    status: 'pending',
    attempts: 0,
    updatedAt: now,
  }));
}

/** Stores a new run with its samples (or, for a planned run, its prompt) and returns its input. */
export async function createRun(
  store: RunStore,
  evidence: EvidenceStore,
  init: { tenant: string; runId?: string } & (
    | { spec: TaskSpec; samples: Sample[] }
    | { prompt: string; model?: string; concurrency?: number }
  ),
  items?: ItemsLocation,
): Promise<ExecutionInput> {
  const runId = init.runId ?? newRunId();
  const now = new Date().toISOString();
  const planned = 'prompt' in init;
  const spec: JsonObject = planned
    ? {
        prompt: init.prompt,
        ...(init.model ? { model: init.model } : {}),
        ...(init.concurrency ? { concurrency: init.concurrency } : {}),
      }
    : (init.spec as unknown as JsonObject);
  const written = await store.createRun({
    tenant: init.tenant,
    runId,
    status: 'queued',
    spec,
    sampleCount: planned ? 0 : init.samples.length,
    createdAt: now,
    updatedAt: now,
  });
  if (written === 'exists') throw new Error(`run ${runId} already exists`);
  if (planned) return { tenant: init.tenant, runId, concurrency: init.concurrency ?? 4, prompt: init.prompt };
  if (init.samples.length === 0 && init.spec.discovery)
    return { tenant: init.tenant, runId, concurrency: init.spec.concurrency, discovery: true };
  await store.putSamples(sampleRecords(init.tenant, runId, init.samples, now));
  return executionInput(
    evidence,
    init.tenant,
    runId,
    init.spec.concurrency,
    init.samples.map((s) => s.sampleId),
    items,
  );
}

/** The Map's input: ids inline (local), or written to S3 for the Distributed Map to read (AWS). */
export async function executionInput(
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  concurrency: number,
  sampleIds: string[],
  items?: ItemsLocation,
): Promise<ExecutionInput> {
  if (!items) return { tenant, runId, concurrency, items: sampleIds };
  const where = items(tenant, runId);
  await evidence.put(where.key, JSON.stringify(sampleIds), 'application/json');
  return {
    tenant,
    runId,
    concurrency,
    itemsBucket: where.bucket,
    itemsKey: where.objectKey ?? where.key,
    mapResultsPrefix: where.resultsPrefix,
  };
}

/**
 * Input to run an existing run again: every sample goes through the Map, finished ones return at once
 * (their result exists), unfinished ones continue from their checkpoints.
 */
export async function resumeInput(
  store: RunStore,
  evidence: EvidenceStore,
  tenant: string,
  runId: string,
  overrides: { concurrency?: number } = {},
  items?: ItemsLocation,
): Promise<ExecutionInput> {
  const run = await store.getRun(tenant, runId);
  if (!run) throw new RunNotFound(`no run "${runId}"`);
  const samples = await store.listSamples(tenant, runId);
  if (samples.length === 0 && typeof run.spec.prompt === 'string')
    // Planning never finished: plan again.
    return { tenant, runId, concurrency: overrides.concurrency ?? 4, prompt: run.spec.prompt };
  const spec = await loadSpec(evidence, run);
  await store.updateRun(tenant, runId, { status: 'running' });
  if (samples.length === 0 && spec.discovery)
    // Discovery never finished: discover again.
    return { tenant, runId, concurrency: overrides.concurrency ?? spec.concurrency, discovery: true };
  return executionInput(
    evidence,
    tenant,
    runId,
    overrides.concurrency ?? spec.concurrency,
    samples.map((s) => s.sampleId),
    items,
  );
}
