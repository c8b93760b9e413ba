import { PassThrough } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { pageGone, throttledBy } from '../../lib/browser/navigate.ts';
import { ProgressTally, progressView, sampleLine } from '../../lib/cli/progress.ts';
import { crashMessage } from '../../lib/runs/handlers.ts';
import { combinedCsv, totalsOf } from '../../lib/runs/merge.ts';
import { specFromPlan } from '../../lib/runs/planner.ts';
import { sampleFromUrl, samplesFromCsv, samplesFromList } from '../../lib/runs/samples.ts';
import { parseTaskSpec, rateBucketKey, rateLimitFor, taskSpecJsonSchema } from '../../lib/runs/task-spec.ts';
import type { ResultRecord, RunRecord, SampleRecord } from '../../lib/store/ports.ts';
import { tempStores } from '../support/runs-env.ts';

describe('task spec', () => {
  it('fills defaults and keeps what was given', () => {
    const spec = parseTaskSpec({ goal: 'get the price', requiredFields: ['price'] });
    expect(spec).toMatchObject({
      goal: 'get the price',
      maxSteps: 20,
      vision: 'fallback',
      concurrency: 4,
      maxSlices: 50,
    });
    expect(spec.requiredFields).toEqual(['price']);
  });

  it('names the bad field', () => {
    expect(() => parseTaskSpec({})).toThrow(/task spec goal:/);
    expect(() => parseTaskSpec({ goal: 'x', maxSteps: 0 })).toThrow(/maxSteps/);
    expect(() => parseTaskSpec({ goal: 'x', vision: 'sometimes' })).toThrow(/vision/);
    expect(() => parseTaskSpec({ goal: 'x', model: 'gpt-4' })).toThrow(/model: .*provider\/model/);
    expect(() => parseTaskSpec({ goal: 'x', authProfile: { file: 'a', key: 'b' } })).toThrow(/authProfile/);
    expect(() => parseTaskSpec({ goal: 'x', rateLimits: { 'a b': { ratePerSecond: 1 } } })).toThrow(
      /rateLimits/,
    );
    expect(() => parseTaskSpec({ goal: 'x', colour: 'red' })).toThrow(/colour|Unrecognized/);
    expect(() => parseTaskSpec({ goal: 'x', outputSchema: { type: 'array' } })).toThrow(
      /outputSchema: must describe an object/,
    );
    expect(() =>
      parseTaskSpec({ goal: 'x', outputSchema: { type: 'object', properties: { a: { type: 'strin' } } } }),
    ).toThrow(/outputSchema: not a usable JSON Schema \(Unsupported type: strin\)/);
  });

  it('has a JSON Schema with the fields a planner or a client fills', () => {
    const schema = taskSpecJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining([
        'goal',
        'outputSchema',
        'maxSteps',
        'authProfile',
        'rateLimits',
        'concurrency',
      ]),
    );
    expect(schema.required).toEqual(['goal']);
  });

  it('rate limit by host, else the default entry, else none', () => {
    const spec = parseTaskSpec({
      goal: 'x',
      rateLimits: { 'shop.test': { ratePerSecond: 0.5 }, default: { ratePerSecond: 5, burst: 2 } },
    });
    expect(rateLimitFor(spec, 'https://SHOP.test/a')).toEqual({ host: 'shop.test', ratePerSecond: 0.5 });
    expect(rateLimitFor(spec, 'https://other.test/')).toEqual({
      host: 'other.test',
      ratePerSecond: 5,
      burst: 2,
    });
    // No table in the spec: the default table (one request per 0.2 s), loopback left unpaced.
    expect(rateLimitFor(parseTaskSpec({ goal: 'x' }), 'https://a.test/')).toEqual({
      host: 'a.test',
      ratePerSecond: 5,
      burst: 1,
    });
    expect(rateLimitFor(parseTaskSpec({ goal: 'x' }), 'http://127.0.0.1:9/')).toBeUndefined();
  });
});

