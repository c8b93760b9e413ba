/**
 * `WorkflowStore` on the run table (same pk/sk design as dynamo-items.ts), documents above
 * `inlineLimitBytes` in S3 by pointer:
 *
 *   version   pk `<tenant>#workflow#<id>`   sk `v#<version, 10 digits>`   (written once)
 *   summary   pk `<tenant>#workflows`       sk `<id>`                      (latest version, for list)
 *
 * `keySegment` never emits `#`, so a workflow partition cannot meet a run's or another tenant's.
 * A version is put with `attribute_not_exists(pk)`: of two writers of version N, one gets `exists`.
 * Outcomes are a compare-and-set on the version item's `seq`, so concurrent samples lose no count.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Item } from './dynamo-items.ts';
import { DynamoTable, isConditionFailed } from './dynamo-table.ts';
import { fromKeySegment, keySegment } from './keys.ts';
import type { EvidenceStore, JsonObject, WriteOnce } from './ports.ts';
import {
  applyOutcome,
  DEFAULT_VERIFY_AFTER,
  type WorkflowOutcome,
  type WorkflowStore,
  type WorkflowSummary,
  type WorkflowVersionInput,
  type WorkflowVersionRecord,
  workflowName,
} from './workflow-ports.ts';

export interface DynamoWorkflowStoreOptions {
  client: DynamoDBClient;
  table: string;
  /** Where documents too big for an item go (the S3 evidence store on AWS). */
  blobs: EvidenceStore;
  inlineLimitBytes?: number;
  verifyAfter?: number;
}

const partition = (tenant: string, id: string) => `${keySegment(tenant)}#workflow#${keySegment(id)}`;
const listPartition = (tenant: string) => `${keySegment(tenant)}#workflows`;
const versionSk = (version: number) => `v#${String(version).padStart(10, '0')}`;
const OUTCOME_ATTEMPTS = 20;

export class DynamoWorkflowStore implements WorkflowStore {
  private readonly table: DynamoTable;
  private readonly blobs: EvidenceStore;
  private readonly inlineLimit: number;
  private readonly verifyAfter: number;

  constructor(options: DynamoWorkflowStoreOptions) {
    this.table = new DynamoTable(options.client, options.table);
    this.blobs = options.blobs;
    this.inlineLimit = options.inlineLimitBytes ?? 300_000;
    this.verifyAfter = options.verifyAfter ?? DEFAULT_VERIFY_AFTER;
  }

  private async toRecord(item: Item): Promise<WorkflowVersionRecord> {
    let json = typeof item.doc === 'string' ? item.doc : undefined;
    if (json === undefined && typeof item.docRef === 'string') {
      const bytes = await this.blobs.get(item.docRef);
      if (!bytes) throw new Error(`workflow document points to ${item.docRef}, which is missing`);
      json = Buffer.from(bytes).toString('utf8');
    }
    if (json === undefined) throw new Error('workflow item holds no document');
    return {
      tenant: String(item.tenant),
      id: String(item.id),
      version: Number(item.version),
      name: String(item.name),
      document: JSON.parse(json) as JsonObject,
      createdAt: String(item.createdAt),
      ...(typeof item.parent === 'number' ? { parent: item.parent } : {}),
      ...(typeof item.note === 'string' ? { note: item.note } : {}),
      verified: item.verified === true,
      streak: Number(item.streak ?? 0),
      ...(typeof item.signature === 'string' ? { signature: item.signature } : {}),
      runs: { ok: Number(item.runsOk ?? 0), failed: Number(item.runsFailed ?? 0) },
    };
  }

