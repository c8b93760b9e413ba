/**
 * bench:stores — the store work of one sample as a run does it (claim, rate token, checkpoint, a
 * screenshot and a result through the manifest, the write-once result, done), on local files and on
 * DynamoDB + S3 (dynalite + s3rver here): time per sample, and requests per sample by kind, which is
 * what the AWS cost of the store part scales with. Then sealing and verifying the run's manifest.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoRunStore } from '../../lib/store/dynamo-run-store.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { ManifestWriter, sealManifest, verifyRun } from '../../lib/store/manifest-store.ts';
import type { EvidenceStore, RunStore } from '../../lib/store/ports.ts';
import { waitForToken } from '../../lib/store/rate-gate.ts';
import { S3EvidenceStore } from '../../lib/store/s3-evidence-store.ts';
import { startAwsLocal } from '../support/aws-local.ts';
import { resultRecord, runRecord, sampleRecord } from '../support/run-store-contract.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const screenshot = new Uint8Array(60_000).map((_, i) => (i * 7) % 256);

const dynamoCounts = new Map<string, number>();
const s3Counts = new Map<string, number>();
const bump = (counts: Map<string, number>, name: string | undefined) =>
  counts.set(name ?? 'unknown', (counts.get(name ?? 'unknown') ?? 0) + 1);

async function oneSample(runs: RunStore, evidence: EvidenceStore, tenant: string, runId: string, id: string) {
  await runs.updateSample(tenant, runId, id, { status: 'running', attempts: 1 });
  await waitForToken(runs, `${id}.example.test`, { ratePerSecond: 100 });
  await runs.saveCheckpoint(tenant, runId, id, {
    seq: 1,
    state: { step: 1, url: `http://127.0.0.1/${id}`, memory: 'm'.repeat(4_000) },
    savedAt: new Date().toISOString(),
  });
  const manifest = new ManifestWriter(evidence, tenant, runId, id);
  const shot = await manifest.put(
    sampleEvidenceKey(tenant, runId, id, '01_page.png'),
    screenshot,
    'image/png',
  );
  const result = resultRecord(tenant, runId, id, { title: `Product ${id}`, price: '12.50' });
  const json = await manifest.put(
    sampleEvidenceKey(tenant, runId, id, 'result.json'),
    JSON.stringify(result.data),
  );
  await runs.putResult({ ...result, evidence: [shot, json].map(({ key, sha256 }) => ({ key, sha256 })) });
  await runs.updateSample(tenant, runId, id, { status: 'done' });
}

async function measure(label: string, runs: RunStore, evidence: EvidenceStore) {
  const tenant = 'bench';
  const runId = `run-${label.replace(/\W+/g, '-')}`;
  await runs.createRun({ ...runRecord(tenant, runId), sampleCount: SAMPLES });
  const ids = Array.from({ length: SAMPLES }, (_, i) => `s${String(i).padStart(5, '0')}`);
  const t0 = performance.now();
  await runs.putSamples(ids.map((id) => sampleRecord(tenant, runId, id)));
  const putSamplesMs = performance.now() - t0;
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < ids.length) {
        const id = ids[next++] as string;
        const s0 = performance.now();
        const wrote = await oneSample(runs, evidence, tenant, runId, id).then(
          () => '',
          (err: unknown) => `${label} ${id}: ${(err as Error).message}`,
        );
        outcome.record(!wrote, wrote);
        times.push(performance.now() - s0);
      }
    }),
  );
  const wallMs = performance.now() - started;
  const s0 = performance.now();
  const sealed = await sealManifest(evidence, tenant, runId);
  const sealMs = performance.now() - s0;
  const v0 = performance.now();
  const verified = await verifyRun(evidence, tenant, runId, sealed.head);
  const verifyMs = performance.now() - v0;
  outcome.record(verified.ok, `${label}: verify failed: ${verified.problem?.message}`);
  const stored = (await runs.listResults(tenant, runId)).length;
  outcome.record(stored === SAMPLES, `${label}: ${stored} of ${SAMPLES} results stored`);
  return {
    label,
    row: [
      label,
      round(percentile(times, 50)),
      round(percentile(times, 95)),
      round((SAMPLES / wallMs) * 60_000, 0),
      round(putSamplesMs / SAMPLES, 2),
      round(sealMs),
      round(verifyMs),
    ],
  };
}

const outcome = new BenchOutcome('bench:stores', 'samples and checks');
const rows: (string | number)[][] = [
  ['stores', 'ms/sample p50', 'p95', 'samples/min', 'putSamples ms/sample', 'seal ms', 'verify ms'],
];
const dir = await mkdtemp(join(tmpdir(), 'bfn-bench-stores-'));
rows.push(
  (
    await measure(
      'local files',
      new LocalRunStore(join(dir, 'runs')),
      new LocalEvidenceStore(join(dir, 'ev')),
    )
  ).row,
);
const aws = await startAwsLocal(['dynamo', 's3']);
// Requests by command name (PutItemCommand, PutObjectCommand…), counted on the way out.
aws.dynamo.client.middlewareStack.add(
  (next, context) => async (args) => {
    bump(dynamoCounts, context.commandName);
    return next(args);
  },
  { step: 'initialize', name: 'benchCount' },
);
aws.s3.client.middlewareStack.add(
  (next, context) => async (args) => {
    bump(s3Counts, context.commandName);
    return next(args);
  },
  { step: 'initialize', name: 'benchCount' },
);
const evidence = new S3EvidenceStore({ client: aws.s3.client, bucket: aws.s3.bucket });
const runs = new DynamoRunStore({ client: aws.dynamo.client, table: aws.dynamo.table, blobs: evidence });
rows.push((await measure('DynamoDB + S3 (emulated)', runs, evidence)).row);
await aws.stop();
await rm(dir, { recursive: true, force: true });

await outcome.gate();
console.log(`\nbench:stores — ${SAMPLES} samples, ${CONCURRENCY} at once\n`);
console.log(table(rows));
console.log('\nAWS requests per sample (whole run incl. seal + verify, divided by samples):');
const perSample = [...dynamoCounts, ...s3Counts]
  .sort((a, b) => a[0].localeCompare(b[0]))
  .map(([name, n]) => [name, round(n / SAMPLES, 2)]);
console.log(table([['request', 'per sample'], ...perSample]));
console.log(
  '\nEmulator timings say little about AWS latency; the request counts carry over as they are (they set the cost).',
);
