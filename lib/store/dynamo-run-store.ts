/**
 * `RunStore` on one DynamoDB table (design in dynamo-items.ts). Every guarantee of the port rests on a
 * single-item condition, because DynamoDB Local stand-ins (and cheap designs) have no transactions:
 * runs and results are written with `attribute_not_exists` (write-once), checkpoints only when their
 * seq is above the stored one, rate buckets with a compare-and-set on their `version`. The run item
 * keeps the run's progress (counts, tokens, cost) by atomic `ADD` as samples and results are written,
 * once per result that this store actually wrote, so a status read is one GetItem, not a Query of
 * every sample and result.
 * JSON payloads above `inlineLimitBytes` go to the blob store (S3) and the item keeps a pointer
 * (dynamo-payloads.ts); the table operations are dynamo-table.ts's, the rate buckets dynamo-rate-buckets.ts's.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  bySampleId,
  checkpointToItem,
  type Item,
  itemToRun,
  itemToSample,
  packedOf,
  resultToItem,
  runKey,
  runPartition,
  runToItem,
  sampleItemKey,
  sampleToItem,
} from './dynamo-items.ts';
import { DynamoPayloads } from './dynamo-payloads.ts';
import { addRunProgress, itemToProgress, progressAttributes } from './dynamo-progress.ts';
import { DynamoRateBuckets } from './dynamo-rate-buckets.ts';
import { DynamoTable } from './dynamo-table.ts';
import { keySegment } from './keys.ts';
import type {
  Checkpoint,
  EvidenceStore,
  JsonObject,
  RateDecision,
  RateLimit,
  ResultRecord,
  RunPatch,
  RunProgress,
  RunRecord,
  RunStore,
  SamplePatch,
  SampleRecord,
  WriteOnce,
} from './ports.ts';
import {
  emptyProgress,
  type ProgressDelta,
  resultDelta,
  samplesDelta,
  statusChangeDelta,
} from './run-progress.ts';

export interface DynamoRunStoreOptions {
  client: DynamoDBClient;
  table: string;
  /** Where payloads too big for an item go (the run's S3 evidence store on AWS). */
  blobs: EvidenceStore;
  /** Payloads above this many bytes are stored by pointer (default 300 KB; items are capped at 400 KB). */
  inlineLimitBytes?: number;
}

/** Samples written at once by putSamples: enough to hide latency, few enough not to be throttled. */
const PUT_CONCURRENCY = 16;

export class DynamoRunStore implements RunStore {
  private readonly table: DynamoTable;
  private readonly payloads: DynamoPayloads;
  private readonly buckets: DynamoRateBuckets;

  constructor(options: DynamoRunStoreOptions) {
    this.table = new DynamoTable(options.client, options.table);
    this.payloads = new DynamoPayloads(options.blobs, options.inlineLimitBytes ?? 300_000);
    this.buckets = new DynamoRateBuckets(this.table);
  }

  // ---- runs ----

  async createRun(run: RunRecord): Promise<WriteOnce> {
    const spec = await this.payloads.pack(JSON.stringify(run.spec), run.tenant, run.runId, 'spec');
    const { written } = await this.table.putIf(
      { ...runToItem(run, spec), ...progressAttributes(emptyProgress()) },
      'attribute_not_exists(pk)',
    );
    if (!written) await this.payloads.drop(spec);
    return written ? 'written' : 'exists';
  }

  private async runFromItem(item: Item): Promise<RunRecord> {
    const spec = JSON.parse(
      await this.payloads.unpackOrThrow(packedOf(item, 'spec'), 'run spec'),
    ) as JsonObject;
    return itemToRun(item, spec);
  }

  async getRun(tenant: string, runId: string): Promise<RunRecord | undefined> {
    const item = await this.table.get(runKey(tenant, runId));
    return item ? this.runFromItem(item) : undefined;
  }

  // ---- the run's kept progress ----

  async runProgress(tenant: string, runId: string): Promise<RunProgress | undefined> {
    const item = await this.table.get(runKey(tenant, runId));
    return item ? itemToProgress(item) : undefined;
  }

  private addProgress(tenant: string, runId: string, delta: ProgressDelta, lastResultAt?: string) {
    return addRunProgress(this.table.doc, this.table.name, runKey(tenant, runId), delta, lastResultAt);
  }

  async updateRun(tenant: string, runId: string, patch: RunPatch): Promise<void> {
    const fields: Record<string, unknown> = { updatedAt: new Date().toISOString() };
    for (const [name, value] of Object.entries(patch)) {
      fields[name] = name === 'totals' && value !== undefined ? JSON.stringify(value) : value;
    }
    await this.table.patch(runKey(tenant, runId), fields, `run ${runId} not found`);
  }

