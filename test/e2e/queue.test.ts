import { mkdtemp } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
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
import {
  type BatchResponse,
  FINISH_MARGIN_MS,
  handleQueueBatch,
  type QueueDeps,
  type SampleJob,
} from '../../lib/runs/queue/consumer.ts';
import {
  FAILURE_REASON_ATTRIBUTE,
  outputQueueRefused,
  runWorker,
  sqsDeadLetter,
  sqsRequeue,
  sqsSendOutput,
  toQueueRecord,
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
  const { port } = sqsServer.address() as AddressInfo;
  sqsEndpoint = `http://127.0.0.1:${port}`;
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

async function queue(name: string, attributes: Record<string, string> = {}): Promise<string> {
  const made = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return made.QueueUrl!;
}

async function drain(url: string): Promise<{ body: string; reason?: string }[]> {
  const got = await sqs.send(
    new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }),
  );
  return (got.Messages ?? []).map((m) => ({
    body: m.Body ?? '',
    reason: m.MessageAttributes?.[FAILURE_REASON_ATTRIBUTE]?.StringValue,
  }));
}

/** A real sample: the page loaded in a guarded context of real Chromium, its heading as the data. */
function pageRunner(store: LocalRunStore, calls: { url: string; at: number }[]) {
  return async (job: SampleJob) => {
    calls.push({ url: job.url, at: Date.now() });
    const policy = mergePolicy(
      { allowPrivate: false, allowHosts: [] },
      { allowHosts: [`127.0.0.1:${site.port}`] },
    );
    const session = await openSession({ browser, policy, url: job.url });
    try {
      const heading = await session.page.locator('h1').first().textContent({ timeout: 2000 });
      await store.putResult({
        tenant: job.tenant,
        runId: job.runId,
        sampleId: job.sampleId,
        status: 'done',
        reason: 'heading read',
        data: { heading },
        usage: {},
        evidence: [],
        writtenAt: new Date().toISOString(),
      });
    } finally {
      await session.close();
    }
  };
}

async function setup(name: string, maxReceiveCount = 3) {
  const root = await mkdtemp(join(tmpdir(), `bfn-q-${name}-`));
  const runStore = new LocalRunStore(join(root, 'runs'));
  const evidence = new LocalEvidenceStore(join(root, 'evidence'));
  const calls: { url: string; at: number }[] = [];
  const dlqUrl = await queue(`${name}-dlq`);
  const outUrl = await queue(`${name}-out`);
  const deps: QueueDeps = {
    tenant: 'acme',
    runStore,
    evidence,
    runSample: pageRunner(runStore, calls),
    deadLetter: sqsDeadLetter(sqs, dlqUrl),
    sendOutput: sqsSendOutput(sqs, { endpoint: sqsEndpoint }),
    outputRefused: (url) => outputQueueRefused(url, sqsEndpoint),
    maxReceiveCount,
  };
  return { deps, runStore, calls, dlqUrl, outUrl };
}

const job = (jobId: string, paths: string[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    jobId,
    task: { spec: { goal: 'read the heading' } },
    urls: paths.map((p) => site.url + p),
    ...extra,
  });

