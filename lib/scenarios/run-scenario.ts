/**
 * The scenario runner: each step gets at most `maxIterations` (5) model decisions. Every iteration
 * clears blockers with zero tokens, reads the page, asks the model, runs the model's blocker
 * clearing and commands, and settles the status by rule (decision.ts `settleStatus`). A step that
 * ends stuck or infeasible ends the scenario with that status and the step named; the scenario
 * passes only when every step completed.
 */
import type { Page } from 'playwright-core';
import type { LlmClient, Usage } from '../llm/types.ts';
import { addUsage, emptyUsage, LlmError } from '../llm/types.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { elementById } from '../perception/types.ts';
import { type ClearingRecipe, clearBlockers } from './blockers.ts';
import { describeResults, type RecordedCommand, runCommands } from './commands.ts';
import { type CommandResult, type Decision, type DecisionStatus, settleStatus } from './decision.ts';
import { addClearing, addExperiences, clearingsFor, experiencesFor, type ScenarioMemory } from './memory.ts';
import { iterationPrompt, SCENARIO_SYSTEM } from './prompt.ts';
import { needsVerification, type Scenario } from './spec.ts';
import { ScenarioVision, shownAs } from './vision-step.ts';

export const MAX_ITERATIONS_PER_STEP = 5;
const DEFAULT_PAGE_BUDGET = 3000;

export type ScenarioStatus = 'passed' | 'stuck' | 'infeasible' | 'failed';

export interface ScenarioDeps {
  /** The page, already on the scenario's start URL. */
  page: Page;
  llm: LlmClient;
  /** Secrets: the model sees `%name%`, the page gets the value; never in results or evidence. */
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  /** What earlier samples learned (experiences, blocker clearings), per domain. */
  memory?: ScenarioMemory;
  /** Epoch ms: no new iteration starts after it (the scenario ends `failed`, the step named). */
  deadline?: number;
  signal?: AbortSignal;
  onIteration?: (it: IterationRecord) => void;
  pageBudget?: number;
  maxIterations?: number;
  /**
   * The scenario is being made into a workflow or script (compile / export): coordinate commands
   * (offered after 3 failed attempts on a step) are refused unless they state a reason.
   */
  scriptMode?: boolean;
  /**
   * Wall time of each phase of an iteration, as it ends (bench:scenarios prints the split): `blockers`
   * (zero-token clearing), `snapshot`, `picture` (set-of-marks), `model` (the decision, looks
   * included), `actions`, `verifications`, `bookkeeping` (the record, memory).
   */
  onPhase?: (phase: ScenarioPhase, ms: number) => void;
}

export type ScenarioPhase =
  | 'blockers'
  | 'snapshot'
  | 'picture'
  | 'model'
  | 'actions'
  | 'verifications'
  | 'bookkeeping';

export interface IterationRecord {
  step: number;
  iteration: number;
  url: string;
  reasoning: string;
  /** The model's status, and the one that stood after the rules. */
  asked: DecisionStatus;
  status: DecisionStatus;
  refused?: string;
  note: string;
  /** Blockers cleared with zero tokens before this iteration's model call. */
  cleared: string[];
  blocker?: { description: string; results: CommandResult[] };
  results: CommandResult[];
  /** Pictures the model asked for (set-of-marks mode), and what became of each ask. */
  looks?: string[];
  /** Coordinate commands were offered on this iteration (after 3 failed attempts on the step). */
  coordinates?: boolean;
  promptTokens: number;
  completionTokens: number;
}

export interface StepReport {
  index: number;
  do: string;
  expect?: string;
  status: 'complete' | 'stuck' | 'infeasible' | 'failed' | 'not_run';
  iterations: number;
  reason?: string;
  /** Every verification run in this step, passed or failed: the step's evidence. */
  verifications: { check: string; expected?: string; ok: boolean; actual: string; message: string }[];
}

export interface ScenarioResult {
  status: ScenarioStatus;
  reason?: string;
  /** 1-based number of the step the scenario ended on, when it did not pass. */
  failedStep?: number;
  steps: StepReport[];
  iterations: IterationRecord[];
  /** Successful actions and verifications, in order: what compiles into a workflow. */
  recorded: RecordedCommand[];
  usage: Usage;
  startUrl: string;
  url: string;
  memory: ScenarioMemory;
}

const verificationOf = (r: CommandResult) =>
  r.command.kind === 'verify'
    ? {
        check: r.command.check,
        ...(r.command.expected !== undefined ? { expected: r.command.expected } : {}),
        ok: r.ok,
        actual: r.actual ?? '',
        message: r.message,
      }
    : undefined;

