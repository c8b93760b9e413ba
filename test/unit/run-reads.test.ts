import { describe, expect, it } from 'vitest';
import { resultsJson } from '../../lib/api/run-reads.ts';
import type { CheckedResult } from '../../lib/runs/result-seals.ts';
import type { ResultRecord } from '../../lib/store/ports.ts';

const result = (i: number): ResultRecord => ({
  tenant: 't',
  runId: 'r',
  sampleId: `s${i}`,
  status: 'done',
  reason: 'ok',
  data: { n: i, text: `"quoted" \u2028 ${i}` },
  usage: { promptTokens: i },
  evidence: [],
  writtenAt: '2026-12-04T00:00:00.000Z',
});

async function text(parts: AsyncGenerator<string>): Promise<{ text: string; parts: number }> {
  const all: string[] = [];
  for await (const p of parts) all.push(p);
  return { text: all.join(''), parts: all.length };
}

describe('resultsJson: the whole-results answer a slice at a time', () => {
  it('is the results as one JSON document, checked slice by slice, with the tampered count', async () => {
    const results = Array.from({ length: 10 }, (_, i) => result(i));
    const slices: number[] = [];
    const check = (slice: readonly ResultRecord[]): CheckedResult[] => {
      slices.push(slice.length);
      return slice.map((r) => (r.sampleId === 's7' ? { ...r, tampered: true, tamperReason: 'edited' } : r));
    };
    const out = await text(resultsJson({ runId: 'r', status: 'done' }, results, check, 4));
    expect(slices).toEqual([4, 4, 2]);
    // Opening, three slices, closing.
    expect(out.parts).toBe(5);
    const body = JSON.parse(out.text) as {
      runId: string;
      status: string;
      tampered: number;
      results: CheckedResult[];
    };
    expect(body.runId).toBe('r');
    expect(body.status).toBe('done');
    expect(body.tampered).toBe(1);
    expect(body.results.map((r) => r.sampleId)).toEqual(results.map((r) => r.sampleId));
    expect(body.results[7]).toMatchObject({ tampered: true, tamperReason: 'edited' });
    expect(body.results[3]).toEqual(results[3]);
  });

  it('leaves tampered out when none is, and answers an empty list for a run with no results', async () => {
    const none = JSON.parse(
      (await text(resultsJson({ runId: 'r', status: 'running' }, [], (s) => [...s]))).text,
    );
    expect(none).toEqual({ runId: 'r', status: 'running', results: [] });
    const clean = JSON.parse(
      (await text(resultsJson({ runId: 'r', status: 'done' }, [result(1)], (s) => [...s]))).text,
    );
    expect(clean).toEqual({ runId: 'r', status: 'done', results: [result(1)] });
  });
});
