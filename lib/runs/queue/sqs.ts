/**
 * SQS at the edge of the queue consumer: dead-lettering with a reason, forwarding results, and the
 * polling worker (`browserfn worker --queue URL`) that feeds the same `handleQueueBatch` a Lambda does.
 */
import {
  DeleteMessageBatchCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { ResultRecord } from '../../store/ports.ts';
import {
  type BatchResponse,
  EARLIER_DELIVERIES_ATTRIBUTE,
  handleQueueBatch,
  type QueueDeps,
  type QueueRecord,
} from './consumer.ts';

/** The message attribute a DLQ reader finds the reason in. */
export const FAILURE_REASON_ATTRIBUTE = 'browserfnFailureReason';

export function sqsDeadLetter(client: SQSClient, dlqUrl: string): QueueDeps['deadLetter'] {
  return async (body, reason) => {
    await client.send(
      new SendMessageCommand({
        QueueUrl: dlqUrl,
        MessageBody: body,
        MessageAttributes: {
          [FAILURE_REASON_ATTRIBUTE]: { DataType: 'String', StringValue: reason.slice(0, 1000) },
        },
      }),
    );
  };
}

/** Sends a job message back onto the job queue, where it is a first delivery again. */
export function sqsRequeue(client: SQSClient, queueUrl: string): NonNullable<QueueDeps['requeue']> {
  return async (body, earlierDeliveries) => {
    await client.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: body,
        ...(earlierDeliveries > 0
          ? {
              MessageAttributes: {
                [EARLIER_DELIVERIES_ATTRIBUTE]: {
                  DataType: 'Number',
                  StringValue: String(earlierDeliveries),
                },
              },
            }
          : {}),
      }),
    );
  };
}

/**
 * Where a message may send its results: an SQS queue of AWS, or one on the endpoint the client was
 * configured with (an emulator, a compatible service). The SDK sends to the queue URL's own host,
 * signed with our credentials: any other host a message names would get that request.
 */
export function outputQueueRefused(queueUrl: string, endpoint?: string): string | undefined {
  let url: URL;
  try {
    url = new URL(queueUrl);
  } catch {
    return 'output.queueUrl: not a URL';
  }
  const aws =
    url.protocol === 'https:' &&
    /^(sqs\.[a-z0-9-]+\.amazonaws\.com(\.cn)?|queue\.amazonaws\.com)$/i.test(url.hostname);
  if (aws) return undefined;
  if (endpoint && new URL(endpoint).host === url.host) return undefined;
  return `output.queueUrl: ${url.protocol}//${url.host} is not an SQS queue (https://sqs.<region>.amazonaws.com/…${endpoint ? ' or the configured endpoint' : ''})`;
}

export function sqsSendOutput(
  client: SQSClient,
  options: { endpoint?: string } = {},
): NonNullable<QueueDeps['sendOutput']> {
  return async (queueUrl: string, result: ResultRecord) => {
    const refused = outputQueueRefused(queueUrl, options.endpoint);
    if (refused) throw new Error(refused);
    const { tenant: _tenant, ...visible } = result;
    await client.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(visible) }));
  };
}

/** The carried count of a job sent round for time, when the message has a sensible one. */
export function earlierDeliveries(value: string | undefined): { earlierDeliveries?: number } {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? { earlierDeliveries: n } : {};
}

export function toQueueRecord(message: Message): QueueRecord {
  return {
    messageId: message.MessageId ?? '',
    body: message.Body ?? '',
    receiveCount: Number(message.Attributes?.ApproximateReceiveCount ?? 1),
    ...earlierDeliveries(message.MessageAttributes?.[EARLIER_DELIVERIES_ATTRIBUTE]?.StringValue),
  };
}

export interface WorkerOptions {
  queueUrl: string;
  signal?: AbortSignal;
  /** Long-poll wait per receive (default 5 s). */
  waitSeconds?: number;
  /** Stop after this many empty polls in a row (default: never). */
  stopWhenIdle?: number;
  onBatch?: (handled: number, response: BatchResponse) => void;
  onDeleteFailed?: (reason: string) => void;
}

/** Polls until aborted (or idle): each batch goes through `handleQueueBatch`; handled messages are deleted. */
export async function runWorker(client: SQSClient, deps: QueueDeps, options: WorkerOptions): Promise<number> {
  let idle = 0;
  let handled = 0;
  while (!options.signal?.aborted) {
    const received = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: options.queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: options.waitSeconds ?? 5,
        MessageSystemAttributeNames: ['ApproximateReceiveCount'],
        MessageAttributeNames: [EARLIER_DELIVERIES_ATTRIBUTE],
        // The older spelling, for SQS-compatible servers that only know it.
        AttributeNames: ['All'],
      }),
      options.signal ? { abortSignal: options.signal } : {},
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) {
      idle++;
      if (options.stopWhenIdle !== undefined && idle >= options.stopWhenIdle) break;
      continue;
    }
    idle = 0;
    const response = await handleQueueBatch(messages.map(toQueueRecord), deps);
    const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
    // Failed ones stay invisible until their visibility timeout ends, then come back: SQS's own retry.
    const done = messages.filter((m) => !failed.has(m.MessageId ?? ''));
    if (done.length > 0) {
      const deleted = await client.send(
        new DeleteMessageBatchCommand({
          QueueUrl: options.queueUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
      // A delete after the visibility timeout fails: the message comes back, and its results are
      // already written, so the redelivery finds them and does nothing twice.
      for (const f of deleted.Failed ?? []) options.onDeleteFailed?.(f.Message ?? f.Code ?? 'delete failed');
    }
    handled += messages.length;
    options.onBatch?.(messages.length, response);
  }
  return handled;
}
