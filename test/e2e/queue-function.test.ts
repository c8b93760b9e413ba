import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { createSqsServer } from 'local-aws-sqs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser } from '../../lib/browser/session.ts';
import { FAILURE_REASON_ATTRIBUTE } from '../../lib/runs/queue/sqs.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { titleModel } from '../support/runs-env.ts';

let site: FixtureServer;
let llm: ScriptedModel;
let sqsServer: { close(): void } & { address(): AddressInfo | string | null };
let sqs: SQSClient;
let dir: string;
let containerTmp: string;
let dlqUrl: string;
let jobsUrl: string;
const originalTmp = process.env.TMPDIR;

beforeAll(async () => {
  [site, llm] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  titleModel(llm);
  sqsServer = (await createSqsServer({ port: 0, hostname: '127.0.0.1' })) as typeof sqsServer;
  const endpoint = `http://127.0.0.1:${(sqsServer.address() as AddressInfo).port}`;
  sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
  dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fn-dlq' }))).QueueUrl!;
  jobsUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fn-own-jobs' }))).QueueUrl!;
  dir = await mkdtemp(join(tmpdir(), 'bfn-qfn-'));
  // The container's /tmp: a folder of this test's own, so what the handler leaves there can be seen.
  containerTmp = await mkdtemp(join(tmpdir(), 'bfn-qfn-tmp-'));
  // What the Lambda's configuration would set.
  Object.assign(process.env, {
    TMPDIR: containerTmp,
    BROWSERFN_RUNS_DIR: join(dir, 'runs'),
    BROWSERFN_EVIDENCE_DIR: join(dir, 'evidence'),
    BROWSERFN_SQS_ENDPOINT: endpoint,
    BROWSERFN_DLQ_URL: dlqUrl,
    BROWSERFN_QUEUE_URL: jobsUrl,
    BROWSERFN_QUEUE_TENANT: 'jobs',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: llm.openaiBaseURL,
    BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
  });
});
afterAll(async () => {
  await closeSharedBrowser();
  await closeGuardProxies();
  if (originalTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = originalTmp;
  sqs?.destroy();
  sqsServer?.close();
  await site?.close();
  await llm?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(containerTmp, { recursive: true, force: true });
});

const message = (messageId: string, body: unknown, receiveCount = 1) => ({
  messageId,
  body: typeof body === 'string' ? body : JSON.stringify(body),
  attributes: { ApproximateReceiveCount: String(receiveCount) },
});

const job = (paths: string[]) => ({
  jobId: 'j1',
  task: {
    spec: {
      goal: 'the product name shown as the page title',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
    },
  },
  urls: paths.map((p) => site.url + p),
});

describe('the queue Lambda (functions/queue.ts)', () => {
  it('runs each URL of a message as a sample once; a redelivery writes nothing twice', async () => {
    const { handler } = await import('../../functions/queue.ts');
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    let first: Awaited<ReturnType<typeof handler>>;
    try {
      first = await handler({
        Records: [
          message('m1', job(['/products/brass-bell.html', '/products/iron-pan.html'])),
          message('m2', 'not json'),
          message('m3', { jobId: 'j3', task: { spec: { goal: '' } }, urls: [`${site.url}/index.html`] }),
        ],
      });
    } finally {
      write.mockRestore();
    }
    expect(first.batchItemFailures).toEqual([]);
    const store = new LocalRunStore(join(dir, 'runs'));
    const results = await store.listResults('jobs', 'q-j1');
    expect(results.map((r) => [r.sampleId, r.status, r.data])).toEqual([
      ['u001', 'done', { title: 'Brass Bell' }],
      ['u002', 'done', { title: 'Iron Pan' }],
    ]);
    expect(llm.requests).toHaveLength(2);
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MessageAttributeNames: ['All'],
        MaxNumberOfMessages: 10,
      }),
    );
    expect(
      dead.Messages?.map((m) => [m.Body, m.MessageAttributes?.[FAILURE_REASON_ATTRIBUTE]?.StringValue]),
    ).toEqual([
      ['not json', 'message body is not JSON'],
      // A spec no sample can run goes at once (first delivery), with the field that is wrong.
      [expect.stringContaining('"j3"'), expect.stringMatching(/^after 1 deliveries: task spec goal:/)],
    ]);

    // Structured logs: one JSON object per line, with the run, sample and step they are about.
    const logged = lines.flatMap((l) => l.split('\n').filter(Boolean)).map((l) => JSON.parse(l));
    const ends = logged.filter((e) => e.msg === 'slice end');
    expect(ends.map((e) => [e.runId, e.sampleId, e.status])).toEqual([
      ['q-j1', 'u001', 'done'],
      ['q-j1', 'u002', 'done'],
    ]);
    for (const e of ends) {
      expect(e.level).toBe('info');
      expect(typeof e.step).toBe('number');
      expect(Number.isNaN(Date.parse(e.time))).toBe(false);
    }

    // SQS hands the message out again (visibility timeout, or a failed delete): nothing runs twice.
    const warmTmp = (await readdir(containerTmp)).sort();
    const again = await handler({
      Records: [message('m1', job(['/products/brass-bell.html', '/products/iron-pan.html']), 2)],
    });
    expect(again.batchItemFailures).toEqual([]);
    expect(llm.requests).toHaveLength(2);
    const after = await store.listResults('jobs', 'q-j1');
    expect(after).toEqual(results);
    // A warm invocation leaves the container's /tmp as it found it.
    expect((await readdir(containerTmp)).sort()).toEqual(warmTmp);
  });

  it('a job longer than its invocation goes on in a new message and finishes there, each URL once', async () => {
    const { handler } = await import('../../functions/queue.ts');
    const body = { ...job(['/products/brass-bell.html', '/products/oak-desk.html']), jobId: 'long1' };
    const asked = llm.requests.length;
    // Ten minutes left until the first sample has asked its model; then a few seconds.
    const closeToTimeout = {
      getRemainingTimeInMillis: () => (llm.requests.length > asked ? 5_000 : 600_000),
    };
    const first = await handler({ Records: [message('m-long', body)] }, closeToTimeout);
    expect(first.batchItemFailures).toEqual([]);
    const store = new LocalRunStore(join(dir, 'runs'));
    expect((await store.listResults('jobs', 'q-long1')).map((r) => [r.sampleId, r.data])).toEqual([
      ['u001', { title: 'Brass Bell' }],
    ]);

    // The rest of the job is on the job queue again, as a first delivery of the same job.
    const queued = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: jobsUrl,
        MaxNumberOfMessages: 10,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        AttributeNames: ['All'],
      }),
    );
    expect(queued.Messages).toHaveLength(1);
    const next = queued.Messages![0]!;
    expect(JSON.parse(next.Body!)).toEqual(body);
    expect(next.Attributes?.ApproximateReceiveCount).toBe('1');

    const plenty = { getRemainingTimeInMillis: () => 600_000 };
    const second = await handler({ Records: [message(next.MessageId!, next.Body!)] }, plenty);
    expect(second.batchItemFailures).toEqual([]);
    expect((await store.listResults('jobs', 'q-long1')).map((r) => [r.sampleId, r.data])).toEqual([
      ['u001', { title: 'Brass Bell' }],
      ['u002', { title: 'Oak Desk' }],
    ]);
    // Each page was read once: the first URL was not worked on again.
    expect(llm.requests.length - asked).toBe(2);
    expect((await store.getRun('jobs', 'q-long1'))?.status).toBe('done');
  });

  it('an invocation’s temp files go when it ends, even when it throws', async () => {
    const { withInvocationTmp } = await import('../../functions/invocation-tmp.ts');
    const before = (await readdir(containerTmp)).sort();
    let seen = '';
    await expect(
      withInvocationTmp(async () => {
        seen = tmpdir();
        await writeFile(join(tmpdir(), 'download.pdf'), 'x'.repeat(1000));
        throw new Error('page crashed');
      }),
    ).rejects.toThrow('page crashed');
    expect(seen.startsWith(containerTmp)).toBe(true);
    expect(tmpdir()).toBe(containerTmp);
    expect((await readdir(containerTmp)).sort()).toEqual(before);
  });

  it('browserfn worker polls the queue with the same consumer: one result per URL, failing ones to the DLQ', async () => {
    const { workerCommand } = await import('../../lib/cli/worker.ts');
    await expect(workerCommand([], () => {})).rejects.toThrow('--queue <url> is required');
    await expect(workerCommand(['--queue', 'jobs'], () => {})).rejects.toThrow(/--queue expects/);
    const queueUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'fn-jobs' }))).QueueUrl!;
    const body = JSON.stringify({ ...job(['/products/oak-desk.html']), jobId: 'w1' });
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    // The same job sent twice (a producer's retry): the second finds its result.
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: '{"urls": []}' }));
    const before = llm.requests.length;
    const lines: string[] = [];
    const code = await workerCommand(['--queue', queueUrl, '--idle', '1'], (l) => lines.push(l));
    expect(code).toBe(0);
    expect(lines.at(-1)).toBe('worker stopped after 3 messages');
    const results = await new LocalRunStore(join(dir, 'runs')).listResults('jobs', 'q-w1');
    expect(results.map((r) => [r.sampleId, r.data])).toEqual([['u001', { title: 'Oak Desk' }]]);
    expect(llm.requests.length - before).toBe(1);
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlqUrl,
        MessageAttributeNames: ['All'],
        MaxNumberOfMessages: 10,
      }),
    );
    expect(dead.Messages?.map((m) => m.MessageAttributes?.[FAILURE_REASON_ATTRIBUTE]?.StringValue)).toEqual([
      expect.stringMatching(/^invalid message: task/),
    ]);
    // Handled messages were deleted: the queue is empty.
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(left.Messages ?? []).toEqual([]);
  });
});