describe('samples', () => {
  it('CSV: ids, URLs, and the other columns as input; BOM and quotes understood', () => {
    const samples = samplesFromCsv(
      '\ufeffsample_id,url,name,note\nt1,https://a.test/x,"Linus, T","two\nlines"\nt2,http://b.test/,,\n',
    );
    expect(samples).toEqual([
      { sampleId: 't1', url: 'https://a.test/x', input: { name: 'Linus, T', note: 'two\nlines' } },
      { sampleId: 't2', url: 'http://b.test/', input: { name: '', note: '' } },
    ]);
  });

  it('CSV errors name the line and column (counting lines inside quotes)', () => {
    expect(() => samplesFromCsv('sample_id,url\na,https://a.test/\nb,mailto:x', 'in.csv')).toThrow(
      'in.csv line 3, column 2 (url): url "mailto:x" must start with http:// or https://',
    );
    expect(() =>
      samplesFromCsv('url,note,sample_id\nhttps://a.test/,"x\ny",a\nhttps://b.test/,z,a b'),
    ).toThrow(/CSV line 4, column 3 \(sample_id\): sample_id "a b"/);
    expect(() => samplesFromCsv('sample_id,url\na,https://a.test/\na,https://b.test/')).toThrow(
      'CSV line 3: sample_id "a" is already used at CSV line 2',
    );
    expect(() => samplesFromCsv('id,url\na,https://a.test/')).toThrow(
      /line 1: the header needs "sample_id" and "url"/,
    );
    expect(() => samplesFromCsv('sample_id,url\n')).toThrow(/no samples/);
    expect(() => samplesFromCsv('sample_id,url\na,https://a.test/,extra')).toThrow(/CSV: .*(column|record)/i);
  });

  it('--url gives one sample named after the page; lists are checked like CSV', () => {
    expect(sampleFromUrl('https://github.com/torvalds')).toEqual([
      { sampleId: 'github.com_torvalds', url: 'https://github.com/torvalds', input: {} },
    ]);
    expect(() => sampleFromUrl('github.com')).toThrow(/--url: url "github.com" is not a URL/);
    expect(() =>
      samplesFromList([
        { sample_id: 'a', url: 'https://a.test/' },
        { sampleId: 'a', url: 'https://b.test/' },
      ]),
    ).toThrow('samples[1]: sample_id "a" is already used at samples[0]');
  });
});

const run: RunRecord = {
  tenant: 't',
  runId: 'r',
  status: 'running',
  spec: { goal: 'x' },
  sampleCount: 4,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const sample = (id: string, status: SampleRecord['status'] = 'pending'): SampleRecord => ({
  tenant: 't',
  runId: 'r',
  sampleId: id,
  url: `https://s.test/${id}`,
  input: {},
  status,
  attempts: 1,
  updatedAt: run.createdAt,
});
const result = (
  id: string,
  status: ResultRecord['status'],
  data: ResultRecord['data'],
  tokens: number,
): ResultRecord => ({
  tenant: 't',
  runId: 'r',
  sampleId: id,
  status,
  reason: status === 'done' ? 'ok' : 'crashed: boom',
  data,
  usage: { promptTokens: tokens, completionTokens: 10, cachedTokens: 0, costUsd: tokens / 1e6, ms: 1000 },
  evidence: [],
  writtenAt: '2026-01-01T00:00:05.000Z',
});

describe('merge', () => {
  const samples = [sample('b'), sample('a'), sample('d', 'running'), sample('c')];
  const results = [
    result('b', 'done', { name: 'B', tags: ['x', 'y'], status: 'shadow' }, 100),
    result('a', 'done', { name: 'A', stats: { stars: 3 } }, 50),
    result('c', 'failed', null, 0),
  ];

  it('combined.csv: sorted by sample id, nested values as JSON, our column names kept apart', () => {
    const rows = parse(combinedCsv(samples, results), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.sample_id)).toEqual(['a', 'b', 'c', 'd']);
    expect(Object.keys(rows[0]!)).toEqual([
      'sample_id',
      'url',
      'status',
      'reason',
      'name',
      'tags',
      'data.status',
      'stats',
      'prompt_tokens',
      'completion_tokens',
      'cost_usd',
    ]);
    expect(rows[1]).toMatchObject({
      status: 'done',
      name: 'B',
      tags: '["x","y"]',
      'data.status': 'shadow',
      stats: '',
    });
    expect(rows[0]!.stats).toBe('{"stars":3}');
    expect(rows[2]).toMatchObject({ status: 'failed', reason: 'crashed: boom', name: '' });
    expect(rows[3]).toMatchObject({ status: 'running', prompt_tokens: '' });
  });

  it('totals: counts per status (no result = pending/running), tokens, cost, duration', () => {
    const t = totalsOf(run, samples, results);
    expect(t.counts).toEqual({
      pending: 0,
      running: 1,
      done: 2,
      partial_success: 0,
      failed: 1,
      needs_review: 0,
    });
    expect(t.promptTokens).toBe(150);
    expect(t.completionTokens).toBe(30);
    expect(t.costUsd).toBeCloseTo(0.00015, 8);
    expect(t.durationMs).toBe(5000);
    expect(t.sampleMs).toBe(3000);
  });
});

describe('planner reply → spec', () => {
  it('builds the output schema from the listed fields and validates the samples', () => {
    const { spec, samples } = specFromPlan(
      {
        goal: 'open the profile and read name and followers',
        fields: [
          { name: 'name', type: 'string', description: 'full name' },
          { name: 'followers', type: 'integer', description: '' },
          { name: 'repos', type: 'string_list', description: 'pinned repositories' },
        ],
        requiredFields: ['name', 'ghost'],
        keywords: ['followers'],
        maxSteps: 500,
        expectedItems: null,
        samples: [{ sample_id: 'torvalds', url: 'https://github.com/torvalds' }],
      },
      { concurrency: 3 },
    );
    expect(spec.outputSchema).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'full name' },
        followers: { type: 'integer' },
        repos: { type: 'array', items: { type: 'string' }, description: 'pinned repositories' },
      },
    });
    expect(spec.requiredFields).toEqual(['name']);
    expect(spec.maxSteps).toBe(50);
    expect(spec.concurrency).toBe(3);
    expect(samples).toEqual([{ sampleId: 'torvalds', url: 'https://github.com/torvalds', input: {} }]);
  });
});

