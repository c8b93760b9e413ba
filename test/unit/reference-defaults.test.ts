/**
 * The reference's numbers and semantics (issue 22 item 3), as pure rules: the circuit breaker's
 * default, save_progress ending a batch, the summary model's fallback, the default rate table.
 */
import { describe, expect, it } from 'vitest';
import { summaryModels } from '../../lib/agent/slice.ts';
import { AgentTaskSchema, DEFAULT_MAX_INFRA_ERRORS } from '../../lib/agent/state.ts';
import { BATCH_ENDING } from '../../lib/agent/tools.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { taskFromSpec } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec, rateLimitFor } from '../../lib/runs/task-spec.ts';

const fakeLlm = (name: string) => ({ name }) as unknown as LlmClient;

describe('circuit breaker', () => {
  it('trips after 5 infrastructure errors in a row by default, as the reference does', () => {
    expect(DEFAULT_MAX_INFRA_ERRORS).toBe(5);
  });
  it('takes its limit from the task spec down to the agent task', () => {
    const task = taskFromSpec(parseTaskSpec({ goal: 'read the title', maxInfraErrors: 2 }));
    expect(task.maxInfraErrors).toBe(2);
    expect(AgentTaskSchema.parse({ goal: 'g', maxInfraErrors: 2 }).maxInfraErrors).toBe(2);
  });
  it('rejects a limit of 0, naming the field', () => {
    expect(() => parseTaskSpec({ goal: 'g', maxInfraErrors: 0 })).toThrow(/maxInfraErrors/);
  });
});

describe('batches', () => {
  it('end after save_progress, as after goto, done and fail; not after a click', () => {
    for (const tool of ['save_progress', 'goto', 'done', 'fail'] as const)
      expect(BATCH_ENDING.has(tool)).toBe(true);
    expect(BATCH_ENDING.has('click')).toBe(false);
  });
});

describe('history summaries', () => {
  it('ask the summary model first and the main model as the fallback', () => {
    const main = fakeLlm('main');
    const cheap = fakeLlm('cheap');
    expect(summaryModels({ llm: main, summaryLlm: cheap })).toEqual([cheap, main]);
    expect(summaryModels({ llm: main })).toEqual([main]);
    expect(summaryModels({ llm: main, summaryLlm: main })).toEqual([main]);
  });
  it('take summaryModel from the task spec, written provider/model', () => {
    expect(parseTaskSpec({ goal: 'g', summaryModel: 'openai/gpt-4.1-nano' }).summaryModel).toBe(
      'openai/gpt-4.1-nano',
    );
    expect(() => parseTaskSpec({ goal: 'g', summaryModel: 'nano' })).toThrow(/summaryModel/);
  });
});

describe('default rate table', () => {
  const none = parseTaskSpec({ goal: 'g' });
  it('paces the reference domains and their subdomains when a spec names no rateLimits', () => {
    expect(rateLimitFor(none, 'https://www.linkedin.com/in/x')?.ratePerSecond).toBeCloseTo(1 / 3);
    expect(rateLimitFor(none, 'https://github.com/a/b')?.ratePerSecond).toBe(2);
    expect(rateLimitFor(none, 'https://example.org/')?.ratePerSecond).toBe(5);
    // A look-alike name is not the domain.
    expect(rateLimitFor(none, 'https://notgithub.com/')?.ratePerSecond).toBe(5);
  });
  it('leaves loopback unpaced by default, but applies a spec’s own table to it', () => {
    expect(rateLimitFor(none, 'http://127.0.0.1:8080/')).toBeUndefined();
    const own = parseTaskSpec({ goal: 'g', rateLimits: { default: { ratePerSecond: 1 } } });
    expect(rateLimitFor(own, 'http://127.0.0.1:8080/')?.ratePerSecond).toBe(1);
    expect(rateLimitFor(own, 'https://github.com/')?.ratePerSecond).toBe(1);
  });
});