/** The model's blocker clearing, run first; remembered (by locator) per domain when it worked. */
async function clearReported(
  page: Page,
  decision: Pick<Decision, 'blockerDetected'>,
  snap: Awaited<ReturnType<typeof snapshot>>,
  deps: ScenarioDeps,
  step: number,
): Promise<{ results: CommandResult[]; recipe?: ClearingRecipe }> {
  const blocker = decision.blockerDetected;
  if (!blocker) return { results: [] };
  const ran = await runCommands(
    { page, snap, step, ...(deps.variables ? { variables: deps.variables } : {}) },
    blocker.clearingCommands,
  );
  if (!ran.results.every((r) => r.ok)) return { results: ran.results };
  const commands: ClearingRecipe['commands'] = [];
  for (const c of blocker.clearingCommands) {
    const el = c.id === undefined ? undefined : elementById(snap, c.id);
    if (!el || (c.action !== 'click' && c.action !== 'press')) return { results: ran.results };
    commands.push({ action: c.action, locator: el.locator, ...(c.value ? { value: c.value } : {}) });
  }
  return { results: ran.results, recipe: { description: blocker.description.slice(0, 200), commands } };
}

export async function runScenario(scenario: Scenario, deps: ScenarioDeps): Promise<ScenarioResult> {
  const { page, llm } = deps;
  const maxIterations = deps.maxIterations ?? MAX_ITERATIONS_PER_STEP;
  const secrets = deps.variables;
  const variableNames = Object.keys(secrets ?? {});
  let memory: ScenarioMemory = deps.memory ?? {};
  let usage = emptyUsage(llm.model);
  const startUrl = page.url();
  const vision = new ScenarioVision(page, {
    vision: scenario.vision ?? 'text',
    scriptMode: deps.scriptMode ?? false,
    ...(secrets ? { secrets } : {}),
  });
  const iterations: IterationRecord[] = [];
  const recorded: RecordedCommand[] = [];
  const steps: StepReport[] = scenario.steps.map((s, index) => ({
    index,
    do: s.do,
    ...(s.expect ? { expect: s.expect } : {}),
    status: 'not_run',
    iterations: 0,
    verifications: [],
  }));
  const end = (status: ScenarioStatus, reason?: string, failedStep?: number): ScenarioResult => ({
    status,
    ...(reason ? { reason: redactText(reason, secrets) } : {}),
    ...(failedStep !== undefined ? { failedStep } : {}),
    steps,
    iterations,
    recorded,
    usage,
    startUrl,
    url: redactText(page.url(), secrets),
    memory,
  });

  for (const [index, step] of scenario.steps.entries()) {
    const report = steps[index]!;
    const mustVerify = needsVerification(step);
    let note: string | undefined;
    let lastResults: string[] = [];
    let refused: string | undefined;
    let verified = 0;
    const stepRecorded: RecordedCommand[] = [];
    vision.startStep();
    for (let iteration = 1; ; iteration++) {
      if (deps.signal?.aborted || (deps.deadline !== undefined && Date.now() >= deps.deadline)) {
        report.status = 'failed';
        report.reason = 'the deadline passed before the step completed';
        return end('failed', `step ${index + 1}: ${report.reason}`, index + 1);
      }
      let mark = performance.now();
      // A phase that did not happen this iteration is not reported (its crumbs go to the next).
      const lap = (phase: ScenarioPhase, happened = true) => {
        if (!happened) return;
        const now = performance.now();
        deps.onPhase?.(phase, now - mark);
        mark = now;
      };
      const cleared = (await clearBlockers(page, clearingsFor(memory, page.url()))).map(
        (c) =>
          `${c.what} (${c.by === 'memory' ? 'remembered clearing' : c.by === 'framework' ? 'consent framework rule' : 'dialog rule'})`,
      );
      const resnap = () =>
        snapshot(page, {
          budget: deps.pageBudget ?? DEFAULT_PAGE_BUDGET,
          keywords: step.do.split(/\W+/).filter((w) => w.length > 3),
          ...(secrets ? { secrets } : {}),
        });
      lap('blockers');
      let snap = await resnap();
      lap('snapshot');
      const view = await vision.view(snap);
      lap('picture', view.picture !== undefined);
      const coordinates = vision.coordinates;
      const prompt = iterationPrompt({
        stepIndex: index,
        steps: scenario.steps,
        iteration,
        maxIterations,
        mustVerify,
        url: snap.url,
        title: snap.title,
        tree: view.tree,
        extra: view.extra,
        ...(note ? { note } : {}),
        lastResults,
        ...(refused ? { refused } : {}),
        experiences: experiencesFor(memory, page.url()),
        cleared,
        variableNames,
      });
      let reply: Awaited<ReturnType<typeof vision.decide>>;
      try {
        reply = await vision.decide({
          llm,
          system: vision.system(SCENARIO_SYSTEM),
          prompt,
          view,
          snap,
          resnap,
          ...(deps.signal ? { signal: deps.signal } : {}),
        });
        snap = reply.snap;
      } catch (err) {
        // A model that cannot answer is a failure of the run, never a verdict on the app.
        if (err instanceof LlmError && err.usage) usage = addUsage(usage, err.usage);
        report.status = 'failed';
        report.reason = `the model call failed: ${(err as Error).message}`;
        return end('failed', `step ${index + 1}: ${report.reason}`, index + 1);
      }
      lap('model');
      const replyUsage = reply.usage ?? emptyUsage(llm.model);
      usage = addUsage(usage, replyUsage);
      const decision = reply.value;
      const urlBefore = page.url();
      const blocker = await clearReported(page, decision, snap, deps, index);
      lap('blockers', decision.blockerDetected !== undefined);
      let checking = 0;
      if (blocker.recipe) memory = addClearing(memory, urlBefore, blocker.recipe);
      // The clearing changed the page the commands were decided on only if it navigated.
      const ran =
        blocker.results.every((r) => r.ok) && page.url() === urlBefore
          ? await vision.run(
              {
                page,
                snap,
                step: index,
                ...(secrets ? { variables: secrets } : {}),
                ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
                onCommand: (kind, ms) => {
                  if (kind === 'verify') checking += ms;
                },
              },
              decision.commands,
            )
          : {
              results: decision.commands.map((c) => ({
                command: shownAs(c),
                ok: false,
                skipped: true,
                message: 'not run: clearing the blocker failed or changed the page',
              })),
              recorded: [],
            };
      // Everything but the checks (coordinate commands included) is the actions' time.
      mark += checking;
      lap(
        'actions',
        decision.commands.some((c) => c.kind !== 'verify' && c.kind !== 'look'),
      );
      if (checking > 0) deps.onPhase?.('verifications', checking);
      stepRecorded.push(...ran.recorded);
      for (const r of ran.results) {
        const v = verificationOf(r);
        if (v) report.verifications.push(v);
        if (v?.ok) verified++;
      }
      memory = addExperiences(memory, urlBefore, decision.experiences);
      const settled = settleStatus({
        status: decision.status,
        results: ran.results,
        mustVerify,
        verifiedInStep: verified,
        iteration,
        maxIterations,
      });
      const record: IterationRecord = {
        step: index + 1,
        iteration,
        url: redactText(urlBefore, secrets),
        reasoning: redactText(decision.reasoning, secrets),
        asked: decision.status,
        status: settled.status,
        ...(settled.refused ? { refused: settled.refused } : {}),
        note: redactText(decision.noteToFutureSelf, secrets),
        cleared,
        ...(decision.blockerDetected
          ? { blocker: { description: decision.blockerDetected.description, results: blocker.results } }
          : {}),
        results: ran.results,
        ...(reply.looks.length ? { looks: reply.looks } : {}),
        ...(coordinates ? { coordinates } : {}),
        promptTokens: replyUsage.promptTokens,
        completionTokens: replyUsage.completionTokens,
      };
      iterations.push(record);
      lap('bookkeeping');
      deps.onIteration?.(record);
      report.iterations = iteration;
      if (settled.status === 'complete') {
        report.status = 'complete';
        recorded.push(...stepRecorded.filter((r) => r.kind === 'action' || r.ok));
        break;
      }
      if (settled.status === 'stuck' || settled.status === 'infeasible') {
        report.status = settled.status;
        report.reason = redactText(
          settled.refused && decision.status !== settled.status ? settled.refused : decision.reasoning,
          secrets,
        );
        return end(settled.status, `step ${index + 1} ("${step.do}"): ${report.reason}`, index + 1);
      }
      note = decision.noteToFutureSelf || undefined;
      refused = settled.refused;
      lastResults = [...describeResults(blocker.results), ...describeResults(ran.results)];
    }
  }
  return end('passed');
}
