/**
 * `browserfn worker --queue URL`: polls an SQS queue (or an SQS-compatible one, BROWSERFN_SQS_ENDPOINT)
 * and runs each job message with the same consumer the `queue` Lambda uses. Stores come from the
 * environment (lib/store/config.ts): local files by default, DynamoDB + S3 when configured.
 */
import { modelFor } from '../api/run-op.ts';
import { policyFromEnv } from '../browser/guard-policy.ts';
import { closeGuardProxies } from '../browser/guard-proxy.ts';
import { closeSharedBrowser, sharedBrowser } from '../browser/session.ts';
import { agentSliceRunner } from '../runs/agent-slice-binding.ts';
import { jsonLog, linesTo } from '../runs/json-log.ts';
import { queueDepsFromEnv } from '../runs/queue/deps.ts';
import { runWorker } from '../runs/queue/sqs.ts';
import { intFlag, parse, UsageError } from './args.ts';

export { WORKER_USAGE } from './worker-usage.ts';

function httpUrl(flag: string, value: unknown): string {
  if (typeof value !== 'string' || !/^https?:\/\/\S+$/.test(value))
    throw new UsageError(`--${flag} expects the queue's http(s) URL, got "${String(value ?? '')}"`);
  return value;
}

export async function workerCommand(argv: string[], out: (s: string) => void): Promise<number> {
  const { flags } = parse(argv, {
    queue: { type: 'string' },
    dlq: { type: 'string' },
    idle: { type: 'string' },
  });
  if (flags.queue === undefined) throw new UsageError('--queue <url> is required');
  const queueUrl = httpUrl('queue', flags.queue);
  const dlqUrl = flags.dlq === undefined ? undefined : httpUrl('dlq', flags.dlq);
  const idle = intFlag(flags, 'idle');
  if (!dlqUrl && !process.env.BROWSERFN_DLQ_URL?.trim())
    throw new UsageError(
      'give --dlq <url> (or BROWSERFN_DLQ_URL): failing messages need a dead-letter queue',
    );
  const policy = policyFromEnv();
  const { deps, sqs, stores } = queueDepsFromEnv(
    {
      slices: agentSliceRunner,
      browser: sharedBrowser,
      policy,
      llmFor: (model) => modelFor(model ? { model } : {}, { policy }),
      log: jsonLog(linesTo('stderr')),
    },
    process.env,
    dlqUrl ? { dlqUrl } : {},
  );
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  out(`worker polling ${queueUrl} (runs: ${stores.describe.runs}, evidence: ${stores.describe.evidence})`);
  let handled = 0;
  try {
    handled = await runWorker(sqs, deps, {
      queueUrl,
      signal: stop.signal,
      waitSeconds: idle ? 1 : 5,
      ...(idle ? { stopWhenIdle: idle } : {}),
      onBatch: (n, r) =>
        out(
          `batch of ${n}: ${n - r.batchItemFailures.length} handled, ${r.batchItemFailures.length} to retry`,
        ),
      onDeleteFailed: (reason) =>
        out(`delete failed (the message will come back, and do nothing twice): ${reason}`),
    });
  } catch (err) {
    if (!stop.signal.aborted) throw err;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    sqs.destroy();
    await closeSharedBrowser();
    await closeGuardProxies();
  }
  out(`worker stopped after ${handled} messages`);
  return 0;
}
