/**
 * `EvidenceStore` on S3. Every put sends the body's SHA-256 (`x-amz-checksum-sha256`), so S3 refuses
 * bytes that changed on the way, and keeps the hex digest in the object's metadata for later audits.
 * The digest returned is the one computed here, over the exact bytes sent: it is what the manifest
 * chains. Reads ask S3 to check the stored checksum too.
 */
import { createHash } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  NoSuchKey,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { evidenceHeaders } from './evidence-headers.ts';
import { checkEvidenceKey } from './local-evidence-store.ts';
import type { EvidenceObject, EvidenceStore } from './ports.ts';

export interface S3EvidenceStoreOptions {
  client: S3Client;
  bucket: string;
  /** Prepended to every key (with no slash added), e.g. `evidence/` to share a bucket. */
  prefix?: string;
}

export class S3EvidenceStore implements EvidenceStore {
  private readonly client: S3Client;
  readonly bucket: string;
  private readonly prefix: string;

  constructor(options: S3EvidenceStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
  }

  private objectKey(key: string): string {
    checkEvidenceKey(key);
    return this.prefix + key;
  }

  async put(key: string, body: Uint8Array | string, contentType?: string): Promise<EvidenceObject> {
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    const digest = createHash('sha256').update(bytes).digest();
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: bytes,
        ContentLength: bytes.byteLength,
        ContentType: contentType ?? 'application/octet-stream',
        ChecksumAlgorithm: 'SHA256',
        ChecksumSHA256: digest.toString('base64'),
        Metadata: { sha256: digest.toString('hex') },
      }),
    );
    return { key, sha256: digest.toString('hex'), bytes: bytes.byteLength };
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const out = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ChecksumMode: 'ENABLED' }),
      );
      if (!out.Body) return new Uint8Array();
      return await out.Body.transformToByteArray();
    } catch (err) {
      if (err instanceof NoSuchKey) return undefined;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: this.prefix + prefix,
          ContinuationToken: token,
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key) keys.push(object.Key.slice(this.prefix.length));
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  /** A presigned GET URL, so the API can hand out evidence without streaming it through a Lambda. */
  link(key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(
      this.client,
      // The bucket answers a presigned GET with the headers signed here: the same attachment rule
      // as the API's own evidence route (S3 cannot add nosniff or a CSP, so HTML never renders inline).
      new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        ResponseContentType: evidenceHeaders(key)['content-type'],
        ResponseContentDisposition: evidenceHeaders(key)['content-disposition'],
      }),
      { expiresIn: expiresInSeconds },
    );
  }
}
