/**
 * JSON payloads of DynamoDB items by value or by pointer: above the inline limit (items are capped at
 * 400 KB) the payload goes to the blob store and the item keeps its key. Blob keys live beside the
 * run's evidence (`<tenant>/_state/…`), never inside `run_<id>/`, so the manifest check never takes
 * them for evidence.
 */
import { randomUUID } from 'node:crypto';
import type { Packed } from './dynamo-items.ts';
import { keySegment } from './keys.ts';
import type { EvidenceStore } from './ports.ts';

export class DynamoPayloads {
  constructor(
    private readonly blobs: EvidenceStore,
    private readonly inlineLimit: number,
  ) {}

  async pack(json: string, tenant: string, runId: string, what: string): Promise<Packed> {
    if (Buffer.byteLength(json, 'utf8') <= this.inlineLimit) return { inline: json };
    const ref = `${keySegment(tenant)}/_state/run_${keySegment(runId)}/${what}-${randomUUID()}.json`;
    await this.blobs.put(ref, json, 'application/json');
    return { ref };
  }

  /** The payload; undefined when its blob is gone (a newer write may have replaced it). */
  async unpack(packed: Packed): Promise<string | undefined> {
    if ('inline' in packed) return packed.inline;
    const bytes = await this.blobs.get(packed.ref);
    return bytes === undefined ? undefined : Buffer.from(bytes).toString('utf8');
  }

  async unpackOrThrow(packed: Packed, what: string): Promise<string> {
    const json = await this.unpack(packed);
    if (json === undefined)
      throw new Error(`${what} points to ${'ref' in packed ? packed.ref : ''}, which is missing`);
    return json;
  }

  /** Drops a payload's blob (after its item was not written, or was replaced). */
  async drop(packed: Packed): Promise<void> {
    if ('ref' in packed) await this.blobs.delete(packed.ref);
  }
}