  async listRuns(tenant: string): Promise<RunRecord[]> {
    const items = await this.table.queryAll(keySegment(tenant), 'run#');
    const runs = await Promise.all(items.map((item) => this.runFromItem(item)));
    return runs.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  // ---- samples ----

  async putSamples(samples: SampleRecord[]): Promise<void> {
    let next = 0;
    // Counted per run: only the samples this call actually added.
    const added = new Map<string, { tenant: string; runId: string; count: number; running: number }>();
    const worker = async () => {
      while (next < samples.length) {
        const sample = samples[next++] as SampleRecord;
        // An existing sample keeps its progress: the failed condition is the "already there" answer.
        const { written } = await this.table.putIf(sampleToItem(sample), 'attribute_not_exists(pk)');
        if (!written) continue;
        const key = `${sample.tenant}\n${sample.runId}`;
        const entry = added.get(key) ?? { tenant: sample.tenant, runId: sample.runId, count: 0, running: 0 };
        entry.count++;
        if (sample.status === 'running') entry.running++;
        added.set(key, entry);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PUT_CONCURRENCY, samples.length) }, worker));
    for (const a of added.values())
      await this.addProgress(a.tenant, a.runId, samplesDelta(a.count, a.running));
  }

  async getSample(tenant: string, runId: string, sampleId: string): Promise<SampleRecord | undefined> {
    const item = await this.table.get(sampleItemKey(tenant, runId, 'sample', sampleId));
    return item ? itemToSample(item) : undefined;
  }

  async updateSample(tenant: string, runId: string, sampleId: string, patch: SamplePatch): Promise<void> {
    const old = await this.table.patch(
      sampleItemKey(tenant, runId, 'sample', sampleId),
      { ...patch, updatedAt: new Date().toISOString() },
      `sample ${sampleId} of run ${runId} not found`,
    );
    // Before its result, only whether a sample is running counts; after it, the result's status does.
    const from = old.status as SampleRecord['status'] | undefined;
    const to = patch.status;
    if (!to || !from || to === from) return;
    if (await this.table.get(sampleItemKey(tenant, runId, 'result', sampleId))) return;
    await this.addProgress(tenant, runId, statusChangeDelta(from, to));
  }

  async listSamples(tenant: string, runId: string): Promise<SampleRecord[]> {
    const items = await this.table.queryAll(runPartition(tenant, runId), 'sample#');
    return items.map(itemToSample).sort(bySampleId);
  }

  // ---- checkpoints ----

  async saveCheckpoint(
    tenant: string,
    runId: string,
    sampleId: string,
    checkpoint: Checkpoint,
  ): Promise<boolean> {
    const state = await this.payloads.pack(
      JSON.stringify(checkpoint.state),
      tenant,
      runId,
      `checkpoints/${keySegment(sampleId)}/${checkpoint.seq}`,
    );
    const { written, old } = await this.table.putIf(
      checkpointToItem(tenant, runId, sampleId, checkpoint, state),
      'attribute_not_exists(pk) OR #seq < :seq',
      {
        ExpressionAttributeNames: { '#seq': 'seq' },
        ExpressionAttributeValues: { ':seq': checkpoint.seq },
        ReturnValues: 'ALL_OLD',
      },
    );
    if (!written) {
      await this.payloads.drop(state);
      return false;
    }
    // The replaced checkpoint's blob is dropped only now that the new one is committed.
    if (old && typeof old.stateRef === 'string') await this.payloads.drop({ ref: old.stateRef });
    return true;
  }

  async loadCheckpoint(tenant: string, runId: string, sampleId: string): Promise<Checkpoint | undefined> {
    const key = sampleItemKey(tenant, runId, 'checkpoint', sampleId);
    // A newer save may replace the item and drop its blob between our two reads: read again then.
    for (let attempt = 0; attempt < 5; attempt++) {
      const item = await this.table.get(key);
      if (!item) return undefined;
      const state = await this.payloads.unpack(packedOf(item, 'state'));
      if (state !== undefined) {
        return {
          seq: item.seq as number,
          savedAt: item.savedAt as string,
          state: JSON.parse(state) as JsonObject,
        };
      }
    }
    throw new Error(`checkpoint of sample ${sampleId} in run ${runId} points to state that is missing`);
  }

  // ---- results ----

  async putResult(result: ResultRecord): Promise<WriteOnce> {
    const body = await this.payloads.pack(
      JSON.stringify(result),
      result.tenant,
      result.runId,
      `results/${keySegment(result.sampleId)}`,
    );
    const { written } = await this.table.putIf(resultToItem(result, body), 'attribute_not_exists(pk)');
    if (!written) {
      // First write wins: a repeated result is neither stored nor counted again.
      await this.payloads.drop(body);
      return 'exists';
    }
    const sample = await this.getSample(result.tenant, result.runId, result.sampleId);
    await this.addProgress(
      result.tenant,
      result.runId,
      resultDelta(result, sample?.status),
      result.writtenAt,
    );
    return 'written';
  }

  private async resultFromItem(item: Item): Promise<ResultRecord> {
    return JSON.parse(await this.payloads.unpackOrThrow(packedOf(item, 'body'), 'result')) as ResultRecord;
  }

  async getResult(tenant: string, runId: string, sampleId: string): Promise<ResultRecord | undefined> {
    const item = await this.table.get(sampleItemKey(tenant, runId, 'result', sampleId));
    return item ? this.resultFromItem(item) : undefined;
  }

  async listResults(tenant: string, runId: string): Promise<ResultRecord[]> {
    const items = await this.table.queryAll(runPartition(tenant, runId), 'result#');
    const results = await Promise.all(items.map((item) => this.resultFromItem(item)));
    return results.sort(bySampleId);
  }

  // ---- rate buckets (dynamo-rate-buckets.ts) ----

  takeToken(key: string, limit: RateLimit, nowMs: number): Promise<RateDecision> {
    return this.buckets.takeToken(key, limit, nowMs);
  }

  bucketPausedUntil(key: string): Promise<number> {
    return this.buckets.pausedUntil(key);
  }

  pauseBucket(key: string, untilMs: number): Promise<void> {
    return this.buckets.pause(key, untilMs);
  }
}
