/**
 * What the slice runners of runs do alike with a sample's plain-JSON state (scenario, workflow and the
 * one-read extract mode): its first state, its checkpoints (seq always growing), its evidence files,
 * and the end of a sample — status and reason set, its one result written, the last checkpoint saved.
 * What differs per mode (the usage its result records, the evidence it writes first) stays with the mode.
 */
import { sampleEvidenceKey } from '../store/keys.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import type { SliceDeps, SliceRunner, SliceState, SliceStatus, SliceUsage } from './slice-runner.ts';

export interface EvidenceRef {
  key: string;
  sha256: string;
}

export const zeroUsage = (): SliceUsage => ({
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  costUsd: 0,
  ms: 0,
});

/** A sample's first state: nothing done, nothing spent. */
export const freshSliceState: SliceRunner['newState'] = (init) => ({
  version: 1,
  tenant: init.tenant,
  runId: init.runId,
  sampleId: init.sampleId,
  task: init.task,
  url: init.url,
  input: init.input ?? {},
  step: 0,
  status: 'running',
  data: null,
  usage: zeroUsage(),
  evidence: [],
  checkpointSeq: 0,
});

/** The spec's required fields that the sample's data left empty (null or absent). */
export function missingFields(data: Json, required: string[] | undefined): string[] {
  if (!required?.length) return [];
  const obj = (data && typeof data === 'object' && !Array.isArray(data) ? data : {}) as JsonObject;
  return required.filter((f) => obj[f] === undefined || obj[f] === null);
}

/** Saves the state as the sample's next checkpoint (the store keeps only a higher seq). */
export async function checkpoint(state: SliceState, deps: Pick<SliceDeps, 'runStore'>): Promise<void> {
  state.checkpointSeq += 1;
  await deps.runStore.saveCheckpoint(state.tenant, state.runId, state.sampleId, {
    seq: state.checkpointSeq,
    state: state as unknown as JsonObject,
    savedAt: new Date().toISOString(),
  });
}

/** Stores one file under the sample's evidence folder; the caller decides when the state lists it. */
export async function putEvidence(
  state: SliceState,
  deps: Pick<SliceDeps, 'evidence'>,
  file: string,
  body: string | Uint8Array,
  contentType: string,
): Promise<EvidenceRef> {
  const put = await deps.evidence.put(
    sampleEvidenceKey(state.tenant, state.runId, state.sampleId, file),
    body,
    contentType,
  );
  return { key: put.key, sha256: put.sha256 };
}

/** Stores one evidence file and lists it on the state at once (it goes into the sample's result). */
export async function saveEvidence(
  state: SliceState,
  deps: Pick<SliceDeps, 'evidence'>,
  file: string,
  body: string | Uint8Array,
  contentType: string,
): Promise<EvidenceRef> {
  const ref = await putEvidence(state, deps, file, body, contentType);
  state.evidence.push(ref);
  return ref;
}

/**
 * Ends the sample: its one result (first write wins, so a retried end changes nothing stored) with
 * the usage its mode records, then the last checkpoint, which a retried slice reads as final.
 */
export async function finishSample<S extends SliceState>(
  state: S,
  deps: Pick<SliceDeps, 'runStore'>,
  status: Exclude<SliceStatus, 'running'>,
  reason: string,
  usage: JsonObject,
): Promise<S> {
  state.status = status;
  state.reason = reason;
  await deps.runStore.putResult({
    tenant: state.tenant,
    runId: state.runId,
    sampleId: state.sampleId,
    status,
    reason,
    data: state.data,
    usage,
    evidence: [...state.evidence],
    writtenAt: new Date().toISOString(),
  });
  await checkpoint(state, deps);
  return state;
}
