/**
 * Probe (issue 21, item 6): a queue `jobId` belongs to one job. A message that reuses another job's id
 * with other URLs, another task or another output queue must not be handed that job's results, and
 * an id no store could hold is dead-lettered at once, naming the field, instead of being retried.
 * Real SQS API (local-aws-sqs on loopback) through the real worker loop, real Chromium for the pages.
 */
import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { openSession } from '../../lib/browser/session.ts';
import type { BatchResponse, QueueDeps, SampleJob } from '../../lib/runs/queue/consumer.ts';
import {
  FAILURE_REASON_ATTRIBUTE,
  outputQueueRefused,
  runWorker,
  sqsDeadLetter,
  sqsSendOutput,
} from '../../lib/runs/queue/sqs.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let browser: Browser;
let site: FixtureServer;
let sqsServer: { close(): void } & { address(): AddressInfo | string | null };
let sqs: SQSClient;
let sqsEndpoint: string;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  sqsServer = (await createSqsServer({ port: 0, hostname: '127.0.0.1' })) as typeof sqsServer;
  sqsEndpoint = `http://127.0.0.1:${(sqsServer.address() as AddressInfo).port}`;
  sqs = new SQSClient({
    endpoint: sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
});

afterAll(async () => {
  sqs?.destroy();
  sqsServer?.close();
  await browser?.close();
  await site?.close();
});

const queue = async (name: string) =>
  (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '2' } })))
    .QueueUrl!;

/** What the queue holds now (up to 10 messages). */
async function drain(url: string): Promise<{ body: string; reason?: string }[]> {
  const got = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
  );
  // Taken off the queue, so a later look sees only what arrived since.
  for (const m of got.Messages ?? [])
    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
  return (got.Messages ?? []).map((m) => ({
    body: m.Body ?? '',
    reason: m.MessageAttributes?.[FAILURE_REASON_ATTRIBUTE]?.StringValue,
  }));
}

async function waiting(url: string): Promise<string | undefined> {
  const got = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return `${got.Attributes?.ApproximateNumberOfMessages}/${got.Attributes?.ApproximateNumberOfMessagesNotVisible}`;
}

async function setup(name: string) {
  const root = await mkdtemp(join(tmpdir(), `bfn-qid-${name}-`));
  const runStore = new LocalRunStore(join(root, 'runs'));
  const opened: string[] = [];
  const dlqUrl = await queue(`${name}-dlq`);
  const source = await queue(`${name}-src`);
  const policy = mergePolicy(
    { allowPrivate: false, allowHosts: [] },
    { allowHosts: [`127.0.0.1:${site.port}`] },
  );
  const deps: QueueDeps = {
    tenant: 'acme',
    runStore,
    evidence: new LocalEvidenceStore(join(root, 'evidence')),
    // A real sample: the page opened in a guarded context, its heading as the data.
    runSample: async (job: SampleJob) => {
      opened.push(job.url);
      const session = await openSession({ browser, policy, url: job.url });
      try {
        const heading = await session.page.locator('h1').first().textContent({ timeout: 2000 });
        await runStore.putResult({
          tenant: job.tenant,
          runId: job.runId,
          sampleId: job.sampleId,
          status: 'done',
          reason: 'heading read',
          data: { heading, url: job.url },
          usage: {},
          evidence: [],
          writtenAt: new Date().toISOString(),
        });
      } finally {
        await session.close();
      }
    },
    deadLetter: sqsDeadLetter(sqs, dlqUrl),
    sendOutput: sqsSendOutput(sqs, { endpoint: sqsEndpoint }),
    outputRefused: (url) => outputQueueRefused(url, sqsEndpoint),
    maxReceiveCount: 3,
  };
  /** Sends the bodies, then runs the real worker until the queue stays empty. */
  const work = async (...bodies: string[]) => {
    for (const body of bodies)
      await sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: body }));
    const batches: BatchResponse[] = [];
    await runWorker(sqs, deps, {
      queueUrl: source,
      waitSeconds: 1,
      stopWhenIdle: 3,
      onBatch: (_n, r) => batches.push(r),
    });
    return batches.flatMap((b) => b.batchItemFailures);
  };
  return { deps, runStore, opened, dlqUrl, source, work };
}

const message = (jobId: string, path: string, output: string, goal = 'read the heading') =>
  JSON.stringify({ jobId, task: { spec: { goal } }, urls: [site.url + path], output: { queueUrl: output } });

describe('queue jobId scope', () => {
  it("a message reusing another job's id never receives that job's results, whatever it changes", async () => {
    const { runStore, opened, dlqUrl, source, work } = await setup('reuse');
    const outA = await queue('reuse-out-a');
    const outB = await queue('reuse-out-b');
    expect(await work(message('shared', '/login.html', outA))).toEqual([]);
    const first = await drain(outA);
    expect(first).toHaveLength(1);
    const firstData = JSON.parse(first[0]!.body).data;
    expect(firstData.url).toBe(`${site.url}/login.html`);

    // Another URL and another output queue; the same URL to another queue; another task.
    const failures = await work(
      message('shared', '/products.html', outB),
      message('shared', '/login.html', outB),
      message('shared', '/login.html', outA, 'count the links'),
    );
    expect(failures).toEqual([]);
    const dead = await drain(dlqUrl);
    expect(dead).toHaveLength(3);
    for (const d of dead)
      expect(d.reason).toMatch(/jobId "shared" is already used by a job with a different/);
    // Nothing reached the second output queue, nothing more the first; no page opened for them.
    expect(await drain(outB)).toEqual([]);
    expect(await drain(outA)).toEqual([]);
    expect(opened).toEqual([`${site.url}/login.html`]);
    // The first job's results are still its own.
    const stored = await runStore.listResults('acme', 'q-shared');
    expect(stored.map((r) => (r.data as { url: string }).url)).toEqual([`${site.url}/login.html`]);
    expect(await waiting(source)).toBe('0/0');

    // The very same job sent again is a redelivery: accepted, nothing run or sent twice.
    expect(await work(message('shared', '/login.html', outA))).toEqual([]);
    expect(await drain(dlqUrl)).toEqual([]);
    expect(opened).toHaveLength(1);
  });

  it('a 200-character jobId goes to the DLQ at its first delivery, naming the field', async () => {
    const { opened, dlqUrl, source, work } = await setup('long');
    const out = await queue('long-out');
    const failures = await work(message('j'.repeat(200), '/login.html', out));
    // Not handed back to SQS for a retry: dead-lettered at once.
    expect(failures).toEqual([]);
    const dead = await drain(dlqUrl);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.reason).toMatch(/^invalid message: jobId: must be 1–128 letters/);
    expect(opened).toEqual([]);
    expect(await waiting(source)).toBe('0/0');
  });
});
