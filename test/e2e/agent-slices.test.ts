import { spawn } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { runSlice } from '../../lib/agent/slice.ts';
import { newAgentState, stateFromJson } from '../../lib/agent/state.ts';
import { agentEnv, currentUrl, isDecision, perStep, reply, stepOf, tempRoot } from '../support/agent-env.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

const PASSWORD = 'correct-horse-battery-staple';

describe('agent slices', () => {
  it('merges save_progress across two slices with a fresh browser in between (signed-in state carried over)', async () => {
    const env = await agentEnv({
      browser: () => browser,
      site,
      llm,
      flavour: 'anthropic',
      variables: { password: PASSWORD },
    });
    llm.setHandler(
      perStep((_step, r) => {
        const url = currentUrl(r);
        if (url.endsWith('/login.html'))
          return reply([
            { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Username'), text: 'alice' },
            { tool: 'type', id: idInPrompt(r.text, 'textbox', 'Password'), text: '%password%' },
            { tool: 'click', id: idInPrompt(r.text, 'button', 'Sign in') },
          ]);
        if (url.endsWith('/home.html'))
          return reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Invoices') }]);
        // save_progress ends the batch: the click after it waits for the next step.
        if (url.endsWith('/invoices.html'))
          return /Data saved so far: [^\n]*INV-101/.test(r.text)
            ? reply([{ tool: 'click', id: idInPrompt(r.text, 'link', 'Next') }])
            : reply([
                {
                  tool: 'save_progress',
                  data: { invoices: ['INV-101', 'INV-102'], pages: { first: true } },
                  note: 'p1',
                },
                { tool: 'click', id: idInPrompt(r.text, 'link', 'Next') },
              ]);
        if (url.endsWith('/invoices-2.html') && !r.text.includes('INV-103"'))
          return reply([
            {
              tool: 'save_progress',
              data: { invoices: ['INV-102', 'INV-103'], pages: { second: true } },
              note: 'p2',
            },
          ]);
        return reply([{ tool: 'done', data: { total: 3 } }]);
      }),
    );
    const init = {
      tenant: 't',
      runId: 'slices',
      sampleId: 'two',
      url: `${site.url}/agent/login.html`,
      task: { goal: 'Collect invoice numbers', maxSteps: 10 },
    };
    const first = await runSlice(newAgentState(init), env.deps, {
      deadline: Date.now() + 60_000,
      maxSteps: 4,
    });
    expect(first.status).toBe('running');
    expect(first.step).toBe(4);
    expect(first.data).toEqual({ invoices: ['INV-101', 'INV-102'], pages: { first: true } });
    // The next slice starts from what the store holds, as another machine would.
    const saved = await env.runStore.loadCheckpoint('t', 'slices', 'two');
    expect(saved?.state.step).toBe(4);
    const seen = llm.requests.length;
    const second = await runSlice(stateFromJson(saved!.state), env.deps, { deadline: Date.now() + 60_000 });
    const later = llm.requests.slice(seen).filter(isDecision);
    expect(currentUrl(later[0]!)).toMatch(/\/agent\/invoices-2\.html$/);
    expect(stepOf(later[0]!)).toBe(5);
    expect(later[0]!.text).toContain('"INV-101"');
    expect(second.status).toBe('done');
    expect(second.slices).toBe(2);
    expect(second.data).toEqual({
      invoices: ['INV-101', 'INV-102', 'INV-103'],
      pages: { first: true, second: true },
      total: 3,
    });
  });

  // A child process on tsx, a fresh browser and a resume: minutes on a machine running two suites.
  it('resumes a killed slice from its checkpoint: saved steps are not redone and the result is written once', async () => {
    const root = await tempRoot();
    let killAt: (() => void) | undefined;
    const killed = new Promise<void>((resolve) => {
      killAt = resolve;
    });
    llm.setHandler(
      perStep((step, r) => {
        if (step === 2) return reply([{ tool: 'save_progress', data: { items: ['one'] }, note: '1' }]);
        if (step === 5) return reply([{ tool: 'save_progress', data: { items: ['two'] }, note: '2' }]);
        if (step === 6) {
          // The process dies while the model is thinking about step 6.
          killAt?.();
          return { delayMs: 30_000, reply: reply([{ tool: 'fail', reason: 'never answered' }]) };
        }
        return reply([
          step % 2 ? { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') } : { tool: 'wait', ms: 5 },
        ]);
      }),
    );
    const init = {
      tenant: 't',
      runId: 'kill',
      sampleId: 'k',
      url: `${site.url}/agent/counter.html`,
      task: { goal: 'Collect items', maxSteps: 12 },
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/scripts/agent-slice.ts'], {
      env: {
        ...process.env,
        AGENT_ROOT: root,
        AGENT_HOST: `127.0.0.1:${site.port}`,
        AGENT_MODEL_URL: llm.openaiBaseURL,
        AGENT_INIT: JSON.stringify(init),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += String(d);
    });
    const exited = new Promise<number | null>((resolve) =>
      child.on('exit', (code, signal) => resolve(signal ? -1 : code)),
    );
    await Promise.race([killed, exited]);
    child.kill('SIGKILL');
    expect(await exited).toBe(-1);
    expect(out).toContain('step 5');
    expect(out).not.toContain('slice returned');

    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai', root });
    const saved = await env.runStore.loadCheckpoint('t', 'kill', 'k');
    expect(saved?.state.step).toBe(5);
    const seen = llm.requests.length;
    llm.setHandler(
      perStep((step) => {
        if (step === 6) return reply([{ tool: 'save_progress', data: { items: ['three'] }, note: '3' }]);
        if (step === 7) return reply([{ tool: 'done', data: {} }]);
        return reply([{ tool: 'fail', reason: `step ${step} should not be asked again` }]);
      }),
    );
    const state = await runAgent(init, env.deps);
    const resumed = llm.requests.slice(seen).filter(isDecision);
    expect(resumed.map(stepOf)).toEqual([6, 7]);
    expect(state.status).toBe('done');
    expect(state.data).toEqual({ items: ['one', 'two', 'three'] });
    const log = JSON.parse(
      Buffer.from(
        (await env.evidence.get(state.evidence.find((e) => e.key.endsWith('action_log.json'))!.key))!,
      ).toString(),
    );
    expect(log.map((s: { step: number }) => s.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // A retry of a slice after the end writes nothing again.
    const stale = stateFromJson(saved!.state);
    const again = await runSlice(stale, env.deps, { deadline: Date.now() + 30_000 });
    expect(again.status).toBe('done');
    expect(llm.requests.slice(seen).filter(isDecision)).toHaveLength(2);
    const result = await env.runStore.getResult('t', 'kill', 'k');
    expect(result?.data).toEqual({ items: ['one', 'two', 'three'] });
  }, 180_000);
});
