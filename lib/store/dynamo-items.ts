/**
 * The single-table design of the DynamoDB `RunStore`, as pure functions: keys, the table definition
 * (shared by the tests' emulator and the stack) and the record ↔ item mapping.
 *
 *   run          pk `<tenant>`                 sk `run#<runId>`
 *   sample       pk `<tenant>#run#<runId>`     sk `sample#<sampleId>`
 *   checkpoint   pk `<tenant>#run#<runId>`     sk `checkpoint#<sampleId>`
 *   result       pk `<tenant>#run#<runId>`     sk `result#<sampleId>`
 *   rate bucket  pk `#bucket#<key>`            sk `#bucket`
 *
 * Tenant and ids go through `keySegment`, which never emits `#`, so no id can reach into another
 * tenant's or run's partition, and a bucket key (starting with `#`) can never equal a tenant's.
 * Nested JSON (spec, state, data, input) is kept as a JSON string: DynamoDB maps reject some JSON
 * (empty keys, deep nesting), and a string's size is known before the write.
 */
import { keySegment } from './keys.ts';
import type { Checkpoint, JsonObject, ResultRecord, RunRecord, SampleRecord } from './ports.ts';
import type { BucketState } from './token-bucket.ts';

export interface ItemKey {
  pk: string;
  sk: string;
}

export type Item = Record<string, unknown>;

export const runKey = (tenant: string, runId: string): ItemKey => ({
  pk: keySegment(tenant),
  sk: `run#${keySegment(runId)}`,
});

/** Partition of everything a run holds per sample. */
export const runPartition = (tenant: string, runId: string): string =>
  `${keySegment(tenant)}#run#${keySegment(runId)}`;

export type SampleItemKind = 'sample' | 'checkpoint' | 'result';

export const sampleItemKey = (
  tenant: string,
  runId: string,
  kind: SampleItemKind,
  sampleId: string,
): ItemKey => ({
  pk: runPartition(tenant, runId),
  sk: `${kind}#${keySegment(sampleId)}`,
});

export const bucketKey = (key: string): ItemKey => ({ pk: `#bucket#${keySegment(key)}`, sk: '#bucket' });

/** CreateTable input for the run table: two string keys, on-demand billing. */
export function runTableDefinition(tableName: string) {
  return {
    TableName: tableName,
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' as const },
      { AttributeName: 'sk', AttributeType: 'S' as const },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' as const },
      { AttributeName: 'sk', KeyType: 'RANGE' as const },
    ],
    BillingMode: 'PAY_PER_REQUEST' as const,
  };
}

/**
 * A JSON payload held in the item (`inline`) or, when larger than the inline limit, in the blob store
 * under `ref` (DynamoDB caps an item at 400 KB; the rest of the item needs room too).
 */
export type Packed = { inline: string } | { ref: string };

function str(item: Item, name: string): string {
  const value = item[name];
  if (typeof value !== 'string') throw new Error(`stored item ${String(item.sk)} has no string "${name}"`);
  return value;
}

function num(item: Item, name: string): number {
  const value = item[name];
  if (typeof value !== 'number') throw new Error(`stored item ${String(item.sk)} has no number "${name}"`);
  return value;
}

function optStr(item: Item, name: string): string | undefined {
  const value = item[name];
  return typeof value === 'string' ? value : undefined;
}

/** Reads a packed payload back from its two attributes (`<name>` inline or `<name>Ref`). */
export function packedOf(item: Item, name: string): Packed {
  const inline = item[name];
  if (typeof inline === 'string') return { inline };
  return { ref: str(item, `${name}Ref`) };
}

export function packedAttributes(name: string, packed: Packed): Item {
  return 'inline' in packed ? { [name]: packed.inline } : { [`${name}Ref`]: packed.ref };
}

export function runToItem(run: RunRecord, spec: Packed): Item {
  return {
    ...runKey(run.tenant, run.runId),
    tenant: run.tenant,
    runId: run.runId,
    status: run.status,
    ...packedAttributes('spec', spec),
    sampleCount: run.sampleCount,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    ...(run.totals !== undefined ? { totals: JSON.stringify(run.totals) } : {}),
    ...(run.manifestHead !== undefined ? { manifestHead: run.manifestHead } : {}),
    ...(run.reason !== undefined ? { reason: run.reason } : {}),
    ...(run.jobDigest !== undefined ? { jobDigest: run.jobDigest } : {}),
  };
}

export function itemToRun(item: Item, spec: JsonObject): RunRecord {
  const totals = optStr(item, 'totals');
  const manifestHead = optStr(item, 'manifestHead');
  const reason = optStr(item, 'reason');
  const jobDigest = optStr(item, 'jobDigest');
  return {
    tenant: str(item, 'tenant'),
    runId: str(item, 'runId'),
    status: str(item, 'status') as RunRecord['status'],
    spec,
    sampleCount: num(item, 'sampleCount'),
    createdAt: str(item, 'createdAt'),
    updatedAt: str(item, 'updatedAt'),
    ...(totals !== undefined ? { totals: JSON.parse(totals) as JsonObject } : {}),
    ...(manifestHead !== undefined ? { manifestHead } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(jobDigest !== undefined ? { jobDigest } : {}),
  };
}

export function sampleToItem(sample: SampleRecord): Item {
  return {
    ...sampleItemKey(sample.tenant, sample.runId, 'sample', sample.sampleId),
    tenant: sample.tenant,
    runId: sample.runId,
    sampleId: sample.sampleId,
    url: sample.url,
    input: JSON.stringify(sample.input),
    status: sample.status,
    attempts: sample.attempts,
    updatedAt: sample.updatedAt,
    ...(sample.reason !== undefined ? { reason: sample.reason } : {}),
  };
}

export function itemToSample(item: Item): SampleRecord {
  const reason = optStr(item, 'reason');
  return {
    tenant: str(item, 'tenant'),
    runId: str(item, 'runId'),
    sampleId: str(item, 'sampleId'),
    url: str(item, 'url'),
    input: JSON.parse(str(item, 'input')) as Record<string, string>,
    status: str(item, 'status') as SampleRecord['status'],
    attempts: num(item, 'attempts'),
    updatedAt: str(item, 'updatedAt'),
    ...(reason !== undefined ? { reason } : {}),
  };
}

export function checkpointToItem(
  tenant: string,
  runId: string,
  sampleId: string,
  checkpoint: Checkpoint,
  state: Packed,
): Item {
  return {
    ...sampleItemKey(tenant, runId, 'checkpoint', sampleId),
    seq: checkpoint.seq,
    savedAt: checkpoint.savedAt,
    ...packedAttributes('state', state),
  };
}

/** The whole result record is the payload; status and sampleId stay visible for the console. */
export function resultToItem(result: ResultRecord, body: Packed): Item {
  return {
    ...sampleItemKey(result.tenant, result.runId, 'result', result.sampleId),
    sampleId: result.sampleId,
    status: result.status,
    writtenAt: result.writtenAt,
    ...packedAttributes('body', body),
  };
}

export function bucketToItem(key: string, state: BucketState): Item {
  return { ...bucketKey(key), ...state };
}

export function itemToBucket(item: Item): BucketState {
  return {
    tokens: num(item, 'tokens'),
    updatedMs: num(item, 'updatedMs'),
    pausedUntilMs: num(item, 'pausedUntilMs'),
    version: num(item, 'version'),
  };
}

/** Sorts like the local adapter does, so every adapter lists in the same order. */
export const bySampleId = (a: { sampleId: string }, b: { sampleId: string }) =>
  a.sampleId.localeCompare(b.sampleId);
