/**
 * The SQS emulator the queue consumer's tests stand on (issue 11): real @aws-sdk/client-sqs calls
 * against local-aws-sqs, with the redrive to a dead-letter queue that poison messages rely on.
 */
import { DeleteMessageCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AwsLocal, createQueueWithDlq, startAwsLocal } from '../support/aws-local.ts';

let aws: AwsLocal;
beforeAll(async () => {
  aws = await startAwsLocal(['sqs']);
});
afterAll(async () => {
  await aws?.stop();
});

describe('local SQS', () => {
  it('delivers a batch and moves a message received too often to the DLQ', async () => {
    const sqs = aws.sqs.client;
    // A 1 s visibility timeout: a message left undeleted (a batch item failure) comes back after 1 s.
    const { queueUrl, dlqUrl } = await createQueueWithDlq(sqs, 'scrape', {
      maxReceiveCount: 2,
      visibilityTimeoutSeconds: 1,
    });
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [
          { Id: 'good', MessageBody: JSON.stringify({ urls: ['http://127.0.0.1/a'] }) },
          { Id: 'poison', MessageBody: 'not json' },
        ],
      }),
    );
    // local-aws-sqs long polls keep collecting until WaitTimeSeconds ends (a message whose visibility
    // lapsed meanwhile would come twice in one reply), so poll short instead.
    const receive = async (url: string) => {
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
        const out = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: url,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
            // The emulator reads only the older name of the same parameter.
            AttributeNames: ['All'],
          }),
        );
        if (out.Messages?.length) return out.Messages;
        await new Promise((r) => setTimeout(r, 100));
      }
      return [];
    };

    const first = await receive(queueUrl);
    expect(first.map((m) => m.Body).sort()).toEqual(['not json', '{"urls":["http://127.0.0.1/a"]}']);
    const good = first.find((m) => m.Body !== 'not json');
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: good?.ReceiptHandle }));

    const second = await receive(queueUrl);
    expect(second.map((m) => [m.Body, m.Attributes?.ApproximateReceiveCount])).toEqual([['not json', '2']]);
    // Received maxReceiveCount times and still not deleted: it leaves for the DLQ, the good one never does.
    const dead = await receive(dlqUrl);
    expect(dead.map((m) => m.Body)).toEqual(['not json']);
    const left = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 0 }));
    expect(left.Messages ?? []).toEqual([]);
  });
});
