/**
 * The queue consumer: each message is a small run (one sample per URL). Results are written once per
 * job and URL, so a redelivered message finds its results and does nothing twice; a message that keeps
 * failing goes to the DLQ with the reason, and one bad message never re-delivers its whole batch. A
 * batch longer than its invocation goes on in a new delivery of the same job (see `nextSliceBudget`).
 */
import { keySegment } from '../../store/keys.ts';
import type { EvidenceStore, JsonObject, RateLimit, ResultRecord, RunStore } from '../../store/ports.ts';
import { waitForToken } from '../../store/rate-gate.ts';
import { DEFAULT_SLICE_BUDGET_MS } from '../handlers.ts';
import { rateBucketKey, rateLimitFor, type TaskSpec } from '../task-spec.ts';
import { jobDigest, parseQueueMessage, type QueueMessage, runIdForJob, sampleIdFor } from './message.ts';

export interface QueueRecord {
  messageId: string;
  body: string;
  /** How many times SQS has handed this message out, this time included. */
  receiveCount: number;
  /**
   * Failed deliveries of the same job before this message: a job sent round for time (see
   * continueLater) is a new message, and the count it carries keeps a failing job on its way to
   * the DLQ.
   */
  earlierDeliveries?: number;
}

/** The message attribute that carries `earlierDeliveries` on a job sent round for time. */
export const EARLIER_DELIVERIES_ATTRIBUTE = 'browserfnEarlierDeliveries';

/** Deliveries of the job so far, this one included. */
const deliveriesOf = (record: QueueRecord) => record.receiveCount + (record.earlierDeliveries ?? 0);

export interface SampleJob {
  tenant: string;
  runId: string;
  sampleId: string;
  url: string;
  input: Record<string, string>;
  spec: JsonObject;
}

/**
 * Runs one sample to its end and writes its result with `RunStore.putResult` (write-once). Throws only
 * for infrastructure failures worth a retry (browser gone, model down); a page where the task fails is
 * a `failed` result, not a throw. `nextBudget`, when given, is asked before each slice for its working
 * time; undefined means no time is left to start one (throw `OutOfTimeError`).
 */
export type RunSample = (job: SampleJob, nextBudget?: () => number | undefined) => Promise<void>;

/** Too little of the invocation is left to start another slice: the job goes on in a new delivery. */
export class OutOfTimeError extends Error {
  constructor() {
    super('too little time left in this invocation to start another slice');
  }
}

/** Time kept after a slice's budget for its checkpoint, result and page close (infra's queue margin). */
export const FINISH_MARGIN_MS = 60_000;
/** A slice with less working time than this would spend most of it opening the page. */
export const MIN_SLICE_MS = 30_000;

/**
 * The working time the next slice may have in an invocation with `timeLeftMs` to go: the configured
 * slice budget, cut to what leaves the finish margin; undefined when that is under MIN_SLICE_MS.
 */
export function nextSliceBudget(timeLeftMs: number, sliceMs: number): number | undefined {
  const budget = Math.min(sliceMs, timeLeftMs - FINISH_MARGIN_MS);
  return budget >= MIN_SLICE_MS ? Math.floor(budget) : undefined;
}

export interface QueueDeps {
  tenant: string;
  runStore: RunStore;
  evidence: EvidenceStore;
  runSample: RunSample;
  /** Sends a message body to the dead-letter queue with the reason it was given up on. */
  deadLetter: (body: string, reason: string) => Promise<void>;
  /** Sends one result onwards (an output queue named by the message). */
  sendOutput?: (queueUrl: string, result: ResultRecord) => Promise<void>;
  /** Why results may not go to this output queue, checked before any sample runs; undefined: they may. */
  outputRefused?: (queueUrl: string) => string | undefined;
  /** The runner waits for the host's rate limit itself (the run's slice does): do not take a token twice. */
  runnerPaces?: boolean;
  /** After this many deliveries a failing message is dead-lettered (match the queue's redrive policy). */
  maxReceiveCount: number;
  /** The invocation's time left (Lambda); absent, work runs to its end (the polling worker). */
  timeLeftMs?: () => number;
  /** A slice's configured working time (BROWSERFN_SLICE_MS). */
  sliceMs?: number;
  /**
   * Puts a body on the job queue as a new message: a job the invocation's time could not finish goes
   * on there instead of timing out, with the count of its failed deliveries so far.
   */
  requeue?: (body: string, earlierDeliveries: number) => Promise<void>;
  log?: (event: { msg: string; [k: string]: unknown }) => void;
}

export interface BatchResponse {
  batchItemFailures: { itemIdentifier: string }[];
}

