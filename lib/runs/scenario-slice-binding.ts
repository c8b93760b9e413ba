/**
 * Mode "scenario" of a run: each sample carries out the spec's step list (lib/scenarios) on its
 * URL, in a fresh context, and its one result is the scenario's: passed → done, stuck / infeasible /
 * failed → failed with the step it stopped at; every step's verifications are its evidence
 * (scenario.json). What a sample learns about a site — the model's experiences and the blocker
 * clearings it found — goes into the run's memory, so the next sample on that domain starts with the
 * experiences in its prompt and clears the same banner with zero tokens.
 *
 * A scenario is carried out within one slice: a page's state does not survive a hand-over, so a
 * slice that ends first (or a crash) makes the next one start the steps over on a fresh page.
 */
import { redactText } from '../perception/redact.ts';
import { learnedSince, scenarioEntry, scenarioMemoryOf } from '../scenarios/domain-memory.ts';
import type { ScenarioMemory } from '../scenarios/memory.ts';
import { runScenario, type ScenarioResult } from '../scenarios/run-scenario.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import type { SliceDeps, SliceRunner, SliceState, SliceStatus } from './slice-runner.ts';
import { checkpoint, finishSample, freshSliceState, saveEvidence } from './slice-sample.ts';

/** Time kept back from the slice's deadline for the evidence and result writes. */
const WRITE_MARGIN_MS = 15_000;

/** The sample's data: one row of combined.csv that says how the scenario went. Pure. */
export function scenarioData(result: ScenarioResult): JsonObject {
  const checks = result.steps.flatMap((s) => s.verifications);
  return {
    scenario: result.status,
    failedStep: result.failedStep ?? null,
    stepsCompleted: result.steps.filter((s) => s.status === 'complete').length,
    steps: result.steps.length,
    verificationsPassed: checks.filter((v) => v.ok).length,
    verificationsFailed: checks.filter((v) => !v.ok).length,
  };
}

/** How blockers were cleared in this sample: zero-token (memory, rule) and by the model. Pure. */
export function blockerCounts(result: ScenarioResult): { memory: number; rule: number; model: number } {
  const cleared = result.iterations.flatMap((i) => i.cleared);
  return {
    memory: cleared.filter((c) => c.endsWith('(remembered clearing)')).length,
    rule: cleared.filter((c) => !c.endsWith('(remembered clearing)')).length,
    model: result.iterations.filter((i) => i.blocker?.results.every((r) => r.ok)).length,
  };
}

/** Writes the sample's one result (its usage names the mode) and the last checkpoint. */
const endSample = (
  state: SliceState,
  deps: SliceDeps,
  status: Exclude<SliceStatus, 'running'>,
  reason: string,
  extra: JsonObject = {},
): Promise<SliceState> =>
  finishSample(state, deps, status, reason, {
    ...state.usage,
    steps: state.step,
    mode: 'scenario',
    ...extra,
  });

/** What earlier samples of the run learned (a failed read is logged and leaves none). */
async function receivedMemory(state: SliceState, deps: SliceDeps): Promise<ScenarioMemory> {
  if (!deps.runMemory) return {};
  try {
    return scenarioMemoryOf(await deps.runMemory.list(state.tenant, state.runId));
  } catch (err) {
    deps.log?.({ level: 'warn', msg: 'run memory could not be read; none used', error: String(err) });
    return {};
  }
}

/** Adds what this sample learned to the run's memory, and both sides to its evidence (memory.json). */
async function shareLearned(
  state: SliceState,
  deps: SliceDeps,
  received: ScenarioMemory,
  after: ScenarioMemory,
): Promise<void> {
  const secrets = deps.variables;
  const learned = JSON.parse(
    redactText(JSON.stringify(learnedSince(received, after)), secrets),
  ) as ScenarioMemory;
  const entry = scenarioEntry(state.sampleId, learned, new Date().toISOString());
  if (entry && deps.runMemory)
    try {
      await deps.runMemory.append(state.tenant, state.runId, entry);
    } catch (err) {
      deps.log?.({ level: 'warn', msg: 'run memory could not be written', error: String(err) });
    }
  const body = { received, shared: learned } as unknown as Json;
  await saveEvidence(
    state,
    deps,
    'memory.json',
    redactText(JSON.stringify(body, null, 2), secrets),
    'application/json',
  );
}

async function runSample(state: SliceState, deps: SliceDeps, deadline: number): Promise<SliceState> {
  const scenario = state.task.scenario;
  if (!scenario) return endSample(state, deps, 'failed', 'mode "scenario" without a scenario');
  const llm = deps.llm;
  if (!llm)
    return endSample(
      state,
      deps,
      'failed',
      "scenarios need a model: set the spec's model or BROWSERFN_MODEL",
    );
  // Marks the start: a crash record then knows the sample began, and a retried slice starts over.
  await checkpoint(state, deps);
  const received = await receivedMemory(state, deps);
  const secrets = deps.variables;
  const wallClock = state.task.wallClockMs ? Date.now() + state.task.wallClockMs : Infinity;
  const { page, close } = await deps.newPage();
  let result: ScenarioResult;
  try {
    try {
      await deps.checkNavigation?.(state.url);
      await page.goto(state.url, { waitUntil: 'load', timeout: 30_000 });
    } catch (err) {
      return endSample(
        state,
        deps,
        'failed',
        `the sample page did not load: ${(err as Error).message.split('\n')[0]}`,
      );
    }
    result = await runScenario(scenario, {
      page,
      llm,
      memory: received,
      deadline: Math.min(deadline - WRITE_MARGIN_MS, wallClock),
      ...(secrets ? { variables: secrets } : {}),
      ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
      onIteration: (it) =>
        deps.log?.({
          level: 'debug',
          msg: 'scenario iteration',
          step: it.step,
          iteration: it.iteration,
          status: it.status,
        }),
    });
    // The page where a failed scenario ended: what the step saw. Not with secrets (a screenshot could show one).
    if (result.status !== 'passed' && !secrets)
      await saveEvidence(
        state,
        deps,
        `step_${result.failedStep ?? 0}_end.png`,
        await page.screenshot({ type: 'png' }),
        'image/png',
      ).catch(() => undefined);
  } finally {
    await close();
  }
  const { memory, ...kept } = result;
  await saveEvidence(
    state,
    deps,
    'scenario.json',
    redactText(JSON.stringify(kept, null, 2), secrets),
    'application/json',
  );
  await shareLearned(state, deps, received, memory);
  state.step = result.iterations.length;
  state.data = scenarioData(result);
  state.usage = {
    promptTokens: result.usage.promptTokens,
    completionTokens: result.usage.completionTokens,
    cachedTokens: result.usage.cachedTokens,
    costUsd: result.usage.costUsd ?? 0,
    ms: result.usage.ms,
  };
  const extra = { calls: result.usage.calls, blockers: blockerCounts(result) };
  const checks = result.steps.flatMap((s) => s.verifications);
  return result.status === 'passed'
    ? endSample(
        state,
        deps,
        'done',
        `scenario passed: ${result.steps.length} steps, ${checks.filter((v) => v.ok).length} verifications`,
        extra,
      )
    : endSample(
        state,
        deps,
        'failed',
        `scenario ${result.status}: ${result.reason ?? 'no reason given'}`,
        extra,
      );
}

export const scenarioSliceRunner: SliceRunner = {
  newState: freshSliceState,
  runSlice: async (input, deps, opts) => {
    const state = structuredClone(input);
    if (state.status !== 'running') return state;
    return runSample(state, deps, opts.deadline);
  },
};
