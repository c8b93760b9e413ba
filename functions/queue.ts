import { sharedBrowser } from '../lib/browser/session.ts';
import {
  type BatchResponse,
  EARLIER_DELIVERIES_ATTRIBUTE,
  handleQueueBatch,
} from '../lib/runs/queue/consumer.ts';
import { type QueueSetup, queueDepsFromEnv } from '../lib/runs/queue/deps.ts';
import { earlierDeliveries } from '../lib/runs/queue/sqs.ts';
import { withInvocationTmp } from './invocation-tmp.ts';
import { runtime } from './run-handlers.ts';

/** The part of Lambda's SQS event we read (the subscription asks for partial batch responses). */
export interface SqsEvent {
  Records: {
    messageId: string;
    body: string;
    attributes?: { ApproximateReceiveCount?: string };
    messageAttributes?: Record<string, { stringValue?: string }>;
  }[];
}

let setup: QueueSetup | undefined;

/** The part of Lambda's context we read. */
export interface QueueContext {
  getRemainingTimeInMillis(): number;
}

/**
 * SQS → each message's URLs run as samples of the job's run; `batchItemFailures` names the messages to
 * redeliver, so one bad message does not bring its whole batch back. Work stops in time for the
 * function's timeout: what is left goes back on the queue (BROWSERFN_QUEUE_URL).
 */
export const handler = (event: SqsEvent, context?: QueueContext): Promise<BatchResponse> =>
  withInvocationTmp(
    () => {
      setup ??= queueDepsFromEnv(runtime);
      const records = (event.Records ?? []).map((r) => ({
        messageId: r.messageId,
        body: r.body,
        receiveCount: Number(r.attributes?.ApproximateReceiveCount ?? 1),
        ...earlierDeliveries(r.messageAttributes?.[EARLIER_DELIVERIES_ATTRIBUTE]?.stringValue),
      }));
      const deps = context
        ? { ...setup.deps, timeLeftMs: () => context.getRemainingTimeInMillis() }
        : setup.deps;
      return handleQueueBatch(records, deps);
    },
    { warm: sharedBrowser },
  );
