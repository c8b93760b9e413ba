// Child process for test/support/aws-local.ts: runs the AWS emulators on 127.0.0.1 random ports and
// prints their ports as one JSON line. A child of its own because s3rver encrypts ListObjectsV2
// continuation tokens with DES, which Node 20 only has under --openssl-legacy-provider; the parent
// starts this script with that flag so the test workers themselves keep the default OpenSSL setup.
import type { Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createSqsServer } from 'local-aws-sqs';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (options: Record<string, unknown>) => S3rverInstance;
type Dynalite = (options: Record<string, unknown>) => Server;

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
if (wanted.has('s3')) {
  if (!s3Directory) throw new Error('S3RVER_DIRECTORY must name an empty folder for s3rver');
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
