/**
 * Generated hostile inputs (issue 21 target: "0 5xx in the fuzzed run / evidence / queue / Stagehand
 * inputs"), a few hundred in all, drawn by fast-check: run ids, sub-paths, query values and evidence
 * paths against the served runs API; start bodies; Stagehand session ids, operations and bodies; queue
 * message bodies through the real consumer. Every answer must be below 500, and every bad queue message
 * must go to the DLQ with a reason (never back on the queue to fail again). The hand-picked probes of
 * each item are in the other hardening-*.test.ts files; this covers what no one thought to pick.
 *
 * Loopback only: every URL the generators can produce is a loopback or private address the guard
 * refuses, or no http(s) URL at all, so no run started here opens a page anywhere.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleQueueBatch, type QueueDeps, type SampleJob } from '../../lib/runs/queue/consumer.ts';
import { outputQueueRefused } from '../../lib/runs/queue/sqs.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { type HardeningEnv, startHardeningEnv } from '../support/hardening-env.ts';

let env: HardeningEnv;

beforeAll(async () => {
  env = await startHardeningEnv();
  await env.plantRun('r-main');
});

afterAll(async () => {
  await env?.close();
});

/** Each byte of the text percent-encoded (lone surrogates become U+FFFD, as fetch would send them). */
const percentAll = (s: string) =>
  [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** One path segment as an attacker would send it: raw, encoded, partly encoded, or a known trick. */
const segment = fc.oneof(
  fc.constantFrom(
    'r-main',
    '..',
    '.',
    '%2e%2e',
    '%2E%2e%2f',
    '%2f',
    '%5c',
    '%00',
    '%',
    '%zz',
    '%%32%65',
    '~',
    'combined.csv',
    'combined.csv%00.png',
    'evil.html',
    'results.json',
    '.manifest.jsonl',
    's1',
    'CON',
    '%c0%ae%c0%ae',
    '%ef%bc%8f',
  ),
  fc.string({ maxLength: 24 }).map(encodeURIComponent),
  fc.string({ unit: 'binary', maxLength: 24 }).map(percentAll),
  fc.string({ unit: 'grapheme', minLength: 100, maxLength: 400 }).map(percentAll),
  fc.stringMatching(/^[a-z0-9._-]{1,40}$/),
);
const evidencePath = fc.array(segment, { maxLength: 5 }).map((s) => s.join('/'));
const queryValue = fc.oneof(
  fc.constantFrom('json', 'csv', 'CSV', '', 'true', 'false', 'TRUE', '1', 'csv%00'),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);

/** URLs a sample or message may carry here: loopback or private (refused by the guard), or not http. */
const safeUrl = fc.oneof(
  fc.constantFrom(
    'http://127.0.0.1:9/p',
    'HTTP://127.0.0.1:9/p',
    ' http://127.0.0.1:9/',
    'http://10.0.0.1/',
    'http://[::1]:9/',
    'http://0x7f000001:9/',
    'http://169.254.169.254/latest/meta-data/',
    'file:///etc/passwd',
    'javascript:alert(1)',
    'data:text/html,<script>1</script>',
    '',
  ),
  fc.string({ maxLength: 30 }).filter((s) => !/^\s*https?:/i.test(s)),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ minLength: 129, maxLength: 300 }),
  fc.constantFrom('..', '../x', 'a/b', '%2f', '\u0000', 'CON', '=cmd|"/C calc"!A0'),
);
const specBody = fc.oneof(
  anyJson,
  fc.record(
    {
      goal: fc.oneof(hostileString, anyJson),
      concurrency: fc.oneof(fc.integer({ min: -5, max: 5000 }), anyJson),
      model: hostileString,
      mode: fc.oneof(fc.constantFrom('agent', 'workflow', 'extract', 'scenario'), hostileString),
      workflow: anyJson,
      authProfile: anyJson,
      rateLimits: anyJson,
      output: anyJson,
      maxSteps: fc.oneof(fc.integer(), anyJson),
    },
    { requiredKeys: [] },
  ),
);
const sampleRow = fc.record(
  {
    sample_id: hostileString,
    sampleId: hostileString,
    url: safeUrl,
    input: fc.oneof(anyJson, fc.dictionary(hostileString, hostileString, { maxKeys: 3 })),
  },
  { requiredKeys: ['url'] },
);
const csvText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc
    .array(fc.tuple(hostileString, safeUrl, hostileString), { maxLength: 4 })
    .map((rows) =>
      ['sample_id,url,extra', ...rows.map((r) => r.map((c) => JSON.stringify(c)).join(','))].join('\n'),
    ),
);
const startBody = fc.oneof(
  fc.string({ maxLength: 60 }),
  anyJson.map((j) => JSON.stringify(j)),
  fc
    .record(
      {
        spec: specBody,
        samples: fc.oneof(fc.array(sampleRow, { maxLength: 4 }), anyJson),
        csv: fc.oneof(csvText, anyJson),
        prompt: fc.oneof(hostileString, anyJson),
        model: hostileString,
        concurrency: fc.oneof(fc.integer({ min: -5, max: 5000 }), anyJson),
      },
      { requiredKeys: [] },
    )
    .map((b) => JSON.stringify(b)),
);

