/**
 * `RunStore` on one DynamoDB table (design in dynamo-items.ts). Every guarantee of the port rests on a
 * single-item condition, because DynamoDB Local stand-ins (and cheap designs) have no transactions:
 * runs and results are written with `attribute_not_exists` (write-once), checkpoints only when their
 * seq is above the stored one, rate buckets with a compare-and-set on their `version`. The run item
 * keeps the run's progress (counts, tokens, cost) by atomic `ADD` as samples and results are written,
 * once per result that this store actually wrote, so a status read is one GetItem, not a Query of
 * every sample and result.
 * JSON payloads above `inlineLimitBytes` go to the blob store (S3) and the item keeps a pointer.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import {
  bucketKey,
  bucketToItem,
  bySampleId,
  checkpointToItem,
  type Item,
  type ItemKey,
  itemToBucket,
  itemToRun,
  itemToSample,
  type Packed,
  packedOf,
  resultToItem,
  runKey,
  runPartition,
  runToItem,
  sampleItemKey,
  sampleToItem,
} from './dynamo-items.ts';
import { addRunProgress, itemToProgress, progressAttributes } from './dynamo-progress.ts';
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
import { type BucketState, pausedUntil, takeFrom } from './token-bucket.ts';

export interface DynamoRunStoreOptions {
  client: DynamoDBClient;
  table: string;
  /** Where payloads too big for an item go (the run's S3 evidence store on AWS). */
  blobs: EvidenceStore;
  /** Payloads above this many bytes are stored by pointer (default 300 KB; items are capped at 400 KB). */
  inlineLimitBytes?: number;
}

const isConditionFailed = (err: unknown) => err instanceof ConditionalCheckFailedException;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Samples written at once by putSamples: enough to hide latency, few enough not to be throttled. */
const PUT_CONCURRENCY = 16;
/** Compare-and-set attempts on a hot rate bucket before answering "not now" instead. */
const BUCKET_ATTEMPTS = 12;

