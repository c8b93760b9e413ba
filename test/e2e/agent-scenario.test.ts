import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentEnv, isDecision, offered, perStep, reply, stepOf } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
});

const STEPS = ['Add one twice', 'Open the details', 'Write "hello" in the note and save it'];

describe('agent scenario mode', () => {
  it('works through the scenario steps in order, and accepts done only after the last', async () => {
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'anthropic' });
    llm.setHandler(
      perStep((step, r) => {
        const id = (role: string, name: string) => idInPrompt(r.text, role, name);
        switch (step) {
          case 1:
            return reply([{ tool: 'click', id: id('button', 'Add one') }]);
          case 2:
            return reply([
              { tool: 'click', id: id('button', 'Add one') },
              { tool: 'step_done', note: 'count is 2' },
            ]);
          case 3:
            // Too early: the bounce names what is left.
            return reply([{ tool: 'done', data: { count: 2 } }]);
          case 4:
            // The details change the page: the step_done after the click is skipped, to be seen first.
            return reply([
              { tool: 'click', id: id('button', 'Show details') },
              { tool: 'step_done', note: 'open' },
            ]);
          case 5:
            return reply([{ tool: 'step_done', note: 'open' }]);
          case 6:
            return reply([
              { tool: 'type', id: id('textbox', 'Note'), text: 'hello' },
              { tool: 'click', id: id('button', 'Save note') },
              { tool: 'step_done', note: 'saved' },
            ]);
          default:
            return reply([
              { tool: 'done', data: { count: Number(/Count: (\d+)/.exec(r.text)![1]), note: 'hello' } },
            ]);
        }
      }),
    );
    const state = await runAgent(
      {
        tenant: 't',
        runId: 'scenario',
        sampleId: 's1',
        url: `${site.url}/agent/counter.html`,
        task: { goal: 'Try the counter page', steps: STEPS, maxSteps: 10 },
      },
      env.deps,
    );
    const at = (s: number) => llm.requests.filter(isDecision).find((r) => stepOf(r) === s)!;
    expect(at(1).system).toContain(
      '1. Add one twice\n2. Open the details\n3. Write "hello" in the note and save it',
    );
    expect(at(1).text).toContain('Scenario step 1 of 3: Add one twice');
    expect(offered(at(1))).toContain('step_done');
    expect(at(3).text).toContain('Scenario step 2 of 3: Open the details');
    expect(at(4).text).toContain(
      'Your done was not accepted: scenario steps not achieved yet: Open the details | Write "hello" in the note and save it',
    );
    expect(at(5).text).toContain('Scenario step 2 of 3: Open the details');
    expect(at(5).text).toContain('(1 more action(s) skipped: the page changed)');
    expect(at(6).text).toContain('Scenario step 3 of 3');
    expect(at(7).text).toContain('All scenario steps are achieved: call done with the result.');
    expect(offered(at(7))).not.toContain('step_done');
    expect(state.status).toBe('done');
    expect(state.data).toEqual({ count: 2, note: 'hello' });
    expect(state.scenario).toEqual({ index: 3, notes: ['count is 2', 'open', 'saved'] });
  });
});
