/**
 * Issue 28 item 3: tokens spent on a model with no known price read "unknown" (never `$0.0000`) in the
 * CLI's progress line and in the report, and after a resume the line shows the run's totals.
 */
import { describe, expect, it } from 'vitest';
import { ProgressTally } from '../../lib/cli/progress.ts';
import { renderReport } from '../../lib/runs/report.ts';
import type { ResultRecord, RunRecord, SampleRecord } from '../../lib/store/ports.ts';

describe('progress cost', () => {
  it('an unpriced model call makes the cost unknown, a priced one keeps dollars', () => {
    const priced = new ProgressTally(1, 0, 0, true);
    priced.spend({ promptTokens: 100, completionTokens: 20, costUsd: 0.0012 });
    expect(priced.line(60_000)).toContain('120 tokens · $0.0012');

    const unpriced = new ProgressTally(1, 0, 0, true);
    unpriced.spend({ promptTokens: 100, completionTokens: 20, costUsd: 0.0012 });
    unpriced.spend({ promptTokens: 50, completionTokens: 5 });
    expect(unpriced.line(60_000)).toContain('175 tokens · unknown');
    expect(unpriced.line(60_000)).not.toContain('$');
  });

  it('a call that used no tokens leaves the cost known', () => {
    const t = new ProgressTally(1, 0, 0, true);
    t.spend({ promptTokens: 0, completionTokens: 0 });
    expect(t.cost()).toBe('$0.0000');
  });

  it('after a resume the line counts what the earlier samples spent', () => {
    const t = new ProgressTally(4, 2, 0, true);
    t.carry({ tokens: 300, costUsd: 0.003 });
    t.carry({ tokens: 200, costUsd: 0.002 });
    t.spend({ promptTokens: 90, completionTokens: 10, costUsd: 0.001 });
    t.finish({ sampleId: 'c', status: 'done', tokens: 100, costUsd: 0.001 });
    expect(t.line(60_000)).toMatch(/^3\/4 · done 3 · failed 0 .* 600 tokens · \$0\.0060/);
  });
});

const run: RunRecord = {
  tenant: 'local',
  runId: 'r1',
  status: 'done',
  spec: {},
  sampleCount: 1,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};
const sample: SampleRecord = {
  tenant: 'local',
  runId: 'r1',
  sampleId: 's1',
  url: 'https://a.test/',
  input: {},
  status: 'done',
  attempts: 1,
  updatedAt: '',
};
const resultWith = (usage: ResultRecord['usage']): ResultRecord => ({
  tenant: 'local',
  runId: 'r1',
  sampleId: 's1',
  status: 'done',
  reason: '',
  data: null,
  usage,
  evidence: [],
  writtenAt: '2026-01-01T00:00:01.000Z',
});

describe('report cost', () => {
  it('reads "unknown" for a sample and the run when the model had no price', () => {
    const html = renderReport(run, [
      {
        sample,
        result: resultWith({ promptTokens: 100, completionTokens: 9, ms: 5 }),
        shots: [],
        actions: [],
      },
    ]);
    expect(html).toContain('<b id="total-cost">unknown</b>');
    expect(html).toContain('<td class="cost">unknown</td>');
    expect(html).not.toContain('$0.0000');
  });

  it('shows dollars when the model was priced', () => {
    const html = renderReport(run, [
      {
        sample,
        result: resultWith({ promptTokens: 100, completionTokens: 9, costUsd: 0.0021, ms: 5 }),
        shots: [],
        actions: [],
      },
    ]);
    expect(html).toContain('<b id="total-cost">$0.0021</b>');
    expect(html).toContain('<td class="cost">0.002100</td>');
  });
});
