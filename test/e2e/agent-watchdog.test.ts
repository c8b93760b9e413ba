import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { runAgent } from '../../lib/agent/run-agent.ts';
import type { AgentTask } from '../../lib/agent/state.ts';
import { agentEnv, isDecision, offered, perStep, reply, stepOf } from '../support/agent-env.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import type { ScriptedModel } from '../support/llm-server.ts';
import { type Flavour, idInPrompt } from '../support/ops-env.ts';
import { useWorld } from '../support/world.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;

useWorld((w) => {
  ({ browser, site, llm } = w);
});

let sample = 0;
async function run(flavour: Flavour, task: AgentTask) {
  const env = await agentEnv({ browser: () => browser, site, llm, flavour });
  const state = await runAgent(
    { tenant: 't', runId: 'watch', sampleId: `s${++sample}`, url: `${site.url}/agent/counter.html`, task },
    env.deps,
  );
  const decisions = llm.requests.filter(isDecision);
  const at = (step: number) => decisions.find((r) => stepOf(r) === step)!;
  return { state, env, decisions, at };
}

const noop = (text: string) => ({ tool: 'click', id: idInPrompt(text, 'button', 'Does nothing') });
const wait = { tool: 'wait', ms: 10 };
const shot = (step: number) => ({ tool: 'screenshot', label: `look-${step}` });

describe.each<Flavour>(['openai', 'anthropic'])('agent watchdog (%s)', (flavour) => {
  it('escalates on a page that does not change: nudge at 3, strategy change + checkpoint at 5, only done/fail at 8', async () => {
    // Three useless kinds of action in turn (none 4 times): no repeat stop, but nothing changes either.
    llm.setHandler(
      perStep((step, r) =>
        offered(r).length === 2
          ? reply([{ tool: 'fail', reason: 'the counter page has nothing for this task' }])
          : reply([[noop(r.text), wait, shot(step)][(step - 1) % 3]]),
      ),
    );
    const { state, env, decisions, at } = await run(flavour, {
      goal: 'Find the invoice total',
      maxSteps: 20,
    });
    expect(decisions).toHaveLength(9);
    expect(at(3).text).not.toContain('Watchdog');
    expect(at(4).text).toContain('Try a different approach');
    expect(at(6).text).toContain('CHANGE YOUR STRATEGY NOW');
    expect(offered(at(8))).toHaveLength(12);
    expect(at(9).text).toContain('No more browsing');
    expect(offered(at(9))).toEqual(['done', 'fail']);
    expect(state.status).toBe('failed');
    expect(state.reason).toContain('the counter page has nothing');
    const checkpoints = env.logs.map((l) => JSON.parse(l)).filter((e) => e.msg === 'checkpoint saved');
    expect(checkpoints.find((c) => c.why === 'progress')?.step).toBe(6);
  });

  it('stops a sample that does 4 actions of one type on one page while nothing changes', async () => {
    llm.setHandler(perStep((_, r) => reply([noop(r.text)])));
    const { state, decisions } = await run(flavour, { goal: 'Press buttons', maxSteps: 20 });
    expect(decisions).toHaveLength(4);
    expect(state.status).toBe('failed');
    expect(state.reason).toMatch(
      /4 actions of one type \(click@.*counter\.html\) on one page while nothing changed/,
    );
  });

  it('warns once at 75% and 90%, bounces an incomplete done, and offers only done/fail on the last step → needs_review', async () => {
    llm.setHandler(
      perStep((step, r) => {
        if (step === 5 || step === 10) return reply([{ tool: 'done', data: { note: 'finished' } }]);
        return reply([step % 2 ? { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') } : wait]);
      }),
    );
    const { state, decisions, at } = await run(flavour, {
      goal: 'Count to five',
      maxSteps: 10,
      requiredFields: ['count'],
    });
    expect(decisions).toHaveLength(10);
    expect(at(6).text).toContain('Your done was not accepted: missing fields: count');
    expect(decisions.filter((r) => r.text.includes('75% used')).map(stepOf)).toEqual([8]);
    expect(decisions.filter((r) => r.text.includes('90% used')).map(stepOf)).toEqual([9]);
    expect(offered(at(9))).toHaveLength(12);
    expect(offered(at(10))).toEqual(['done', 'fail']);
    expect(at(10).text).toContain('Only done and fail are available now.');
    expect(state.status).toBe('needs_review');
    expect(state.reason).toContain('missing fields: count');
    expect(state.data).toEqual({ note: 'finished' });
  });
});

describe('agent actions', () => {
  it('rejects ids that are not in the outline, and after 3 failures in a row shows every visible control', async () => {
    llm.setHandler(
      perStep((step) =>
        step <= 3 ? reply([{ tool: 'click', id: 9000 + step }]) : reply([{ tool: 'fail', reason: 'lost' }]),
      ),
    );
    const { state, at } = await run('openai', { goal: 'Add one', maxSteps: 6 });
    expect(at(2).text).toContain('[9001] is not an element of the current page outline');
    expect(at(3).text).not.toContain('Every visible control now');
    expect(at(4).text).toMatch(/Every visible control now:\n(.*\n)*\[\d+\] button: Add one/);
    expect(state.status).toBe('failed');
  });

  it('stops a batch after a navigation, and after a change of the page the next action could not have seen', async () => {
    llm.setHandler(
      perStep((step, r) => {
        if (step === 1)
          return reply([
            { tool: 'click', id: idInPrompt(r.text, 'button', 'Show details') },
            { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') },
          ]);
        if (step === 2)
          return reply([
            { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') },
            { tool: 'click', id: idInPrompt(r.text, 'link', 'Invoices') },
            { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') },
          ]);
        return reply([{ tool: 'done', data: { url: /Current page: (\S+)/.exec(r.text)![1]! } }]);
      }),
    );
    const steps: { actions: string[]; notices: string[] }[] = [];
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'anthropic' });
    env.deps.onStep = (s) => steps.push({ actions: s.actions.map((a) => a.tool), notices: s.notices });
    const state = await runAgent(
      {
        tenant: 't',
        runId: 'batch',
        sampleId: 'b',
        url: `${site.url}/agent/counter.html`,
        task: { goal: 'x' },
      },
      env.deps,
    );
    expect(steps[0]).toEqual({ actions: ['click'], notices: ['batch stopped: the page changed'] });
    expect(steps[1]).toEqual({ actions: ['click', 'click'], notices: ['batch stopped: the page navigated'] });
    expect(llm.requests.filter(isDecision)[1]!.text).toContain('Count: 0');
    expect(llm.requests.filter(isDecision)[2]!.text).toContain(
      '1 more action(s) skipped: the page navigated',
    );
    expect(state.status).toBe('done');
    // Invoices is behind the sign-in: the navigation ended on the login page.
    expect(state.data.url).toMatch(/\/agent\/login\.html$/);
  });
});
