// Child process for test/support/aws-local.ts: runs the AWS emulators on 127.0.0.1 random ports and
// prints their ports as one JSON line. A child of its own because s3rver encrypts ListObjectsV2
// continuation tokens with DES, which Node 20 only has under --openssl-legacy-provider; the parent
// starts this script with that flag so the test workers themselves keep the default OpenSSL setup.
import { createHash, randomUUID } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { createSqsServer } from 'local-aws-sqs';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
type Dynalite = (options: Record<string, unknown>) => Server;
interface S3rverObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: Record<string, string>;
}
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}

const require = createRequire(import.meta.url);
const wanted = new Set(process.argv.slice(2));
const s3Directory = process.env.S3RVER_DIRECTORY;
const ports: Record<string, number> = {};
const closers: (() => Promise<void>)[] = [];

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

if (wanted.has('dynamo')) {
  const dynalite = require('dynalite') as Dynalite;
  // Tables ACTIVE at once: the tests create theirs and use it straight away.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  ports.dynamo = await listen(server);
  closers.push(() => new Promise((r) => server.close(() => r())));
}
/**
 * S3 answers a PUT once the object is stored, whole, and a GET after it reads it (strong
 * read-after-write). s3rver 3.7.1 answers as soon as its write stream is opened and fed: a GET right
 * after can read the old or a half-written file, and two writes of one key can mix their bytes. A
 * run's manifest part is read and rewritten on every append, so once in many CI runs a part came
 * out spliced from two versions ("entry 1 is out of order"). Here a PUT writes a temp file and
 * renames it over the object before it is answered, as S3 behaves.
 */
function storeObjectsWhole(store: { prototype: S3rverStore }): void {
  store.prototype.putObject = async function putObject(this: S3rverStore, object) {
    const chunks: Buffer[] = [];
    if (Buffer.isBuffer(object.content)) chunks.push(object.content);
    else for await (const chunk of object.content) chunks.push(Buffer.from(chunk as Buffer));
    const body = Buffer.concat(chunks);
    const md5 = createHash('md5').update(body).digest('hex');
    const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
    await mkdir(dirname(objectPath), { recursive: true });
    const temp = `${objectPath}.${randomUUID()}.tmp`;
    await writeFile(temp, body);
    await this.putMetadata(object.bucket, object.key, object.metadata, md5);
    await rename(temp, objectPath);
    return { size: body.length, md5 };
  };
}

if (wanted.has('s3')) {
  if (!s3Directory) throw new Error('S3RVER_DIRECTORY must name an empty folder for s3rver');
  storeObjectsWhole(require('s3rver/lib/stores/filesystem.js') as { prototype: S3rverStore });
  const S3rver = require('s3rver') as S3rverClass;
  const s3 = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: s3Directory });
  ports.s3 = (await s3.run()).port;
  closers.push(() => s3.close());
}
if (wanted.has('sqs')) {
  const server = await createSqsServer({
    port: 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  ports.sqs = (server.address() as AddressInfo).port;
  closers.push(() => new Promise((r) => server.close(() => r())));
}

process.stdout.write(`${JSON.stringify(ports)}\n`);

async function stop(): Promise<void> {
  await Promise.allSettled(closers.map((close) => close()));
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
// The parent holds our stdin open; when it dies (even by SIGKILL), stdin ends and we go too.
process.stdin.on('end', stop);
process.stdin.resume();
