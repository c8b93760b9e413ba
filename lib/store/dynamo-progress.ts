/**
 * A run's kept progress on DynamoDB: flat number attributes on the run item (`pSamples`, `pRunning`,
 * `pResult_<status>`, `pPromptTokens`, …, and `pLastResultAt`), so every change is one atomic `ADD` on
 * one item: no read-modify-write, no transaction (dynalite has none). The counting rule is the local
 * store's (run-progress.ts), as deltas.
 */
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Item, ItemKey } from './dynamo-items.ts';
import { FINAL_SAMPLE_STATUSES, type RunProgress } from './ports.ts';
import type { ProgressDelta } from './run-progress.ts';

const isConditionFailed = (err: unknown) => err instanceof ConditionalCheckFailedException;

const PROGRESS_NUMBERS = [
  'samples',
  'running',
  'promptTokens',
  'completionTokens',
  'cachedTokens',
  'costUsd',
  'sampleMs',
] as const;
const progressName = (field: string) => `p${field[0]?.toUpperCase()}${field.slice(1)}`;
const resultCountName = (status: string) => `pResult_${status}`;
const PROGRESS_MARK = progressName('samples');
const LAST_RESULT_AT = 'pLastResultAt';

/** The attributes of a progress just started (all zero), for the run item as it is created. */
export function progressAttributes(p: RunProgress): Item {
  const item: Item = {};
  for (const field of PROGRESS_NUMBERS) item[progressName(field)] = p[field];
  for (const [status, n] of Object.entries(p.results)) item[resultCountName(status)] = n;
  if (p.lastResultAt) item[LAST_RESULT_AT] = p.lastResultAt;
  return item;
}

/** The progress kept on a run item; undefined for a run stored before progress was kept. */
export function itemToProgress(item: Item): RunProgress | undefined {
  if (typeof item[PROGRESS_MARK] !== 'number') return undefined;
  const numberOf = (name: string) => (typeof item[name] === 'number' ? (item[name] as number) : 0);
  const results: RunProgress['results'] = {};
  for (const status of ['pending', 'running', ...FINAL_SAMPLE_STATUSES] as const) {
    const n = numberOf(resultCountName(status));
    if (n > 0) results[status] = n;
  }
  const last = typeof item[LAST_RESULT_AT] === 'string' ? item[LAST_RESULT_AT] : undefined;
  return {
    samples: numberOf(progressName('samples')),
    // Two writers racing on one sample's status could take it below zero for a moment.
    running: Math.max(0, numberOf(progressName('running'))),
    results,
    promptTokens: numberOf(progressName('promptTokens')),
    completionTokens: numberOf(progressName('completionTokens')),
    cachedTokens: numberOf(progressName('cachedTokens')),
    costUsd: numberOf(progressName('costUsd')),
    sampleMs: numberOf(progressName('sampleMs')),
    ...(last ? { lastResultAt: last } : {}),
  };
}

/** One `ADD` update expression for a delta (undefined when it changes nothing). */
export function progressAdd(
  delta: ProgressDelta,
): { expression: string; names: Record<string, string>; values: Record<string, number> } | undefined {
  const adds: [string, number][] = [];
  for (const field of PROGRESS_NUMBERS) {
    const n = delta[field];
    if (n) adds.push([progressName(field), n]);
  }
  for (const [status, n] of Object.entries(delta.results ?? {}))
    if (n) adds.push([resultCountName(status), n]);
  if (adds.length === 0) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, number> = {};
  const parts = adds.map(([name, n], i) => {
    names[`#p${i}`] = name;
    values[`:p${i}`] = n;
    return `#p${i} :p${i}`;
  });
  return { expression: `ADD ${parts.join(', ')}`, names, values };
}

/**
 * Adds a change to the run's progress in one atomic update. A run stored before progress was kept
 * has none and gets none (readers count from the lists), rather than counts that start midway.
 */
export async function addRunProgress(
  doc: DynamoDBDocumentClient,
  table: string,
  key: ItemKey,
  delta: ProgressDelta,
  lastResultAt?: string,
): Promise<void> {
  const add = progressAdd(delta);
  if (add) {
    try {
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: add.expression,
          ConditionExpression: 'attribute_exists(#mark)',
          ExpressionAttributeNames: { ...add.names, '#mark': PROGRESS_MARK },
          ExpressionAttributeValues: add.values,
        }),
      );
    } catch (err) {
      if (isConditionFailed(err)) return;
      throw err;
    }
  }
  if (!lastResultAt) return;
  try {
    // Only forward: results of parallel samples land in any order.
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: key,
        UpdateExpression: 'SET #last = :at',
        ConditionExpression: 'attribute_exists(#mark) AND (attribute_not_exists(#last) OR #last < :at)',
        ExpressionAttributeNames: { '#mark': PROGRESS_MARK, '#last': LAST_RESULT_AT },
        ExpressionAttributeValues: { ':at': lastResultAt },
      }),
    );
  } catch (err) {
    if (!isConditionFailed(err)) throw err;
  }
}