/** Where stored task specs live: `<tenant>/specs/<id>.json` in the evidence store. */
export function specKey(tenant: string, specId: string): string {
  return `${keySegment(tenant)}/specs/${keySegment(specId)}.json`;
}

async function resolveSpec(message: QueueMessage, deps: QueueDeps): Promise<JsonObject> {
  if ('spec' in message.task) return message.task.spec as JsonObject;
  const body = await deps.evidence.get(specKey(deps.tenant, message.task.specId));
  if (!body) throw new PermanentError(`task spec "${message.task.specId}" is not stored`);
  return JSON.parse(Buffer.from(body).toString('utf8')) as JsonObject;
}

/** A failure no retry can fix (a missing spec): dead-lettered at once. */
export class PermanentError extends Error {}

/** The spec's limit for a URL's host, in the task spec's own format (`{ host: { ratePerSecond } }`). */
function hostLimit(
  spec: JsonObject,
  url: string,
  tenant: string,
): { key: string; limit: RateLimit } | undefined {
  const limit = rateLimitFor(spec as Pick<TaskSpec, 'rateLimits'>, url);
  // The same bucket key the tenant's run slices use: its queue workers and runs share one budget per host.
  return limit ? { key: rateBucketKey(tenant, limit.host), limit } : undefined;
}

/** The invocation's slice clock, and whether it ever had time for a slice (see handleQueueBatch). */
function sliceClock(deps: QueueDeps) {
  const clock = { hadTime: false, next: undefined as (() => number | undefined) | undefined };
  const timeLeftMs = deps.timeLeftMs;
  if (timeLeftMs)
    clock.next = () => {
      const budget = nextSliceBudget(timeLeftMs(), deps.sliceMs ?? DEFAULT_SLICE_BUDGET_MS);
      if (budget !== undefined) clock.hadTime = true;
      return budget;
    };
  return clock;
}

async function processMessage(
  record: QueueRecord,
  message: QueueMessage,
  deps: QueueDeps,
  nextBudget: (() => number | undefined) | undefined,
): Promise<void> {
  // Asking again will not make the queue acceptable: to the DLQ at once, before any page is opened.
  const refusedOutput = message.output?.queueUrl && deps.outputRefused?.(message.output.queueUrl);
  if (refusedOutput) throw new PermanentError(refusedOutput);
  const jobId = message.jobId ?? record.messageId;
  const runId = runIdForJob(jobId);
  const spec = await resolveSpec(message, deps);
  const now = new Date().toISOString();
  const digest = jobDigest(message, spec);
  const created = await deps.runStore.createRun({
    tenant: deps.tenant,
    runId,
    status: 'running',
    spec,
    sampleCount: message.urls.length,
    createdAt: now,
    updatedAt: now,
    jobDigest: digest,
  });
  if (created === 'exists') await checkSameJob(jobId, runId, digest, deps);
  await deps.runStore.putSamples(
    message.urls.map((url, i) => ({
      tenant: deps.tenant,
      runId,
      sampleId: sampleIdFor(i),
      url,
      input: message.input ?? {},
      status: 'pending' as const,
      attempts: 0,
      updatedAt: now,
    })),
  );
  for (const [i, url] of message.urls.entries()) {
    const sampleId = sampleIdFor(i);
    let result = await deps.runStore.getResult(deps.tenant, runId, sampleId);
    if (!result) {
      if (nextBudget && nextBudget() === undefined) throw new OutOfTimeError();
      const paced = deps.runnerPaces ? undefined : hostLimit(spec, url, deps.tenant);
      if (paced) await waitForToken(deps.runStore, paced.key, paced.limit);
      const job = { tenant: deps.tenant, runId, sampleId, url, input: message.input ?? {}, spec };
      await deps.runSample(job, nextBudget);
      result = await deps.runStore.getResult(deps.tenant, runId, sampleId);
      if (!result) throw new Error(`sample ${sampleId} ended without a result`);
      deps.log?.({ msg: 'queue sample done', runId, sampleId, status: result.status });
    } else {
      deps.log?.({ msg: 'queue sample already done (redelivery)', runId, sampleId });
    }
    if (message.output?.queueUrl && deps.sendOutput) await sendOnce(message.output.queueUrl, result, deps);
  }
  const results = await deps.runStore.listResults(deps.tenant, runId);
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  await deps.runStore.updateRun(deps.tenant, runId, { status: 'done', totals: { counts } });
}

