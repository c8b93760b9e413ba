/**
 * The few operations the DynamoDB stores build on, over one table through the document client: a
 * consistent get, a put guarded by a condition (false, nothing written, when it does not hold), a Query
 * of a key prefix that follows every page, and a patch of an existing item's fields.
 */
import { ConditionalCheckFailedException, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  type PutCommandInput,
  QueryCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { Item, ItemKey } from './dynamo-items.ts';

export const isConditionFailed = (err: unknown) => err instanceof ConditionalCheckFailedException;

export class DynamoTable {
  readonly doc: DynamoDBDocumentClient;

  constructor(
    client: DynamoDBClient,
    readonly name: string,
  ) {
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
  }

  async get(key: ItemKey): Promise<Item | undefined> {
    const out = await this.doc.send(new GetCommand({ TableName: this.name, Key: key, ConsistentRead: true }));
    return out.Item;
  }

  /** A put with a condition: false (and nothing written) when the condition does not hold. */
  async putIf(
    item: Item,
    condition: string,
    extra: Omit<PutCommandInput, 'TableName' | 'Item' | 'ConditionExpression'> = {},
  ): Promise<{ written: boolean; old?: Item }> {
    try {
      const out = await this.doc.send(
        new PutCommand({ TableName: this.name, Item: item, ConditionExpression: condition, ...extra }),
      );
      return { written: true, ...(out.Attributes ? { old: out.Attributes } : {}) };
    } catch (err) {
      if (isConditionFailed(err)) return { written: false };
      throw err;
    }
  }

  /** Every item of a partition whose sort key starts with `prefix`, following Query's pages (1 MB each). */
  async queryAll(pk: string, prefix: string): Promise<Item[]> {
    const items: Item[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.doc.send(
        new QueryCommand({
          TableName: this.name,
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
   * SET the patch's defined fields, REMOVE the ones given as undefined; only on an existing item
   * (else throws `missing`). Returns the changed attributes as they were before.
   */
  async patch(key: ItemKey, fields: Record<string, unknown>, missing: string): Promise<Item> {
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
          TableName: this.name,
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
}