  async putVersion(input: WorkflowVersionInput): Promise<WriteOnce> {
    const json = JSON.stringify(input.document);
    const pk = partition(input.tenant, input.id);
    const sk = versionSk(input.version);
    let docRef: string | undefined;
    if (Buffer.byteLength(json, 'utf8') > this.inlineLimit) {
      // Keyed by version: a losing writer overwrites nothing the winner's item points to… unless it
      // raced on the same version, so the loser's copy gets its own name and is removed.
      docRef = `${keySegment(input.tenant)}/_workflows/${keySegment(input.id)}/${sk.slice(2)}-${Date.now()}-${Math.random().toString(36).slice(2)}.json`;
      await this.blobs.put(docRef, json, 'application/json');
    }
    const name = workflowName(input.document, input.id);
    const createdAt = new Date().toISOString();
    const put = await this.table
      .putIf(
        {
          pk,
          sk,
          tenant: input.tenant,
          id: input.id,
          version: input.version,
          name,
          createdAt,
          parent: input.parent,
          note: input.note,
          ...(docRef ? { docRef } : { doc: json }),
          verified: false,
          streak: 0,
          runsOk: 0,
          runsFailed: 0,
          seq: 0,
        },
        'attribute_not_exists(pk)',
      )
      .catch(async (err: unknown) => {
        if (docRef) await this.blobs.delete(docRef);
        throw err;
      });
    if (!put.written) {
      if (docRef) await this.blobs.delete(docRef);
      return 'exists';
    }
    // The summary only moves forward: a slow writer of an older version cannot lower `latest`.
    try {
      await this.table.doc.send(
        new UpdateCommand({
          TableName: this.table.name,
          Key: { pk: listPartition(input.tenant), sk: keySegment(input.id) },
          UpdateExpression: 'SET id = :id, #name = :name, latest = :v, updatedAt = :at',
          ConditionExpression: 'attribute_not_exists(latest) OR latest < :v',
          ExpressionAttributeNames: { '#name': 'name' },
          ExpressionAttributeValues: {
            ':id': input.id,
            ':name': name,
            ':v': input.version,
            ':at': createdAt,
          },
        }),
      );
    } catch (err) {
      if (!isConditionFailed(err)) throw err;
    }
    return 'written';
  }

  private async latestItem(tenant: string, id: string): Promise<Item | undefined> {
    const out = await this.table.doc.send(
      new QueryCommand({
        TableName: this.table.name,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :v)',
        ExpressionAttributeValues: { ':pk': partition(tenant, id), ':v': 'v#' },
        ScanIndexForward: false,
        Limit: 1,
        ConsistentRead: true,
      }),
    );
    return out.Items?.[0];
  }

  private item(tenant: string, id: string, version: number): Promise<Item | undefined> {
    return this.table.get({ pk: partition(tenant, id), sk: versionSk(version) });
  }

  async getVersion(tenant: string, id: string, version?: number): Promise<WorkflowVersionRecord | undefined> {
    const item =
      version === undefined ? await this.latestItem(tenant, id) : await this.item(tenant, id, version);
    return item ? this.toRecord(item) : undefined;
  }

  async listVersions(tenant: string, id: string): Promise<WorkflowVersionRecord[]> {
    const items = await this.table.queryAll(partition(tenant, id), 'v#');
    return Promise.all(items.map((item) => this.toRecord(item)));
  }

  async list(tenant: string): Promise<WorkflowSummary[]> {
    const items = await this.table.queryAll(listPartition(tenant), '');
    return items
      .map((item) => ({
        tenant,
        id: typeof item.id === 'string' ? item.id : fromKeySegment(String(item.sk)),
        name: String(item.name),
        latest: Number(item.latest),
        updatedAt: String(item.updatedAt),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async recordOutcome(
    tenant: string,
    id: string,
    version: number,
    outcome: WorkflowOutcome,
  ): Promise<WorkflowVersionRecord | undefined> {
    for (let attempt = 0; attempt < OUTCOME_ATTEMPTS; attempt++) {
      const item = await this.item(tenant, id, version);
      if (!item) return undefined;
      const now = await this.toRecord(item);
      const next = applyOutcome(now, outcome, this.verifyAfter);
      const seq = Number(item.seq ?? 0);
      try {
        await this.table.doc.send(
          new UpdateCommand({
            TableName: this.table.name,
            Key: { pk: partition(tenant, id), sk: versionSk(version) },
            UpdateExpression:
              'SET verified = :verified, streak = :streak, signature = :sig, runsOk = :ok, runsFailed = :failed, seq = :next',
            ConditionExpression: 'seq = :seq',
            ExpressionAttributeValues: {
              ':verified': next.verified,
              ':streak': next.streak,
              ':sig': next.signature ?? '',
              ':ok': next.runs.ok,
              ':failed': next.runs.failed,
              ':next': seq + 1,
              ':seq': seq,
            },
          }),
        );
        return { ...now, ...next };
      } catch (err) {
        if (!isConditionFailed(err)) throw err;
        await new Promise((r) => setTimeout(r, 2 + attempt * 3));
      }
    }
    throw new Error(
      `workflow ${id} v${version}: outcome not recorded after ${OUTCOME_ATTEMPTS} tries (contention)`,
    );
  }
}
