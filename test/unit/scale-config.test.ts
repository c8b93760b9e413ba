import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { queueDepsFromEnv, type SampleRuntime } from '../../lib/runs/queue/deps.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';

const runtime: SampleRuntime = {
  slices: agentSliceRunner,
  browser: () => Promise.reject(new Error('no browser in a unit test')),
  policy: mergePolicy({ allowPrivate: false, allowHosts: [] }, {}),
  llmFor: async () => undefined,
};
const base = {
  BROWSERFN_RUNS_DIR: join(tmpdir(), 'bfn-unit-never-written', 'runs'),
  BROWSERFN_EVIDENCE_DIR: join(tmpdir(), 'bfn-unit-never-written', 'evidence'),
  BROWSERFN_DLQ_URL: 'http://127.0.0.1:9324/000000000000/dlq',
};

describe('task spec discovery block', () => {
  it('is optional, and when given says which field is wrong', () => {
    expect(parseTaskSpec({ goal: 'x' }).discovery).toBeUndefined();
    const spec = parseTaskSpec({
      goal: 'x',
      discovery: { listings: ['https://shop.example.test/list'], include: '*/p/*', maxUrls: 500 },
    });
    expect(spec.discovery).toEqual({
      listings: ['https://shop.example.test/list'],
      include: '*/p/*',
      maxUrls: 500,
    });
    expect(() => parseTaskSpec({ goal: 'x', discovery: { listings: [] } })).toThrow(/discovery\.listings/);
    expect(() => parseTaskSpec({ goal: 'x', discovery: { listings: ['not a url'] } })).toThrow(
      /discovery\.listings\.0/,
    );
    expect(() =>
      parseTaskSpec({ goal: 'x', discovery: { listings: ['https://a.test/'], maxUrls: 0 } }),
    ).toThrow(/discovery\.maxUrls/);
    expect(() =>
      parseTaskSpec({ goal: 'x', discovery: { listings: ['https://a.test/'], pages: 3 } }),
    ).toThrow(/discovery|Unrecognized/);
  });
});

describe('queueDepsFromEnv', () => {
  it('defaults: tenant "default", 3 deliveries before the DLQ', () => {
    const { deps, sqs } = queueDepsFromEnv(runtime, base);
    expect(deps.tenant).toBe('default');
    expect(deps.maxReceiveCount).toBe(3);
    sqs.destroy();
    const custom = queueDepsFromEnv(runtime, {
      ...base,
      BROWSERFN_QUEUE_TENANT: 'acme',
      BROWSERFN_QUEUE_MAX_RECEIVE: '5',
    });
    expect(custom.deps.tenant).toBe('acme');
    expect(custom.deps.maxReceiveCount).toBe(5);
    custom.sqs.destroy();
  });

  it('refuses a setup that would lose failing messages or talk to a malformed endpoint', () => {
    expect(() => queueDepsFromEnv(runtime, { ...base, BROWSERFN_DLQ_URL: '' })).toThrow(/BROWSERFN_DLQ_URL/);
    expect(() => queueDepsFromEnv(runtime, { ...base, BROWSERFN_QUEUE_MAX_RECEIVE: '0' })).toThrow(
      /BROWSERFN_QUEUE_MAX_RECEIVE/,
    );
    expect(() => queueDepsFromEnv(runtime, { ...base, BROWSERFN_SQS_ENDPOINT: 'localhost:9324' })).toThrow(
      /BROWSERFN_SQS_ENDPOINT/,
    );
  });
});
