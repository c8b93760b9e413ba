/**
 * The storage port for workflows: versioned documents, tenant-scoped, with the outcomes that mark a
 * version verified. A version is immutable once written (healing writes the next one, never edits),
 * so a run that started on version 3 can always read version 3 again. No AWS types here.
 *
 * Concurrency: `putVersion` writes exactly the version it is given and answers `exists` when another
 * writer got there first; `saveNextVersion` re-reads and tries the next number, so two writers never
 * both get version N and neither loses its document.
 */
import type { JsonObject, WriteOnce } from './ports.ts';

/** Identical successes in a row before a version counts as verified (issue 23 item 4). */
export const DEFAULT_VERIFY_AFTER = 3;

export interface WorkflowVersionInput {
  tenant: string;
  id: string;
  version: number;
  /** The workflow document as validated JSON (lib/workflows/schema.ts). */
  document: JsonObject;
  /** The version this one was derived from (a heal, an edit). */
  parent?: number;
  /** Why this version exists, in words ("healed add_to_cart: renamed class"). */
  note?: string;
}

export interface WorkflowVersionRecord extends WorkflowVersionInput {
  name: string;
  createdAt: string;
  /** N identical successes in a row were recorded; stays true once reached. */
  verified: boolean;
  /** Successes in a row with the same signature. */
  streak: number;
  /** Signature of the last success (what it returned, hashed by the caller). */
  signature?: string;
  runs: { ok: number; failed: number };
}

export interface WorkflowSummary {
  tenant: string;
  id: string;
  name: string;
  latest: number;
  updatedAt: string;
}

export interface WorkflowOutcome {
  ok: boolean;
  /** What the success looked like (e.g. a hash of the output's shape); only equal ones count as identical. */
  signature: string;
}

export interface WorkflowStore {
  /** Writes this exact version; `exists` when it is taken (the caller re-reads and tries the next). */
  putVersion(input: WorkflowVersionInput): Promise<WriteOnce>;
  /** One version, or the latest when `version` is absent. */
  getVersion(tenant: string, id: string, version?: number): Promise<WorkflowVersionRecord | undefined>;
  /** Every version of a workflow, oldest first. */
  listVersions(tenant: string, id: string): Promise<WorkflowVersionRecord[]>;
  /** The tenant's workflows, by id. */
  list(tenant: string): Promise<WorkflowSummary[]>;
  /** Counts a run of a version; returns the version as it stands after (undefined when it does not exist). */
  recordOutcome(
    tenant: string,
    id: string,
    version: number,
    outcome: WorkflowOutcome,
  ): Promise<WorkflowVersionRecord | undefined>;
}

/** The workflow's display name: the document's `name`, else its id. */
export function workflowName(document: JsonObject, id: string): string {
  return typeof document.name === 'string' && document.name.length > 0 ? document.name : id;
}

/** A new record's outcome fields. */
export function freshOutcomes(): Pick<WorkflowVersionRecord, 'verified' | 'streak' | 'runs'> {
  return { verified: false, streak: 0, runs: { ok: 0, failed: 0 } };
}

/** Pure: the version's outcome fields after one more run. */
export function applyOutcome(
  record: Pick<WorkflowVersionRecord, 'verified' | 'streak' | 'signature' | 'runs'>,
  outcome: WorkflowOutcome,
  verifyAfter: number,
): Pick<WorkflowVersionRecord, 'verified' | 'streak' | 'signature' | 'runs'> {
  if (!outcome.ok) {
    return {
      verified: record.verified,
      streak: 0,
      ...(record.signature !== undefined ? { signature: record.signature } : {}),
      runs: { ok: record.runs.ok, failed: record.runs.failed + 1 },
    };
  }
  const streak = record.signature === outcome.signature ? record.streak + 1 : 1;
  return {
    verified: record.verified || streak >= verifyAfter,
    streak,
    signature: outcome.signature,
    runs: { ok: record.runs.ok + 1, failed: record.runs.failed },
  };
}

/**
 * Saves `document` as the next version of `id` (1 for a new id), re-reading on a race so two writers
 * get two consecutive versions. Returns the version written.
 */
export async function saveNextVersion(
  store: WorkflowStore,
  input: Omit<WorkflowVersionInput, 'version'>,
  attempts = 20,
): Promise<number> {
  for (let i = 0; i < attempts; i++) {
    const latest = await store.getVersion(input.tenant, input.id);
    const version = (latest?.version ?? 0) + 1;
    if ((await store.putVersion({ ...input, version })) === 'written') return version;
  }
  throw new Error(`workflow ${input.id}: ${attempts} writers raced for the next version; try again`);
}