export class DynamoRunStore implements RunStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly blobs: EvidenceStore;
  private readonly inlineLimit: number;

  constructor(options: DynamoRunStoreOptions) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.table = options.table;
    this.blobs = options.blobs;
    this.inlineLimit = options.inlineLimitBytes ?? 300_000;
  }

  // ---- payloads by value or by pointer ----

  /** Blob keys live beside the run's evidence (`<tenant>/_state/…`), never inside `run_<id>/`,
   * so they are not mistaken for evidence by the manifest check. */
  private async pack(json: string, tenant: string, runId: string, what: string): Promise<Packed> {
    if (Buffer.byteLength(json, 'utf8') <= this.inlineLimit) return { inline: json };
    const ref = `${keySegment(tenant)}/_state/run_${keySegment(runId)}/${what}-${randomUUID()}.json`;
    await this.blobs.put(ref, json, 'application/json');
    return { ref };
  }

  private async unpack(packed: Packed): Promise<string | undefined> {
    if ('inline' in packed) return packed.inline;
    const bytes = await this.blobs.get(packed.ref);
    return bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
  }

  private async unpackOrThrow(packed: Packed, what: string): Promise<string> {
    const json = await this.unpack(packed);
    if (json === undefined)
      throw new Error(`${what} points to ${'ref' in packed ? packed.ref : ''}, which is missing`);
    return json;
  }

  private async dropBlob(packed: Packed): Promise<void> {
    if ('ref' in packed) await this.blobs.delete(packed.ref);
  }

  // ---- table primitives ----

  private async get(key: ItemKey): Promise<Item | undefined> {
    const out = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }),
    );
    return out.Item;
  }

  /** A put with a condition: false (and nothing written) when the condition does not hold. */
  private async putIf(
    item: Item,
    condition: string,
    extra: Omit<PutCommandInput, 'TableName' | 'Item' | 'ConditionExpression'> = {},
  ): Promise<{ written: boolean; old?: Item }> {
    try {
      const out = await this.doc.send(
        new PutCommand({ TableName: this.table, Item: item, ConditionExpression: condition, ...extra }),
      );
      return { written: true, ...(out.Attributes ? { old: out.Attributes } : {}) };
    } catch (err) {
      if (isConditionFailed(err)) return { written: false };
      throw err;
    }
  }

  /** Every item of a partition whose sort key starts with `prefix`, following Query's pages (1 MB each). */
  private async queryAll(pk: string, prefix: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': pk, ':prefix': prefix },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    return items;
  }

  /**
   * SET the patch's defined fields, REMOVE the ones given as undefined; only on an existing item.
   * Returns the changed attributes as they were before.
   */
  private async patch(key: ItemKey, fields: Record<string, unknown>, missing: string): Promise<Item> {
    const sets: string[] = [];
    const removes: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    for (const [i, [name, value]] of Object.entries(fields).entries()) {
      names[`#f${i}`] = name;
      if (value === undefined) removes.push(`#f${i}`);
      else {
        sets.push(`#f${i} = :v${i}`);
        values[`:v${i}`] = value;
      }
    }
    const expression = [
      sets.length ? `SET ${sets.join(', ')}` : '',
      removes.length ? `REMOVE ${removes.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    try {
      const out = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: key,
          UpdateExpression: expression,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ReturnValues: 'UPDATED_OLD',
          ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
        }),
      );
      return out.Attributes ?? {};
    } catch (err) {
      if (isConditionFailed(err)) throw new Error(missing);
      throw err;
    }
  }

  // ---- runs ----

  async createRun(run: RunRecord): Promise<WriteOnce> {
    const spec = await this.pack(JSON.stringify(run.spec), run.tenant, run.runId, 'spec');
    const { written } = await this.putIf(
      { ...runToItem(run, spec), ...progressAttributes(emptyProgress()) },
      'attribute_not_exists(pk)',
    );
    if (!written) await this.dropBlob(spec);
    return written ? 'written' : 'exists';
  }

  private async runFromItem(item: Item): Promise<RunRecord> {
    const spec = JSON.parse(await this.unpackOrThrow(packedOf(item, 'spec'), 'run spec')) as JsonObject;
    return itemToRun(item, spec);
  }

  async getRun(tenant: string, runId: string): Promise<RunRecord | undefined> {
    const item = await this.get(runKey(tenant, runId));
    return item ? this.runFromItem(item) : undefined;
  }

  // ---- the run's kept progress ----

  async runProgress(tenant: string, runId: string): Promise<RunProgress | undefined> {
    const item = await this.get(runKey(tenant, runId));
    return item ? itemToProgress(item) : undefined;
  }

  private addProgress(tenant: string, runId: string, delta: ProgressDelta, lastResultAt?: string) {
    return addRunProgress(this.doc, this.table, runKey(tenant, runId), delta, lastResultAt);
  }

  async updateRun(tenant: string, runId: string, patch: RunPatch): Promise<void> {
    const fields: Record<string, unknown> = { updatedAt: new Date().toISOString() };
    for (const [name, value] of Object.entries(patch)) {
      fields[name] = name === 'totals' && value !== undefined ? JSON.stringify(value) : value;
    }
    await this.patch(runKey(tenant, runId), fields, `run ${runId} not found`);
  }

  async listRuns(tenant: string): Promise<RunRecord[]> {
    const items = await this.queryAll(keySegment(tenant), 'run#');
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
        const { written } = await this.putIf(sampleToItem(sample), 'attribute_not_exists(pk)');
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
    const item = await this.get(sampleItemKey(tenant, runId, 'sample', sampleId));
    return item ? itemToSample(item) : undefined;
  }

  async updateSample(tenant: string, runId: string, sampleId: string, patch: SamplePatch): Promise<void> {
    const old = await this.patch(
      sampleItemKey(tenant, runId, 'sample', sampleId),
      { ...patch, updatedAt: new Date().toISOString() },
      `sample ${sampleId} of run ${runId} not found`,
    );
    // Before its result, only whether a sample is running counts; after it, the result's status does.
    const from = old.status as SampleRecord['status'] | undefined;
    const to = patch.status;
    if (!to || !from || to === from) return;
    if (await this.get(sampleItemKey(tenant, runId, 'result', sampleId))) return;
    await this.addProgress(tenant, runId, statusChangeDelta(from, to));
  }

  async listSamples(tenant: string, runId: string): Promise<SampleRecord[]> {
    const items = await this.queryAll(runPartition(tenant, runId), 'sample#');
    return items.map(itemToSample).sort(bySampleId);
  }

  // ---- checkpoints ----

  async saveCheckpoint(
    tenant: string,
    runId: string,
    sampleId: string,
    checkpoint: Checkpoint,
  ): Promise<boolean> {
    const state = await this.pack(
      JSON.stringify(checkpoint.state),
      tenant,
      runId,
      `checkpoints/${keySegment(sampleId)}/${checkpoint.seq}`,
    );
    const { written, old } = await this.putIf(
      checkpointToItem(tenant, runId, sampleId, checkpoint, state),
      'attribute_not_exists(pk) OR #seq < :seq',
      {
        ExpressionAttributeNames: { '#seq': 'seq' },
        ExpressionAttributeValues: { ':seq': checkpoint.seq },
        ReturnValues: 'ALL_OLD',
      },
    );
    if (!written) {
      await this.dropBlob(state);
      return false;
    }
    // The replaced checkpoint's blob is dropped only now that the new one is committed.
    if (old && typeof old.stateRef === 'string') await this.blobs.delete(old.stateRef);
    return true;
  }

  async loadCheckpoint(tenant: string, runId: string, sampleId: string): Promise<Checkpoint | undefined> {
    const key = sampleItemKey(tenant, runId, 'checkpoint', sampleId);
    // A newer save may replace the item and drop its blob between our two reads: read again then.
    for (let attempt = 0; attempt < 5; attempt++) {
      const item = await this.get(key);
      if (!item) return undefined;
      const state = await this.unpack(packedOf(item, 'state'));
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
    const body = await this.pack(
      JSON.stringify(result),
      result.tenant,
      result.runId,
      `results/${keySegment(result.sampleId)}`,
    );
    const { written } = await this.putIf(resultToItem(result, body), 'attribute_not_exists(pk)');
    if (!written) {
      // First write wins: a repeated result is neither stored nor counted again.
      await this.dropBlob(body);
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
    return JSON.parse(await this.unpackOrThrow(packedOf(item, 'body'), 'result')) as ResultRecord;
  }

  async getResult(tenant: string, runId: string, sampleId: string): Promise<ResultRecord | undefined> {
    const item = await this.get(sampleItemKey(tenant, runId, 'result', sampleId));
    return item ? this.resultFromItem(item) : undefined;
  }

  async listResults(tenant: string, runId: string): Promise<ResultRecord[]> {
    const items = await this.queryAll(runPartition(tenant, runId), 'result#');
    const results = await Promise.all(items.map((item) => this.resultFromItem(item)));
    return results.sort(bySampleId);
  }

  // ---- rate buckets ----

  /** Writes `next` only if the bucket is still the `state` it was computed from. */
  private async swapBucket(key: string, state: BucketState | undefined, next: BucketState): Promise<boolean> {
    const { written } = await this.putIf(
      bucketToItem(key, next),
      state ? '#version = :version' : 'attribute_not_exists(pk)',
      state
        ? {
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': state.version },
          }
        : {},
    );
    return written;
  }

  private async readBucket(key: string): Promise<BucketState | undefined> {
    const item = await this.get(bucketKey(key));
    return item ? itemToBucket(item) : undefined;
  }

  async takeToken(key: string, limit: RateLimit, nowMs: number): Promise<RateDecision> {
    for (let attempt = 0; attempt < BUCKET_ATTEMPTS; attempt++) {
      const state = await this.readBucket(key);
      const { decision, next } = takeFrom(state, limit, nowMs);
      // A refusal changes nothing another taker needs to see: no write, no contention.
      if (!decision.granted) return decision;
      if (await this.swapBucket(key, state, next)) return decision;
      // Another worker took from the bucket between our read and write: read it again.
      await sleep(Math.random() * (5 + attempt * 5));
    }
    // Constant contention means others are being served; come back shortly rather than fail.
    return { granted: false, waitMs: 20 + Math.round(Math.random() * 30) };
  }

  async bucketPausedUntil(key: string): Promise<number> {
    return (await this.readBucket(key))?.pausedUntilMs ?? 0;
  }

  async pauseBucket(key: string, untilMs: number): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const state = await this.readBucket(key);
      if (await this.swapBucket(key, state, pausedUntil(state, untilMs, Date.now()))) return;
      await sleep(Math.random() * (5 + attempt * 5));
    }
    throw new Error(`could not pause rate bucket ${key}: it kept changing under 50 attempts`);
  }
}