/** Records every answer of 500 or more (with what was sent); the body is always read to the end. */
function fiveHundreds() {
  const seen: string[] = [];
  let calls = 0;
  return {
    seen,
    get calls() {
      return calls;
    },
    async check(what: string, res: Response) {
      calls++;
      if (res.status >= 500) seen.push(`${what} → ${res.status} ${(await res.text()).slice(0, 200)}`);
      else await res.arrayBuffer();
    },
  };
}

describe('generated hostile inputs never get a 5xx (issue 21 targets)', () => {
  it('run reads: ids, sub-paths, query values and evidence paths', async () => {
    const bad = fiveHundreds();
    await fc.assert(
      fc.asyncProperty(
        segment,
        fc.constantFrom('', '/results', '/report', '/evidence/', '/cancel', '/resume', '/x/y'),
        evidencePath,
        queryValue,
        queryValue,
        fc.constantFrom('GET', 'HEAD', 'POST'),
        fc.constantFrom('key-a', 'key-b'),
        async (id, sub, path, format, raw, method, key) => {
          const url = `${env.url}/v1/runs/${id}${sub}${sub === '/evidence/' ? path : ''}?format=${format}&raw=${raw}`;
          const res = await fetch(url, {
            method,
            headers: { authorization: `Bearer ${key}` },
            redirect: 'manual',
          });
          await bad.check(`${method} ${url.slice(env.url.length)}`, res);
        },
      ),
      { numRuns: 200 },
    );
    expect(bad.calls).toBeGreaterThanOrEqual(200);
    expect(bad.seen).toEqual([]);
  }, 180_000);

  it('run starts: bodies of every shape, with sample URLs no page may open', async () => {
    const bad = fiveHundreds();
    await fc.assert(
      fc.asyncProperty(
        startBody,
        fc.constantFrom('application/json', 'text/plain', ''),
        async (body, type) => {
          const res = await fetch(`${env.url}/v1/runs`, {
            method: 'POST',
            headers: { authorization: 'Bearer key-b', ...(type ? { 'content-type': type } : {}) },
            body,
          });
          await bad.check(`POST /v1/runs ${body.slice(0, 120)}`, res);
        },
      ),
      { numRuns: 150 },
    );
    expect(bad.seen).toEqual([]);
  }, 180_000);

  it('Stagehand: session ids, operations and bodies of sessions that are not the caller’s', async () => {
    const bad = fiveHundreds();
    const ops = [
      '',
      '/act',
      '/extract',
      '/observe',
      '/navigate',
      '/agentExecute',
      '/end',
      '/debug',
      '/replay',
      '/x',
    ];
    await fc.assert(
      fc.asyncProperty(
        segment,
        fc.constantFrom(...ops),
        fc.oneof(
          fc.string({ maxLength: 60 }),
          anyJson.map((j) => JSON.stringify(j)),
        ),
        fc.constantFrom('GET', 'POST'),
        async (id, op, body, method) => {
          const res = await fetch(`${env.url}/stagehand/v1/sessions/${id}${op}`, {
            method,
            headers: { 'x-bb-api-key': 'key-a', 'content-type': 'application/json' },
            ...(method === 'POST' ? { body } : {}),
          });
          await bad.check(`${method} sessions/${id}${op} ${body.slice(0, 80)}`, res);
        },
      ),
      { numRuns: 150 },
    );
    // A start body that is no object at all: refused before any browser session opens.
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.array(anyJson, { maxLength: 3 }).map((a) => JSON.stringify(a)),
          fc.constantFrom('null', '1', '"x"', '{'),
        ),
        async (body) => {
          const res = await fetch(`${env.url}/stagehand/v1/sessions/start`, {
            method: 'POST',
            headers: { 'x-bb-api-key': 'key-a', 'content-type': 'application/json' },
            body,
          });
          await bad.check(`start ${body.slice(0, 80)}`, res);
        },
      ),
      { numRuns: 40 },
    );
    expect(bad.seen).toEqual([]);
  }, 180_000);

  it('queue messages: each bad one goes to the DLQ with a reason, none back on the queue', async () => {
    const root = await mkdtemp(join(tmpdir(), 'bfn-fuzz-queue-'));
    const runStore = new LocalRunStore(join(root, 'runs'));
    const ran: SampleJob[] = [];
    const dead: { body: string; reason: string }[] = [];
    const endpoint = 'http://127.0.0.1:9324';
    const deps: QueueDeps = {
      tenant: 'acme',
      runStore,
      evidence: new LocalEvidenceStore(join(root, 'evidence')),
      // What the sample runner leaves (a result); opening pages is not what is fuzzed here, and no
      // URL these messages carry may be opened from a test.
      runSample: async (job) => {
        ran.push(job);
        await runStore.putResult({
          tenant: job.tenant,
          runId: job.runId,
          sampleId: job.sampleId,
          status: 'failed',
          reason: 'not opened',
          data: null,
          usage: {},
          evidence: [],
          writtenAt: new Date().toISOString(),
        });
      },
      deadLetter: async (body, reason) => {
        dead.push({ body, reason });
      },
      sendOutput: async () => undefined,
      outputRefused: (url) => outputQueueRefused(url, endpoint),
      maxReceiveCount: 3,
    };
    // Messages a consumer should run: the valid shape, with ids, URLs and input drawn.
    const runnable = fc
      .record({
        jobId: fc.option(fc.stringMatching(/^[a-z0-9-]{1,20}$/), { nil: undefined }),
        urls: fc.array(fc.constantFrom('http://127.0.0.1:9/p', 'HTTP://127.0.0.1:9/q', 'http://10.0.0.1/'), {
          minLength: 1,
          maxLength: 3,
        }),
        input: fc.option(fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 20 })), {
          nil: undefined,
        }),
      })
      .map((m) => JSON.stringify({ ...m, task: { spec: { goal: 'read the heading' } } }));
    const message = fc.oneof(
      runnable,
      fc.string({ maxLength: 80 }),
      anyJson.map((j) => JSON.stringify(j)),
      fc
        .record(
          {
            jobId: fc.oneof(hostileString, fc.stringMatching(/^[a-z0-9-]{1,20}$/), anyJson),
            task: fc.oneof(
              fc.record({ spec: fc.oneof(specBody, fc.constant({ goal: 'read' })) }),
              fc.record({ specId: hostileString }),
              anyJson,
            ),
            urls: fc.oneof(fc.array(safeUrl, { maxLength: 3 }), anyJson),
            input: fc.oneof(fc.dictionary(hostileString, hostileString, { maxKeys: 2 }), anyJson),
            output: fc.oneof(
              fc.record({ queueUrl: fc.oneof(safeUrl, fc.constant(`${endpoint}/000/out`)) }),
              anyJson,
            ),
          },
          { requiredKeys: [] },
        )
        .map((m) => JSON.stringify(m)),
    );
    let n = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(message, { minLength: 1, maxLength: 4 }), async (bodies) => {
          const records = bodies.map((body) => ({ messageId: `m${++n}`, body, receiveCount: 1 }));
          const deadBefore = dead.length;
          const answer = await handleQueueBatch(records, deps);
          // Nothing handed back for another delivery: a bad message is no better the next time.
          expect(answer.batchItemFailures).toEqual([]);
          for (const d of dead.slice(deadBefore)) expect(d.reason).toMatch(/\S/);
        }),
        { numRuns: 100 },
      );
    } finally {
      await rm(root, { recursive: true, force: true });
    }
    // The generators reach both ends: some messages were refused, some ran their samples.
    expect(dead.length).toBeGreaterThan(0);
    expect(ran.length).toBeGreaterThan(0);
  }, 180_000);
});
