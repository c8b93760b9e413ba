/**
 * A crash record keeps what the sample's last checkpoint gathered and says which mode spent it, so a
 * scenario sample that crashed is counted under "scenario" in the run's tokens by mode, not the agent's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totalsOf } from '../../lib/runs/merge.ts';
import type { RunDeps } from '../../lib/runs/run-deps.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { recordCrash } from '../../lib/runs/slice-outcomes.ts';
import { taskFromSpec } from '../../lib/runs/slice-runner.ts';
import { freshSliceState } from '../../lib/runs/slice-sample.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { JsonObject } from '../../lib/store/ports.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-slice-outcomes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a crash record', () => {
  it("keeps the checkpoint's data, tokens and evidence and names the sample's mode", async () => {
    const runStore = new LocalRunStore(join(dir, 'runs'));
    const evidence = new LocalEvidenceStore(join(dir, 'evidence'));
    const spec = parseTaskSpec({ scenario: { steps: ['Add a note saying Tea'] } });
    const input = await createRun(runStore, evidence, {
      tenant: 't',
      spec,
      samples: [{ sampleId: 's1', url: 'https://notes.test/', input: {} }],
    });
    const state = freshSliceState({
      tenant: 't',
      runId: input.runId,
      sampleId: 's1',
      task: taskFromSpec(spec),
      url: 'https://notes.test/',
    });
    state.step = 3;
    state.data = { scenario: 'running' };
    state.usage = { ...state.usage, promptTokens: 1200, completionTokens: 90 };
    state.evidence.push({ key: 't/run_x/s1/memory.json', sha256: 'ab'.repeat(32) });
    await runStore.saveCheckpoint('t', input.runId, 's1', {
      seq: 1,
      state: state as unknown as JsonObject,
      savedAt: new Date().toISOString(),
    });
    const deps = { runStore, evidence } as unknown as RunDeps;
    const out = await recordCrash(deps, {
      tenant: 't',
      runId: input.runId,
      sampleId: 's1',
      crash: { Error: 'Error', Cause: '{"errorMessage":"browser went away\\n at x"}' },
    });
    expect(out).toEqual({ final: true, status: 'failed' });
    const result = await runStore.getResult('t', input.runId, 's1');
    expect(result).toMatchObject({
      status: 'failed',
      reason: 'crashed: Error: browser went away',
      data: { scenario: 'running' },
      usage: { mode: 'scenario', steps: 3, promptTokens: 1200, completionTokens: 90 },
      evidence: [{ key: 't/run_x/s1/memory.json' }],
    });
    const run = (await runStore.getRun('t', input.runId))!;
    const totals = totalsOf(run, await runStore.listSamples('t', input.runId), [result!]);
    expect(totals.tokensByMode).toEqual({ scenario: { promptTokens: 1200, completionTokens: 90 } });
  });
});
