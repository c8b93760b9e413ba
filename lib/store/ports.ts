/**
 * The storage ports for agents and runs. Stages 6–8 (ops, agent, runs) talk to storage only through
 * these interfaces, so one run's code works on local files and on DynamoDB + S3. No AWS types here.
 *
 * Every record carries its tenant and every method takes it: adapters put the tenant first in each key
 * (through `tenantSegment`), so one tenant can neither read nor overwrite another's data.
 */

/** Plain JSON: checkpoints, specs and results are data, so any adapter can hold them. */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export type RunStatus = 'queued' | 'running' | 'merging' | 'done' | 'failed' | 'cancelled';

/** How a sample ended; `pending`/`running` are the only states that are not final. */
export type SampleStatus = 'pending' | 'running' | 'done' | 'partial_success' | 'failed' | 'needs_review';

export const FINAL_SAMPLE_STATUSES: readonly SampleStatus[] = [
  'done',
  'partial_success',
  'failed',
  'needs_review',
];

export function isFinalSampleStatus(status: SampleStatus): boolean {
  return FINAL_SAMPLE_STATUSES.includes(status);
}

export interface RunRecord {
  tenant: string;
  runId: string;
  status: RunStatus;
  /** The run's TaskSpec as JSON (validated by lib/runs before it is stored). */
  spec: JsonObject;
  sampleCount: number;
  createdAt: string;
  updatedAt: string;
  /** Status counts, tokens, cost, duration; written by merge and refreshed while running. */
  totals?: JsonObject;
  /** Hash of the last manifest entry: the chain head that `verify` checks the evidence against. */
  manifestHead?: string;
  /** Why the run failed or was cancelled. */
  reason?: string;
  /**
   * For a queue job's run: a digest of what the job asked (task, URLs, input, output queue). A later
   * message reusing the job id with anything different is refused rather than handed these results.
   */
  jobDigest?: string;
}

export type RunPatch = Partial<Pick<RunRecord, 'status' | 'totals' | 'manifestHead' | 'reason'>>;

export interface SampleRecord {
  tenant: string;
  runId: string;
  sampleId: string;
  url: string;
  /** Input columns passed to the agent (CSV columns other than sample_id and url). */
  input: Record<string, string>;
  status: SampleStatus;
  reason?: string;
  /** Slices started for this sample (a retried slice counts again). */
  attempts: number;
  updatedAt: string;
}

export type SamplePatch = Partial<Pick<SampleRecord, 'status' | 'reason' | 'attempts'>>;

/**
 * An agent's state saved between slices. `seq` grows with every save; a save whose seq is not above
 * the stored one is refused, so a slice that was retried after a crash cannot roll a sample back.
 */
export interface Checkpoint {
  seq: number;
  state: JsonObject;
  savedAt: string;
}

/** A sample's final result. Written once: the first write wins and later writes are refused. */
export interface ResultRecord {
  tenant: string;
  runId: string;
  sampleId: string;
  status: SampleStatus;
  reason: string;
  data: Json;
  /** Tokens, cost, steps, ms (the agent's usage summary). */
  usage: JsonObject;
  /** Evidence keys of this sample with their SHA-256, in write order. */
  evidence: { key: string; sha256: string }[];
  writtenAt: string;
}

/**
 * A run's counts kept up to date as samples and results are written, so a status read costs one small
 * read instead of every sample and result of the run.
 */
export interface RunProgress {
  samples: number;
  /** Samples marked running that have no result yet. */
  running: number;
  /** Results written, per status. */
  results: Partial<Record<SampleStatus, number>>;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costUsd: number;
  sampleMs: number;
  /** `writtenAt` of the latest result. */
  lastResultAt?: string;
}

/** `written` when this call stored the value, `exists` when an earlier write already had. */
export type WriteOnce = 'written' | 'exists';

/** A per-domain token bucket shared by every worker of every run. */
export interface RateLimit {
  /** Requests per second allowed on average. */
  ratePerSecond: number;
  /** Requests allowed at once after a quiet spell (default 1: strictly paced). */
  burst?: number;
}

export interface RateDecision {
  granted: boolean;
  /** When not granted: how long to wait before asking again. */
  waitMs: number;
}

export interface RunStore {
  /** Creates the run; `exists` when a run with this id is already stored (nothing is overwritten). */
  createRun(run: RunRecord): Promise<WriteOnce>;
  getRun(tenant: string, runId: string): Promise<RunRecord | undefined>;
  updateRun(tenant: string, runId: string, patch: RunPatch): Promise<void>;
  listRuns(tenant: string): Promise<RunRecord[]>;

  /** Adds samples that are not stored yet; existing samples (and their progress) are kept. */
  putSamples(samples: SampleRecord[]): Promise<void>;
  getSample(tenant: string, runId: string, sampleId: string): Promise<SampleRecord | undefined>;
  updateSample(tenant: string, runId: string, sampleId: string, patch: SamplePatch): Promise<void>;
  listSamples(tenant: string, runId: string): Promise<SampleRecord[]>;

  /** Stores the checkpoint when its seq is above the stored one; false when a newer one is there. */
  saveCheckpoint(tenant: string, runId: string, sampleId: string, checkpoint: Checkpoint): Promise<boolean>;
  loadCheckpoint(tenant: string, runId: string, sampleId: string): Promise<Checkpoint | undefined>;

  /** Conditional write: a sample's result is stored exactly once. */
  putResult(result: ResultRecord): Promise<WriteOnce>;
  getResult(tenant: string, runId: string, sampleId: string): Promise<ResultRecord | undefined>;
  listResults(tenant: string, runId: string): Promise<ResultRecord[]>;
  /**
   * The run's counts kept as it goes (see RunProgress); undefined when this store does not keep them
   * for the run (then the caller counts from the lists).
   */
  runProgress?(tenant: string, runId: string): Promise<RunProgress | undefined>;

  /** Takes one request from the bucket of `key` (e.g. a domain) if one is free at `nowMs`. */
  takeToken(key: string, limit: RateLimit, nowMs: number): Promise<RateDecision>;
  /** Holds the bucket of `key` closed until `untilMs` for everyone (a 429 or Retry-After from a site). */
  pauseBucket(key: string, untilMs: number): Promise<void>;
  /** Until when the bucket of `key` is paused (0: it is not), read without taking anything. */
  bucketPausedUntil(key: string): Promise<number>;
}

export interface EvidenceObject {
  key: string;
  /** Hex SHA-256 of the stored bytes, computed at write time. */
  sha256: string;
  bytes: number;
}

export interface EvidenceEntry {
  key: string;
  /** False for a symbolic link, a socket or anything else that is not a plain file. */
  regular: boolean;
}

/**
 * Blobs: screenshots, downloads, result and action-log JSON, reports, manifests. Keys are `/`-joined
 * paths that start with the tenant segment (see `evidenceKey`); a put replaces the object atomically.
 */
export interface EvidenceStore {
  put(key: string, body: Uint8Array | string, contentType?: string): Promise<EvidenceObject>;
  get(key: string): Promise<Uint8Array | undefined>;
  /** Keys under a prefix, sorted. */
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
  /**
   * Every object under a prefix as stored, including names `list` leaves out (temporary files, dot
   * folders) and entries that are not regular files (links). For `verify`; stores whose `list`
   * already shows everything (S3) need not have it.
   */
  inventory?(prefix: string): Promise<EvidenceEntry[]>;
  /** A URL the caller can fetch the object from (presigned on S3); undefined when the store only streams. */
  link?(key: string, expiresInSeconds: number): Promise<string | undefined>;
}
