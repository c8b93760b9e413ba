/**
 * `RunMemoryStore` on the run table: one item per sample in the run's partition,
 * pk `<tenant>#run#<runId>`, sk `memory#<sampleId>`, put with `attribute_not_exists(pk)`. Append-only
 * items instead of one list updated in place: samples ending together never lose each other's lines.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { runPartition } from './dynamo-items.ts';
import { keySegment } from './keys.ts';
import { boundedEntry, type RunMemoryEntry, type RunMemoryStore } from './run-memory-ports.ts';

const PREFIX = 'memory#';

export class DynamoRunMemoryStore implements RunMemoryStore {
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;

  constructor(options: { client: DynamoDBClient; table: string }) {
    this.doc = DynamoDBDocumentClient.from(options.client, {
      marshallOptions: { removeUndefinedValues: true },
    });
    this.table = options.table;
  }

  async append(tenant: string, runId: string, entry: RunMemoryEntry): Promise<boolean> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            pk: runPartition(tenant, runId),
            sk: `${PREFIX}${keySegment(entry.sampleId)}`,
            // Lines are a few hundred bytes each, at most six: a JSON string well inside an item.
            entry: JSON.stringify(boundedEntry(entry)),
            writtenAt: entry.writtenAt,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return false;
      throw err;
    }
  }

  async list(tenant: string, runId: string): Promise<RunMemoryEntry[]> {
    const entries: RunMemoryEntry[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': runPartition(tenant, runId), ':prefix': PREFIX },
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? [])
        if (typeof item.entry === 'string') entries.push(JSON.parse(item.entry) as RunMemoryEntry);
      start = page.LastEvaluatedKey;
    } while (start);
    return entries.sort((a, b) => a.writtenAt.localeCompare(b.writtenAt));
  }
}
