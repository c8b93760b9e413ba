/**
 * `RunMemoryStore` on the run table: one item per sample in the run's partition,
 * pk `<tenant>#run#<runId>`, sk `memory#<sampleId>`, put with `attribute_not_exists(pk)`. Append-only
 * items instead of one list updated in place: samples ending together never lose each other's lines.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { runPartition } from './dynamo-items.ts';
import { DynamoTable } from './dynamo-table.ts';
import { keySegment } from './keys.ts';
import { boundedEntry, type RunMemoryEntry, type RunMemoryStore } from './run-memory-ports.ts';

const PREFIX = 'memory#';

export class DynamoRunMemoryStore implements RunMemoryStore {
  private readonly table: DynamoTable;

  constructor(options: { client: DynamoDBClient; table: string }) {
    this.table = new DynamoTable(options.client, options.table);
  }

  async append(tenant: string, runId: string, entry: RunMemoryEntry): Promise<boolean> {
    const put = await this.table.putIf(
      {
        pk: runPartition(tenant, runId),
        sk: `${PREFIX}${keySegment(entry.sampleId)}`,
        // Lines are a few hundred bytes each, at most six: a JSON string well inside an item.
        entry: JSON.stringify(boundedEntry(entry)),
        writtenAt: entry.writtenAt,
      },
      'attribute_not_exists(pk)',
    );
    return put.written;
  }

  async list(tenant: string, runId: string): Promise<RunMemoryEntry[]> {
    const items = await this.table.queryAll(runPartition(tenant, runId), PREFIX);
    return items
      .flatMap((item) => (typeof item.entry === 'string' ? [JSON.parse(item.entry) as RunMemoryEntry] : []))
      .sort((a, b) => a.writtenAt.localeCompare(b.writtenAt));
  }
}
