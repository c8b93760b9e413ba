/**
 * The queue consumer's dependencies from the environment, shared by the `queue` Lambda and
 * `browserfn worker`:
 *
 *   BROWSERFN_SQS_ENDPOINT          SQS endpoint override (tests: local-aws-sqs)
 *   BROWSERFN_DLQ_URL               where messages that keep failing go, with their reason (required)
 *   BROWSERFN_QUEUE_TENANT          tenant the queue's runs belong to (default "default")
 *   BROWSERFN_QUEUE_MAX_RECEIVE     deliveries before a failing message is dead-lettered (default 3;
 *                                   match the queue's redrive policy)
 *   BROWSERFN_QUEUE_URL             the job queue itself: where a job the invocation's time could not
 *                                   finish goes on as a new message (Lambda; without it, SQS redelivers)
 *
 * plus the stores of lib/store/config.ts. A sample runs through the run handlers' slice loop, the same
 * code a run's state machine calls, so a queue job and a run write results the same way (once).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { type Stores, storesFromEnv } from '../../store/config.ts';
import { type RunDeps, runHandlers } from '../handlers.ts';
import { parseTaskSpec, SpecError } from '../task-spec.ts';
import { OutOfTimeError, PermanentError, type QueueDeps, type RunSample } from './consumer.ts';
import { outputQueueRefused, sqsDeadLetter, sqsRequeue, sqsSendOutput } from './sqs.ts';

type Env = Record<string, string | undefined>;

/** What a sample needs besides the stores: browser, network policy, model, slice runner. */
export type SampleRuntime = Omit<RunDeps, 'runStore' | 'evidence' | 'items'>;

export interface QueueSetup {
  deps: QueueDeps;
  sqs: SQSClient;
  stores: Stores;
}

const nonEmpty = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);

function positiveInt(env: Env, name: string, fallback: number): number {
  const raw = nonEmpty(env[name]);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a whole number ≥ 1, got "${raw}"`);
  return n;
}

/** Runs one queued sample to its end, slice after slice, through the run handlers. */
export function sliceLoop(deps: RunDeps): RunSample {
  const handlers = runHandlers(deps);
  return async (job, nextBudget) => {
    try {
      parseTaskSpec(job.spec);
    } catch (err) {
      // A spec no sample can run never gets better on a redelivery: straight to the DLQ with the field.
      if (err instanceof SpecError) throw new PermanentError(err.message);
      throw err;
    }
    const ids = { tenant: job.tenant, runId: job.runId, sampleId: job.sampleId };
    // The slice handler fails a sample that needs more than its spec's maxSlices: this loop ends.
    for (;;) {
      const budgetMs = nextBudget?.();
      if (nextBudget && budgetMs === undefined) throw new OutOfTimeError();
      const out = await handlers.slice(budgetMs === undefined ? ids : { ...ids, budgetMs });
      if (out.final) return;
    }
  };
}

export function sqsClientFromEnv(env: Env = process.env): SQSClient {
  const endpoint = nonEmpty(env.BROWSERFN_SQS_ENDPOINT);
  if (endpoint && !/^https?:\/\//.test(endpoint))
    throw new Error(`BROWSERFN_SQS_ENDPOINT must be an http(s) URL, got "${endpoint}"`);
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  return new SQSClient({
    ...(endpoint ? { endpoint, region: region ?? 'us-east-1' } : region ? { region } : {}),
    ...(accessKeyId && secretAccessKey
      ? {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(nonEmpty(env.AWS_SESSION_TOKEN) ? { sessionToken: nonEmpty(env.AWS_SESSION_TOKEN)! } : {}),
          },
        }
      : {}),
  });
}

export function queueDepsFromEnv(
  runtime: SampleRuntime,
  env: Env = process.env,
  overrides: { dlqUrl?: string; stores?: Stores } = {},
): QueueSetup {
  const dlqUrl = overrides.dlqUrl ?? nonEmpty(env.BROWSERFN_DLQ_URL);
  if (!dlqUrl)
    throw new Error('BROWSERFN_DLQ_URL is not set: a message that keeps failing needs a dead-letter queue');
  const stores = overrides.stores ?? storesFromEnv(env);
  const sqs = sqsClientFromEnv(env);
  const log = runtime.log;
  const queueUrl = nonEmpty(env.BROWSERFN_QUEUE_URL);
  const deps: QueueDeps = {
    tenant: nonEmpty(env.BROWSERFN_QUEUE_TENANT) ?? 'default',
    runStore: stores.runs,
    evidence: stores.evidence,
    // The slice waits for the host's token bucket itself.
    runnerPaces: true,
    runSample: sliceLoop({
      ...runtime,
      runStore: stores.runs,
      evidence: stores.evidence,
      runMemory: stores.runMemory,
      workflows: runtime.workflows ?? stores.workflows,
    }),
    deadLetter: sqsDeadLetter(sqs, dlqUrl),
    outputRefused: (url) => outputQueueRefused(url, nonEmpty(env.BROWSERFN_SQS_ENDPOINT)),
    sendOutput: sqsSendOutput(
      sqs,
      nonEmpty(env.BROWSERFN_SQS_ENDPOINT) ? { endpoint: nonEmpty(env.BROWSERFN_SQS_ENDPOINT)! } : {},
    ),
    maxReceiveCount: positiveInt(env, 'BROWSERFN_QUEUE_MAX_RECEIVE', 3),
    ...(runtime.sliceBudgetMs ? { sliceMs: runtime.sliceBudgetMs } : {}),
    ...(queueUrl ? { requeue: sqsRequeue(sqs, queueUrl) } : {}),
    ...(log ? { log: (e) => log({ level: 'info', ...e }) } : {}),
  };
  return { deps, sqs, stores };
}
