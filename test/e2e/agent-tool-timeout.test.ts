import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { TOOL_TIMEOUT_MS } from '../../lib/agent/dispatch.ts';
import { runSlice } from '../../lib/agent/slice.ts';
import { newAgentState, type StepRecord } from '../../lib/agent/state.ts';
import { agentEnv, isDecision, perStep, reply } from '../support/agent-env.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

describe('the tool timeout', () => {
  it('is 60 s unless the deps say otherwise', () => {
    expect(TOOL_TIMEOUT_MS).toBe(60_000);
  });

  it('fails a tool that does not come back in time, and the sample goes on to its end', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    const steps: StepRecord[] = [];
    // The extract tool's own model call is answered far later than the tool may take.
    llm.setHandler((r) =>
      isDecision(r)
        ? perStep((step) =>
            step === 1
              ? reply([{ tool: 'extract', instruction: 'the product name' }])
              : reply([{ tool: 'done', data: { title: 'Steel Kettle' } }]),
          )(r)
        : { delayMs: 15_000, reply: { json: { data: { title: 'late' } } } },
    );
    const state = await runSlice(
      newAgentState({
        tenant: 't',
        runId: 'tool-timeout',
        sampleId: 's',
        url: `${site.url}/products/steel-kettle.html`,
        task: { goal: 'the product name as title', maxSteps: 4 },
      }),
      { ...env.deps, toolTimeoutMs: 300, onStep: (s) => steps.push(s) },
      { deadline: Date.now() + 120_000 },
    );
    const extract = steps[0]?.actions[0];
    expect(extract).toMatchObject({ tool: 'extract', ok: false });
    expect(extract?.outcome).toContain('timed out after 300 ms');
    // The model was told, and the sample still ended as it decided.
    const second = llm.requests.filter(isDecision)[1];
    expect(second?.text).toContain('timed out after 300 ms');
    expect(state.status).toBe('done');
    expect(state.data).toMatchObject({ title: 'Steel Kettle' });
  }, 180_000);
});