/**
 * A job id already stored: a redelivery or a continuation of the same job goes on; a message that
 * reuses the id for another task, other URLs or input, or another output queue is refused (to the
 * DLQ), so it can never be handed the first job's results. Runs stored before digests existed carry
 * none and are taken as the same job, as they were then.
 */
async function checkSameJob(jobId: string, runId: string, digest: string, deps: QueueDeps): Promise<void> {
  const stored = await deps.runStore.getRun(deps.tenant, runId);
  if (stored?.jobDigest === undefined || stored.jobDigest === digest) return;
  throw new PermanentError(
    `jobId "${jobId}" is already used by a job with a different task, URLs, input or output queue; send this one under a new jobId`,
  );
}

/** The output marker makes forwarding at-least-once without repeating on a plain redelivery. */
async function sendOnce(queueUrl: string, result: ResultRecord, deps: QueueDeps): Promise<void> {
  const marker = `${keySegment(deps.tenant)}/outputs/${keySegment(result.runId)}/${keySegment(result.sampleId)}.sent`;
  if (await deps.evidence.get(marker)) return;
  await deps.sendOutput!(queueUrl, result);
  await deps.evidence.put(marker, queueUrl);
}

/**
 * A job the invocation ran out of time for: sent again as a new message naming the same job, so its
 * finished samples are found and the rest run. Without a way to send it (or when sending fails) it
 * stays a failure of this batch, and SQS delivers it again.
 */
async function continueLater(
  record: QueueRecord,
  message: QueueMessage,
  deps: QueueDeps,
  failures: { itemIdentifier: string }[],
): Promise<void> {
  const jobId = message.jobId ?? record.messageId;
  try {
    if (!deps.requeue) throw new Error('no job queue to send it to');
    // This delivery did not fail; the ones before it of this message did (they came back).
    await deps.requeue(JSON.stringify({ ...message, jobId }), deliveriesOf(record) - 1);
    deps.log?.({ msg: 'queue job continues in a new message', messageId: record.messageId, jobId });
  } catch (err) {
    deps.log?.({
      msg: 'queue job out of time; left for redelivery',
      messageId: record.messageId,
      reason: (err as Error).message,
    });
    failures.push({ itemIdentifier: record.messageId });
  }
}

/** Handles one SQS batch (Lambda event or a worker's poll) and reports the records to retry. */
export async function handleQueueBatch(records: QueueRecord[], deps: QueueDeps): Promise<BatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  const clock = sliceClock(deps);
  let outOfTime = false;
  /** `dlqReason`: what the DLQ reader sees, when not the usual "after N deliveries: …". */
  const failed = async (record: QueueRecord, err: unknown, dlqReason?: string) => {
    const reason = (err as Error).message;
    const deliveries = deliveriesOf(record);
    const final = err instanceof PermanentError || deliveries >= deps.maxReceiveCount;
    deps.log?.({ msg: 'queue message failed', messageId: record.messageId, reason, final });
    try {
      if (final) await deps.deadLetter(record.body, dlqReason ?? `after ${deliveries} deliveries: ${reason}`);
      else failures.push({ itemIdentifier: record.messageId });
    } catch (dlqErr) {
      // The DLQ could not take it: SQS delivers it again rather than the batch failing whole.
      deps.log?.({ msg: 'dead-lettering failed', messageId: record.messageId, reason: String(dlqErr) });
      failures.push({ itemIdentifier: record.messageId });
    }
  };
  // An invocation that never had time for one slice would send its jobs round forever: that is a
  // function timeout too short for BROWSERFN_SLICE_MS, and each message fails saying so.
  const tooShort = () =>
    new Error(
      `the invocation had too little time to start one slice: give the function a timeout of BROWSERFN_SLICE_MS + ${FINISH_MARGIN_MS / 1000} s, and never under ${(FINISH_MARGIN_MS + MIN_SLICE_MS) / 1000} s`,
    );
  for (const record of records) {
    const parsed = parseQueueMessage(record.body);
    if (!parsed.ok) {
      // Malformed messages never get better: straight to the DLQ, and not back on the queue.
      await failed(record, new PermanentError(parsed.reason), parsed.reason);
      continue;
    }
    if (outOfTime) {
      if (clock.hadTime) await continueLater(record, parsed.message, deps, failures);
      else await failed(record, tooShort());
      continue;
    }
    try {
      await processMessage(record, parsed.message, deps, clock.next);
    } catch (err) {
      if (!(err instanceof OutOfTimeError)) {
        await failed(record, err);
        continue;
      }
      outOfTime = true;
      if (clock.hadTime) await continueLater(record, parsed.message, deps, failures);
      else await failed(record, tooShort());
    }
  }
  return { batchItemFailures: failures };
}
