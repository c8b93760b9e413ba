import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { requestTimeouts } from '../../lib/api/http-limits.ts';
import { MAX_SCHEMA_DEPTH, nestingDepth } from '../../lib/ops/extract-schema.ts';
import { combinedCsv } from '../../lib/runs/merge.ts';
import { REPORT_CSP, renderReport } from '../../lib/runs/report.ts';
import { canonicalJson, resultsProblem } from '../../lib/runs/verify-run.ts';
import { evidenceHeaders } from '../../lib/store/evidence-headers.ts';
import { idProblem, parseEvidencePath } from '../../lib/store/names.ts';
import type { ResultRecord, RunRecord, SampleRecord } from '../../lib/store/ports.ts';

/** The pure rules behind issue 21's fixes: ids and paths, served headers, CSV, CSP, verify, limits. */

const run: RunRecord = {
  tenant: 't',
  runId: 'r1',
  status: 'done',
  spec: {},
  sampleCount: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const sample: SampleRecord = {
  tenant: 't',
  runId: 'r1',
  sampleId: 's1',
  url: 'https://a.test/',
  input: {},
  status: 'done',
  attempts: 1,
  updatedAt: run.updatedAt,
};
const result = (data: ResultRecord['data']): ResultRecord => ({
  tenant: 't',
  runId: 'r1',
  sampleId: 's1',
  status: 'done',
  reason: 'ok',
  data,
  usage: { promptTokens: 3 },
  evidence: [],
  writtenAt: run.updatedAt,
});

describe('the one rule for ids and evidence paths', () => {
  it('accepts what we generate and names the field of anything else', () => {
    expect(idProblem('id', '20261128-082103-a1b2c3')).toBeUndefined();
    expect(idProblem('id', 'x'.repeat(128))).toBeUndefined();
    expect(idProblem('id', 'x'.repeat(129))).toMatch(/^id: "x{40}… \(129 characters\)" must be 1–128/);
    for (const bad of ['', 'a/b', 'a b', 'a\u0000b', '../x'])
      expect(idProblem('jobId', bad), JSON.stringify(bad)).toMatch(/^jobId: /);
    expect(idProblem('id', 'a\nb')).toContain('"a?b"');
  });

  it('decodes each path segment once and refuses encoded slashes, NULs, dots and depth', () => {
    expect(parseEvidencePath('samples/s~2F1/01_start.png')).toEqual({
      parts: ['samples', 's~2F1', '01_start.png'],
    });
    expect(parseEvidencePath('combined%2Ecsv')).toEqual({ parts: ['combined.csv'] });
    for (const bad of [
      'x%2f..%2fy',
      '%2fetc%2fpasswd',
      'combined.csv%00.png',
      '..',
      'a/../b',
      '.hidden/x',
      'a//b',
      '',
      '%zz',
      '%252e%252e',
      'a\\b',
      `${'a/'.repeat(16)}b`,
    ])
      expect(parseEvidencePath(bad), bad).toEqual({ problem: expect.stringMatching(/^path: /) });
  });
});

describe('evidence served as data', () => {
  it('makes everything but raster screenshots an attachment, never sniffed, sandboxed', () => {
    for (const key of [
      't/run_r/samples/s/evil.html',
      't/run_r/x.svg',
      't/run_r/results.json',
      't/run_r/noext',
    ]) {
      const h = evidenceHeaders(key);
      expect(h['content-disposition'], key).toMatch(/^attachment; filename="[^"/]+"$/);
      expect(h['x-content-type-options']).toBe('nosniff');
      expect(h['content-security-policy']).toMatch(/^sandbox;/);
    }
    expect(evidenceHeaders('t/run_r/x.svg')['content-type']).toBe('application/octet-stream');
    expect(evidenceHeaders('t/run_r/a.PNG')['content-disposition']).toBe('inline; filename="a.PNG"');
  });
});

describe('spreadsheet-safe CSV', () => {
  it('escapes formula starts in text cells and headers, keeps numbers, and can stay raw', () => {
    const data = { '=h': 'x', f: '=1+1', p: '+1', m: '-1', a: '@x', t: '\tx', c: '\rx', n: -5 };
    const csv = combinedCsv([sample], [result(data)]);
    const row = csv.split('\n')[1] ?? '';
    expect(csv.split('\n')[0]).toContain("'=h");
    expect(row).toContain(",'=1+1,'+1,'-1,'@x,'\tx,\"'\rx\",-5,");
    const raw = combinedCsv([sample], [result(data)], { raw: true });
    expect(raw).toContain(',=1+1,+1,-1,@x,');
    expect(raw).not.toContain("'");
  });
});

describe('the report CSP', () => {
  it('allows exactly the report’s own script and style by hash, and escapes option values', () => {
    const html = renderReport(run, [{ sample, result: result({}), shots: [], actions: [] }]);
    const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    const hash = (t: string) => `'sha256-${createHash('sha256').update(t).digest('base64')}'`;
    expect(REPORT_CSP).toContain(`script-src ${hash(script)}`);
    expect(REPORT_CSP).toContain(`style-src ${hash(style)}`);
    expect(REPORT_CSP).not.toContain('unsafe-inline');
    expect(html).toContain(
      `content="${REPORT_CSP.replace(/; frame-ancestors[^;]*/, '').replace(/'/g, '&#39;')}"`,
    );
    expect(html).toMatch(/<option value="done">done<\/option>/);
  });
});

describe('verify: stored results against the sealed copy', () => {
  it('compares by value whatever the key order, and names the first differing sample', () => {
    expect(canonicalJson({ b: 1, a: [{ d: 2, c: null }] })).toBe('{"a":[{"c":null,"d":2}],"b":1}');
    const sealed = [result({ name: 'A', price: 3 })];
    expect(resultsProblem([result({ price: 3, name: 'A' })], sealed, 'k')).toBeUndefined();
    expect(resultsProblem([result({ name: 'B', price: 3 })], sealed, 'k')).toMatchObject({
      kind: 'edited',
      where: 'result',
      message: expect.stringContaining('sample s1'),
    });
    expect(resultsProblem([], sealed, 'k')).toMatchObject({ kind: 'removed', where: 'result' });
    expect(resultsProblem(sealed, [], 'k')).toMatchObject({ kind: 'added', where: 'result' });
  });
});

describe('limits', () => {
  it('measures schema depth without recursion, stopping past the limit', () => {
    let deep: unknown = { type: 'string' };
    for (let i = 0; i < 50_000; i++) deep = { type: 'object', properties: { a: deep } };
    expect(nestingDepth(deep)).toBeGreaterThan(MAX_SCHEMA_DEPTH);
    expect(nestingDepth({ type: 'object', properties: { a: { type: 'string' } } })).toBe(3);
  });

  it('cuts slow requests well before Node’s 300 s, never headers after the whole request', () => {
    expect(requestTimeouts({})).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      connectionsCheckingInterval: 1_000,
    });
    expect(
      requestTimeouts({ BROWSERFN_REQUEST_TIMEOUT_MS: '2000', BROWSERFN_HEADERS_TIMEOUT_MS: '9000' }),
    ).toEqual({
      headersTimeout: 2000,
      requestTimeout: 2000,
      connectionsCheckingInterval: 250,
    });
    expect(requestTimeouts({ BROWSERFN_REQUEST_TIMEOUT_MS: 'soon' }).requestTimeout).toBe(30_000);
  });
});
