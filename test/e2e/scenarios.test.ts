import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { scenarioFrom } from '../../lib/cli/scenario.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { clearBlockers } from '../../lib/scenarios/blockers.ts';
import { compileScenario } from '../../lib/scenarios/compile.ts';
import { VERIFICATION_TYPES, type VerificationType } from '../../lib/scenarios/decision.ts';
import type { ScenarioMemory } from '../../lib/scenarios/memory.ts';
import { runScenario } from '../../lib/scenarios/run-scenario.ts';
import { parseScenario } from '../../lib/scenarios/spec.ts';
import { runVerification } from '../../lib/scenarios/verify.ts';
import { LocalEvidenceStore, sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { runWorkflow } from '../../lib/workflows/executor.ts';
import { exportPlaywright } from '../../lib/workflows/export-playwright.ts';
import { tempRoot } from '../support/agent-env.ts';
import { idIn } from '../support/browser.ts';
import type { RecordedRequest, ScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { type ScenarioTestEnv, startScenarioTestEnv } from '../support/scenario-env.ts';
import { type ScenarioSite, startScenarioSite } from '../support/scenario-site.ts';
import { serveOnLoopback } from '../support/serve.ts';

let env: ScenarioTestEnv<ScenarioSite>;
let browser: Browser;
let site: ScenarioSite;
let llm: ScriptedModel;
let model: LlmClient;

beforeAll(async () => {
  env = await startScenarioTestEnv(startScenarioSite);
  ({ browser, site, llm, model } = env);
});
afterAll(() => env?.close());

const pageAt = (path: string): Promise<Page> => env.pageAt(path);

const isDecision = (r: RecordedRequest) => r.schemaName === 'scenario_decision';
const decisions = () => llm.requests.filter(isDecision);
const stepOf = (r: RecordedRequest) => Number(/Current step (\d+) of/.exec(r.text)?.[1]);
const iterationOf = (r: RecordedRequest) => Number(/Iteration (\d+) of/.exec(r.text)?.[1]);
const decide = (d: Record<string, unknown>) => ({
  json: { reasoning: 'scripted', noteToFutureSelf: '', experiences: [], commands: [], ...d },
});

const NOTES = parseScenario({
  steps: [
    'Add a note saying Buy milk',
    { do: 'Verify the note list shows Buy milk', expect: 'the counter says 1 note' },
  ],
});

/** Answers the notes scenario as a careful tester would; on step 2 it first forgets to verify. */
function notesModel(r: RecordedRequest) {
  if (!isDecision(r)) return { status: 400 };
  const step = stepOf(r);
  const iteration = iterationOf(r);
  if (step === 1)
    return decide({
      status: 'complete',
      commands: [
        { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'New note'), value: 'Buy milk' },
        { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') },
      ],
      experiences: ['notes are added with the Add note button'],
    });
  if (iteration === 1) return decide({ status: 'complete', noteToFutureSelf: 'prove it with checks next' });
  if (
    /step was not accepted: "complete" refused: a (command|verification)|✗ verify/.test(r.text) &&
    iteration >= 3
  )
    return decide({ status: 'stuck', reasoning: 'the note never appeared in the list' });
  return decide({
    status: 'complete',
    commands: [
      { kind: 'verify', check: 'textContains', selector: '#notes', expected: 'Buy milk' },
      { kind: 'verify', check: 'textEquals', selector: '#count', expected: '1 note' },
      { kind: 'verify', check: 'valueEmpty', id: idInPrompt(r.text, 'textbox', 'New note') },
      { kind: 'verify', check: 'countEquals', selector: '#notes > li', expected: '1' },
    ],
  });
}

describe('scenarios', () => {
  it('passes a multi-step scenario with verifications, ends stuck at the right step on a broken app, and compiles to a 0-token replay', async () => {
    llm.setHandler(notesModel);
    const page = await pageAt('/notes');
    const before = decisions().length;
    const passed = await runScenario(NOTES, { page, llm: model });
    expect(passed.status).toBe('passed');
    expect(passed.steps.map((s) => [s.status, s.iterations])).toEqual([
      ['complete', 1],
      ['complete', 2],
    ]);
    // "complete" without a verification was refused on a step that must be proved, with the reason shown.
    expect(passed.iterations[1]).toMatchObject({ asked: 'complete', status: 'continue' });
    const second = decisions().slice(before)[2]!;
    expect(second.text).toContain('"complete" refused: this step must be proved');
    expect(second.text).toContain('Your note from the previous iteration: prove it with checks next');
    expect(passed.steps[1]!.verifications.map((v) => [v.ok, v.actual])).toEqual([
      [true, 'Buy milk'],
      [true, '1 note'],
      [true, ''],
      [true, '1'],
    ]);
    expect(decisions().length - before).toBe(3);
    expect(await page.locator('#notes li').allTextContents()).toEqual(['Buy milk']);
    // Experiences are kept per domain for later samples.
    expect(Object.values(passed.memory)[0]?.experiences).toEqual([
      'notes are added with the Add note button',
    ]);

    // The same scenario on the broken app: the verification fails, complete is refused, then stuck at step 2.
    const brokenPage = await pageAt('/notes?broken=1');
    const broken = await runScenario(NOTES, { page: brokenPage, llm: model });
    expect(broken.status).toBe('stuck');
    expect(broken.failedStep).toBe(2);
    expect(broken.reason).toMatch(
      /^step 2 \("Verify the note list shows Buy milk"\): the note never appeared/,
    );
    expect(broken.steps.map((s) => s.status)).toEqual(['complete', 'stuck']);
    const evidence = broken.steps[1]!.verifications;
    expect(evidence[0]).toMatchObject({ check: 'textContains', ok: false, actual: '' });
    expect(broken.iterations.find((i) => i.refused?.includes('a command failed'))).toBeDefined();

    // Compile the passed run and replay it on a fresh page: no model request at all.
    const { workflow, notCarried } = compileScenario(passed);
    expect(notCarried).toEqual(['step 2: valueEmpty (a field value is not visible to a selector)']);
    expect(workflow.nodes.map((n) => n.type)).toEqual([
      'browser_action',
      'browser_action',
      'browser_action',
      'browser_query',
      'browser_query',
      'browser_query',
    ]);
    const replayPage = await pageAt('/');
    const asked = llm.requests.length;
    const state = await runWorkflow(
      workflow,
      {
        tenant: 't',
        runId: 'r',
        sampleId: 's',
        inputs: { url: `${site.url}/notes` },
        url: `${site.url}/notes`,
      },
      { page: replayPage },
    );
    expect(state.status).toBe('done');
    expect(llm.requests.length).toBe(asked);
    expect(await replayPage.locator('#notes li').allTextContents()).toEqual(['Buy milk']);
    // The same workflow on the broken app stops at the first verification.
    const brokenReplay = await runWorkflow(
      workflow,
      {
        tenant: 't',
        runId: 'r',
        sampleId: 's2',
        inputs: { url: `${site.url}/notes?broken=1` },
        url: site.url,
      },
      { page: await pageAt('/') },
    );
    expect(brokenReplay.status).not.toBe('done');
    expect(exportPlaywright(workflow)).toContain('Buy milk');
    for (const p of [page, brokenPage, replayPage]) await p.context().close();
  });

  it('refuses complete when a command failed and stops a step after 5 iterations', async () => {
    llm.setHandler((r) =>
      isDecision(r)
        ? decide({
            status: 'complete',
            commands: [{ kind: 'action', action: 'click', id: 999 }],
            noteToFutureSelf: `try ${iterationOf(r)}`,
          })
        : { status: 400 },
    );
    const page = await pageAt('/notes');
    const before = decisions().length;
    const result = await runScenario(parseScenario({ steps: ['Open the archive'] }), { page, llm: model });
    const asked = decisions().slice(before);
    expect(asked).toHaveLength(5);
    expect(result.status).toBe('stuck');
    expect(result.failedStep).toBe(1);
    expect(result.reason).toContain('no completion after 5 iterations');
    expect(result.iterations.map((i) => i.status)).toEqual([
      'continue',
      'continue',
      'continue',
      'continue',
      'stuck',
    ]);
    expect(asked[1]!.text).toContain(
      '"complete" refused: a command failed ([999] is not an id of the current outline)',
    );
    expect(asked[4]!.text).toContain('Your note from the previous iteration: try 4');
    expect(asked[4]!.text).toContain('This is the last iteration for this step.');
    await page.context().close();
  });

  it('runs each of the 15 verification types in the page, passing and failing', async () => {
    const page = await pageAt('/checks');
    const snap = await snapshot(page);
    const id = (role: string, name: string) => idIn(snap.tree, role, name);
    const cases: [VerificationType, Record<string, unknown>, string | undefined, string | undefined][] = [
      // check, target, expected that passes, expected that fails
      ['textContains', { selector: '#title' }, 'Welcome', 'Goodbye'],
      ['textEquals', { selector: '#title' }, 'Welcome back', 'Welcome'],
      ['valueEquals', { id: id('textbox', 'Name') }, 'Ada', 'Bob'],
      ['isVisible', { id: id('button', 'Go on') }, undefined, undefined],
      ['isEnabled', { id: id('button', 'Go on') }, undefined, undefined],
      ['isChecked', { id: id('checkbox', 'Subscribed') }, undefined, undefined],
      ['countEquals', { selector: '#items li' }, '3', '2'],
      ['countGreaterThan', { selector: '#items li' }, '2', '3'],
      ['countLessThan', { selector: '#items li' }, '4', '3'],
      ['hasClass', { selector: '#title' }, 'headline', 'small'],
      ['hasAttribute', { selector: '#title' }, 'data-section=intro', 'data-section=outro'],
    ];
    // The state checks fail on the element in the opposite state.
    const opposite: [VerificationType, Record<string, unknown>, Record<string, unknown>][] = [
      ['valueEmpty', { id: id('textbox', 'Comment') }, { id: id('textbox', 'Name') }],
      ['isHidden', { selector: '#secret' }, { id: id('button', 'Go on') }],
      ['isDisabled', { id: id('button', 'Stop now') }, { id: id('button', 'Go on') }],
      ['isUnchecked', { id: id('checkbox', 'Archived') }, { id: id('checkbox', 'Subscribed') }],
    ];
    const run = (check: VerificationType, target: Record<string, unknown>, expected?: string) =>
      runVerification(page, snap, { kind: 'verify', check, ...target, ...(expected ? { expected } : {}) });
    const seen = new Set<string>();
    for (const [check, target, pass, fail] of cases) {
      expect((await run(check, target, pass)).ok, `${check} passes`).toBe(true);
      if (fail !== undefined) expect((await run(check, target, fail)).ok, `${check} fails`).toBe(false);
      seen.add(check);
    }
    for (const [check, good, bad] of opposite) {
      expect((await run(check, good)).ok, `${check} passes`).toBe(true);
      expect((await run(check, bad)).ok, `${check} fails`).toBe(false);
      seen.add(check);
    }
    // State checks fail on the element in the opposite state (isVisible on the hidden one, …).
    expect((await run('isVisible', { selector: '#secret' })).ok).toBe(false);
    expect((await run('isEnabled', { id: id('button', 'Stop now') })).ok).toBe(false);
    expect((await run('isChecked', { id: id('checkbox', 'Archived') })).ok).toBe(false);
    expect([...seen].sort()).toEqual([...VERIFICATION_TYPES].sort());
    const failed = await run('textEquals', { selector: '#title' }, 'Welcome');
    expect(failed).toMatchObject({ ok: false, actual: 'Welcome back' });
    await page.context().close();
  });

  it('clears consent banners with zero tokens: by rule at once, and by memory on the second sample', async () => {
    const steps = parseScenario({ steps: ['Add a note saying Tea'] });
    llm.setHandler((r) => {
      if (!isDecision(r)) return { status: 400 };
      const proceed = /\[(\d+)\] button: Proceed to the site/.exec(r.text);
      return decide({
        status: 'complete',
        commands: [
          { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'New note'), value: 'Tea' },
          { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') },
        ],
        ...(proceed
          ? {
              blockerDetected: {
                description: 'privacy wall',
                clearingCommands: [{ kind: 'action', action: 'click', id: Number(proceed[1]) }],
              },
            }
          : {}),
      });
    });
    // A OneTrust banner: cleared by the framework rule before the model is asked.
    const before = decisions().length;
    const oneTrust = await pageAt('/notes?banner=onetrust');
    const a = await runScenario(steps, { page: oneTrust, llm: model });
    expect(a.status).toBe('passed');
    expect(a.iterations[0]!.cleared).toEqual(['OneTrust (consent framework rule)']);
    expect(decisions()[before]!.text).not.toContain('Accept All Cookies');
    // A generic cookie bar: the dialog rule presses its accept button (no model involved at all).
    const bar = await pageAt('/notes?banner=cookies');
    expect(await clearBlockers(bar, [])).toEqual([
      { by: 'dialog', what: 'This site uses cookies. Accept all (pressed "Accept all")' },
    ]);
    expect(await bar.locator('.cc-window').count()).toBe(0);
    await bar.context().close();

    // A banner no rule knows: the model clears it on the first sample…
    let memory: ScenarioMemory = {};
    const first = await pageAt('/notes?banner=privacy');
    const b = await runScenario(steps, { page: first, llm: model, memory });
    memory = b.memory;
    expect(b.status).toBe('passed');
    expect(b.iterations[0]!.blocker?.results.map((r) => r.ok)).toEqual([true]);
    // …and the second sample clears it from memory before the model sees the page.
    const second = await pageAt('/notes?banner=privacy');
    const mark = decisions().length;
    const c = await runScenario(steps, { page: second, llm: model, memory });
    expect(c.status).toBe('passed');
    expect(c.iterations[0]!.cleared).toEqual(['privacy wall (remembered clearing)']);
    expect(c.iterations[0]!.blocker).toBeUndefined();
    const asked = decisions().slice(mark);
    expect(asked).toHaveLength(1);
    expect(asked[0]!.text).not.toContain('Proceed to the site');
    expect(await second.locator('#notes li').allTextContents()).toEqual(['Tea']);
    for (const p of [oneTrust, first, second]) await p.context().close();
  });
});

describe('POST /v1/scenarios and the step file', () => {
  it('answers passed with the compiled workflow, stuck with the step and its evidence, 400 naming the field', async () => {
    const root = await tempRoot();
    const evidence = new LocalEvidenceStore(join(root, 'evidence'));
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
      agentStores: () => ({ evidence, runStore: undefined as never }),
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    const post = (body: unknown) =>
      fetch(`${base}/v1/scenarios`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
        body: JSON.stringify(body),
      });
    try {
      // The step file, as the CLI reads it: YAML with a bare step and a { do, expect } step.
      const file = join(root, 'steps.yaml');
      await writeFile(
        file,
        'steps:\n  - Add a note saying Buy milk\n  - do: Verify the note list shows Buy milk\n    expect: the counter says 1 note\n',
      );
      const steps = (await scenarioFrom(file, undefined)).steps;
      expect(steps).toEqual(NOTES.steps);
      await writeFile(file, 'steps:\n  - do: ""\n');
      await expect(scenarioFrom(file, undefined)).rejects.toThrow(
        'steps.yaml: steps.0.do: must not be empty',
      );

      llm.setHandler(notesModel);
      const ok = await post({ url: `${site.url}/notes`, steps, compile: true, runId: 'sc-ok' });
      expect(ok.status).toBe(200);
      const passed = await ok.json();
      expect(passed).toMatchObject({
        runId: 'sc-ok',
        status: 'passed',
        steps: [{ status: 'complete' }, { status: 'complete' }],
      });
      expect(passed.usage.calls).toBe(3);
      expect(passed.workflow.source).toEqual({ kind: 'scenario', url: `${site.url}/notes` });
      expect(passed.evidence.files.map((f: { key: string }) => f.key)).toEqual([
        'tenant-a/run_sc-ok/samples/main/scenario.json',
      ]);

      const bad = await post({ url: `${site.url}/notes?broken=1`, steps, runId: 'sc-stuck' });
      const stuck = await bad.json();
      expect(stuck).toMatchObject({ status: 'stuck', failedStep: 2 });
      expect(stuck.steps[1].verifications[0]).toMatchObject({ check: 'textContains', ok: false });
      const names = stuck.evidence.files.map((f: { key: string }) => f.key.split('/').pop());
      expect(names).toEqual(['step_2_end.png', 'scenario.json']);
      for (const f of stuck.evidence.files)
        expect(sha256Hex(await readFile(evidence.pathOf(f.key)))).toBe(f.sha256);

      const invalid = await post({ url: `${site.url}/notes`, steps: [] });
      expect(invalid.status).toBe(400);
      expect((await invalid.json()).error.message).toMatch(/^steps: /);
    } finally {
      server.close();
    }
  });
});