describe('queue consumer', () => {
  it('reports only the bad message of a batch and dead-letters it with the reason', async () => {
    const { deps, runStore, dlqUrl, calls } = await setup('batch');
    // An output queue that is not an SQS queue (here: another loopback port; nothing is sent there).
    const elsewhere = { output: { queueUrl: 'http://127.0.0.1:1/000000000000/out' } };
    const response = await handleQueueBatch(
      [
        { messageId: 'm1', body: job('j1', ['/login.html', '/products.html']), receiveCount: 1 },
        { messageId: 'm2', body: '{"task": {"spec": {}}, "urls": ["ftp://x"]}', receiveCount: 1 },
        { messageId: 'm3', body: 'not json', receiveCount: 1 },
        { messageId: 'm4', body: job('j4', ['/index.html']), receiveCount: 1 },
        { messageId: 'm5', body: job('j5', ['/signup.html'], elsewhere), receiveCount: 1 },
      ],
      deps,
    );
    expect(response.batchItemFailures).toEqual([]);
    const j1 = await runStore.listResults('acme', 'q-j1');
    expect(j1.map((r) => r.sampleId)).toEqual(['u001', 'u002']);
    expect(j1.every((r) => r.status === 'done')).toBe(true);
    expect(await runStore.listResults('acme', 'q-j4')).toHaveLength(1);
    const dead = await drain(dlqUrl);
    expect(dead.map((d) => d.reason).sort()).toEqual([
      // At the first delivery: asking again would not make that queue acceptable.
      expect.stringMatching(
        /^after 1 deliveries: output\.queueUrl: http:\/\/127\.0\.0\.1:1 is not an SQS queue/,
      ),
      'invalid message: urls.0: must be an http(s) URL',
      'message body is not JSON',
    ]);
    // Refused before any page was opened for it.
    expect(calls.some((c) => c.url.endsWith('/signup.html'))).toBe(false);
  });

  it('never writes a second result or repeats work for a redelivered message', async () => {
    const { deps, runStore, calls, outUrl } = await setup('redeliver');
    const body = job('same', ['/login.html', '/signup.html'], { output: { queueUrl: outUrl } });
    for (let delivery = 1; delivery <= 4; delivery++) {
      const res = await handleQueueBatch([{ messageId: `m${delivery}`, body, receiveCount: delivery }], deps);
      expect(res.batchItemFailures).toEqual([]);
    }
    expect(calls).toHaveLength(2);
    expect(await runStore.listResults('acme', 'q-same')).toHaveLength(2);
    const forwarded = await drain(outUrl);
    expect(forwarded).toHaveLength(2);
    expect(forwarded.map((f) => JSON.parse(f.body).sampleId).sort()).toEqual(['u001', 'u002']);
    expect(forwarded.some((f) => f.body.includes('"tenant"'))).toBe(false);
  });

  it('stops in time: later work goes back to SQS when it cannot be requeued, and a slice gets only the time left', async () => {
    const { deps, runStore, calls, dlqUrl } = await setup('deadline');
    let timeLeft = 200_000;
    const budgets: (number | undefined)[] = [];
    const runPage = deps.runSample;
    const response = await handleQueueBatch(
      [
        { messageId: 'm1', body: job('t1', ['/login.html', '/signup.html']), receiveCount: 1 },
        { messageId: 'm2', body: job('t2', ['/index.html']), receiveCount: 1 },
        { messageId: 'm3', body: 'not json', receiveCount: 1 },
      ],
      {
        ...deps,
        sliceMs: 240_000,
        timeLeftMs: () => timeLeft,
        runSample: async (sample, nextBudget) => {
          budgets.push(nextBudget?.());
          await runPage(sample);
          // The first page took most of what the invocation had left.
          timeLeft = 50_000;
        },
      },
    );
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }]);
    expect(calls.map((c) => new URL(c.url).pathname)).toEqual(['/login.html']);
    expect(budgets).toEqual([200_000 - FINISH_MARGIN_MS]);
    expect((await runStore.listResults('acme', 'q-t1')).map((r) => r.sampleId)).toEqual(['u001']);
    // A malformed message still goes to the DLQ at once: that costs no time.
    expect((await drain(dlqUrl)).map((d) => d.reason)).toEqual(['message body is not JSON']);
  });

  it('a function timeout too short for any slice fails its messages saying so, instead of sending them round', async () => {
    const { deps, calls, dlqUrl } = await setup('tooshort', 2);
    const requeued: string[] = [];
    const tight: QueueDeps = {
      ...deps,
      sliceMs: 240_000,
      timeLeftMs: () => 50_000,
      requeue: async (body) => {
        requeued.push(body);
      },
    };
    const first = await handleQueueBatch(
      [{ messageId: 'm1', body: job('s1', ['/login.html']), receiveCount: 1 }],
      tight,
    );
    expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
    const last = await handleQueueBatch(
      [{ messageId: 'm1', body: job('s1', ['/login.html']), receiveCount: 2 }],
      tight,
    );
    expect(last.batchItemFailures).toEqual([]);
    expect(requeued).toEqual([]);
    expect(calls).toEqual([]);
    expect((await drain(dlqUrl)).map((d) => d.reason)).toEqual([
      expect.stringMatching(/^after 2 deliveries: the invocation had too little time to start one slice/),
    ]);
  });

  it('a job sent round for time keeps count of its failed deliveries, so one that keeps failing still reaches the DLQ', async () => {
    const { deps, dlqUrl } = await setup('carry', 2);
    const own = await queue('carry-own');
    let timeLeft = 200_000;
    const runPage = deps.runSample;
    const clocked: QueueDeps = {
      ...deps,
      sliceMs: 240_000,
      timeLeftMs: () => timeLeft,
      requeue: sqsRequeue(sqs, own),
      runSample: async (sample, nextBudget) => {
        await runPage(sample, nextBudget);
        timeLeft = 50_000;
      },
    };
    // Port 9 on loopback is not allow-listed: this job fails on every delivery. It failed once already.
    const bad = JSON.stringify({ jobId: 'bad2', task: { spec: {} }, urls: ['http://127.0.0.1:9/'] });
    const first = await handleQueueBatch(
      [
        { messageId: 'm1', body: job('ok2', ['/login.html']), receiveCount: 1 },
        { messageId: 'm2', body: bad, receiveCount: 2 },
      ],
      clocked,
    );
    expect(first.batchItemFailures).toEqual([]);
    const got = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: own,
        MaxNumberOfMessages: 10,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        AttributeNames: ['All'],
      }),
    );
    const records = (got.Messages ?? []).map(toQueueRecord);
    expect(records.map((r) => [JSON.parse(r.body).jobId, r.receiveCount, r.earlierDeliveries])).toEqual([
      ['bad2', 1, 1],
    ]);
    // Its next delivery fails again: its second in all, and maxReceiveCount is 2.
    const second = await handleQueueBatch(records, deps);
    expect(second.batchItemFailures).toEqual([]);
    expect((await drain(dlqUrl)).map((d) => d.reason)).toEqual([
      expect.stringMatching(/^after 2 deliveries: /),
    ]);
  });

  it('retries a failing message through SQS and dead-letters it after maxReceiveCount with the reason', async () => {
    const { deps, dlqUrl } = await setup('poison', 3);
    // Visibility outlasts a batch's work here, as QUEUE.visibilityTimeoutSeconds does on AWS.
    const source = await queue('poison-src', { VisibilityTimeout: '3' });
    // Port 9 on loopback is not allow-listed: the guard refuses it on every delivery.
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: source,
        MessageBody: JSON.stringify({ jobId: 'bad', task: { spec: {} }, urls: ['http://127.0.0.1:9/'] }),
      }),
    );
    await sqs.send(new SendMessageCommand({ QueueUrl: source, MessageBody: job('good', ['/login.html']) }));
    const batches: BatchResponse[] = [];
    await runWorker(sqs, deps, {
      queueUrl: source,
      waitSeconds: 1,
      // Longer than the visibility timeout, so a retried message comes back before the worker stops.
      stopWhenIdle: 5,
      onBatch: (_n, r) => batches.push(r),
    });
    const failedDeliveries = batches.flatMap((b) => b.batchItemFailures);
    expect(failedDeliveries).toHaveLength(2);
    const dead = await drain(dlqUrl);
    expect(dead).toHaveLength(1);
    expect(dead[0]?.reason).toMatch(/^after 3 deliveries: .*block/i);
    const left = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: source, AttributeNames: ['ApproximateNumberOfMessages'] }),
    );
    expect(left.Attributes?.ApproximateNumberOfMessages).toBe('0');
  });

  it('keeps four workers on one domain under the shared rate limit', async () => {
    const { deps: plain, calls } = await setup('rate');
    // The times the shared bucket granted a start: what the rate limit controls. (When a worker then
    // gets round to starting is the machine's business; under load starts bunch up behind grants.)
    const grants: number[] = [];
    const store = plain.runStore;
    const runStore = new Proxy(store, {
      get(target, prop) {
        if (prop === 'takeToken')
          return async (...args: Parameters<typeof store.takeToken>) => {
            const decision = await target.takeToken(...args);
            if (decision.granted) grants.push(args[2]);
            return decision;
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const deps: QueueDeps = { ...plain, runStore };
    const source = await queue('rate-src');
    const rate = 4;
    for (let m = 0; m < 8; m++)
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: source,
          MessageBody: JSON.stringify({
            jobId: `r${m}`,
            task: {
              spec: {
                goal: 'read the heading',
                rateLimits: { [`127.0.0.1:${site.port}`]: { ratePerSecond: rate } },
              },
            },
            urls: [site.url + '/index.html', site.url + '/login.html'],
          }),
        }),
      );
    await Promise.all(
      Array.from({ length: 4 }, () =>
        runWorker(sqs, deps, { queueUrl: source, waitSeconds: 1, stopWhenIdle: 1 }),
      ),
    );
    expect(calls).toHaveLength(16);
    expect(grants).toHaveLength(16);
    const times = [...grants].sort((a, b) => a - b);
    // In any window of one second, at most `rate` grants (+5%), after the first token of the bucket.
    for (let i = 0; i < times.length; i++) {
      const inWindow = times.filter((t) => t >= times[i]! && t < times[i]! + 1000).length;
      expect(inWindow).toBeLessThanOrEqual(Math.floor(rate * 1.05) + 1);
    }
    const spanSeconds = (times.at(-1)! - times[0]!) / 1000;
    expect((times.length - 1) / spanSeconds).toBeLessThanOrEqual(rate * 1.05);
    // And no page was opened before a start was granted for it.
    const starts = calls.map((c) => c.at).sort((a, b) => a - b);
    starts.forEach((t, i) => {
      expect(t).toBeGreaterThanOrEqual(times[i]!);
    });
  });
});