describe('progress', () => {
  it('counts, pages per minute and ETA', () => {
    const t = new ProgressTally(10, 2, 0);
    t.start('a');
    t.start('b');
    t.finish({ sampleId: 'a', status: 'done', tokens: 120, costUsd: 0.001 });
    t.finish({ sampleId: 'b', status: 'failed', tokens: 0, costUsd: 0 });
    expect(t.rates(60_000)).toEqual({ perMinute: 2, etaSeconds: 180 });
    expect(t.line(60_000)).toBe(
      '4/10 · done 3 · failed 1 · running 0 · 2.0 pages/min · 120 tokens · $0.0010 · ETA 180s',
    );
  });
  it('a sample that went wrong says why; one that went well only its status', () => {
    const base = { tokens: 0, costUsd: 0 };
    expect(sampleLine({ ...base, sampleId: 'a', status: 'done', reason: 'extracted' })).toBe('a: done');
    expect(sampleLine({ ...base, sampleId: 'b', status: 'failed', reason: 'HTTP 404\nmore' })).toBe(
      'b: failed (HTTP 404)',
    );
    expect(sampleLine({ ...base, sampleId: 'c', status: 'needs_review' })).toBe('c: needs_review');
  });

  it('on a terminal, a failed sample is printed above the live bar with its reason', async () => {
    const term = Object.assign(new PassThrough(), { isTTY: true, columns: 160 });
    let shown = '';
    term.on('data', (b: Buffer) => {
      shown += b.toString();
    });
    const tally = new ProgressTally(2);
    const view = progressView(term as unknown as NodeJS.WriteStream, tally, () => undefined);
    const gone = { sampleId: 'gone', status: 'failed', tokens: 0, costUsd: 0, reason: 'HTTP 404' };
    tally.finish(gone);
    view.update(tally, gone);
    await new Promise((r) => setTimeout(r, 250));
    view.stop();
    expect(shown).toContain('gone: failed (HTTP 404)\n');
    expect(shown).toMatch(/1\/2 \| done 0 failed 1/);
  });
});

describe('dead links', () => {
  it('a 404 or 410 the page stayed on is nothing to work on; one a script routed away from is', () => {
    expect(pageGone(404, 'https://a.test/x', 'https://a.test/x')).toBe(
      'the page answered HTTP 404 (not found)',
    );
    expect(pageGone(410, 'https://a.test/x', 'https://a.test/x')).toBe('the page answered HTTP 410 (gone)');
    expect(pageGone(404, 'https://a.test/x', 'https://a.test/?p=/x')).toBeUndefined();
    expect(pageGone(200, 'https://a.test/x', 'https://a.test/x')).toBeUndefined();
    expect(pageGone(500, 'https://a.test/x', 'https://a.test/x')).toBeUndefined();
    expect(pageGone(429, 'https://a.test/x', 'https://a.test/x')).toBe(
      'the site answered HTTP 429 (too many requests)',
    );
  });

  it('a 429, or a 503 that says when to come back, asks us to slow down', () => {
    expect(throttledBy(429, { 'retry-after': '2' })).toEqual({ retryAfter: '2' });
    expect(throttledBy(429, {})).toEqual({});
    expect(throttledBy(503, { 'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT' })).toEqual({
      retryAfter: 'Wed, 21 Oct 2026 07:28:00 GMT',
    });
    expect(throttledBy(503, {})).toBeUndefined();
    expect(throttledBy(200, { 'retry-after': '2' })).toBeUndefined();
  });
});

describe('crash reasons', () => {
  it('reads the message out of a Lambda error Cause, keeps plain text, one line', () => {
    expect(
      crashMessage(
        JSON.stringify({ errorType: 'Error', errorMessage: 'browser closed\nat x', stackTrace: ['a'] }),
      ),
    ).toBe('browser closed');
    expect(crashMessage('Task timed out after 600.00 seconds')).toBe('Task timed out after 600.00 seconds');
    expect(crashMessage('x'.repeat(900))).toHaveLength(500);
  });
});

describe('rate buckets', () => {
  it('are per tenant: one tenant emptying its bucket for a host leaves another’s full', async () => {
    expect(rateBucketKey('a', 'shop.test')).not.toBe(rateBucketKey('b', 'shop.test'));
    expect(rateBucketKey('a/b', 'shop.test')).not.toBe(rateBucketKey('a', 'b/shop.test'));
    const stores = await tempStores('bfn-buckets-');
    try {
      const limit = { ratePerSecond: 0.01, burst: 1 };
      const now = Date.now();
      const takeA = () => stores.runStore.takeToken(rateBucketKey('tenant-a', 'shop.test'), limit, now);
      expect((await takeA()).granted).toBe(true);
      expect((await takeA()).granted).toBe(false);
      const takeB = await stores.runStore.takeToken(rateBucketKey('tenant-b', 'shop.test'), limit, now);
      expect(takeB.granted).toBe(true);
    } finally {
      await stores.cleanup();
    }
  });
});
