/**
 * Repair mode: a Playwright script's steps run on a live page (interpret.ts) until the broken one —
 * the step at the error's line, or the first that fails. The model then sees the script, the
 * broken step, its error and the page, and answers with the scenario runner's decisions (at most
 * 5 per step): commands that do what the step meant on the page as it is now, proved by running
 * them here, or no commands when the step is already done or obsolete (DELETE). The script goes on
 * after each repair; the repaired script is written only when every broken step was repaired. A
 * repair that changes (or deletes) an assertion's expected values is reported with a diff for
 * review and applied only when the caller allows it.
 */
import type { Page } from 'playwright-core';
import type { LlmClient, Usage } from '../../llm/types.ts';
import { addUsage, emptyUsage, LlmError } from '../../llm/types.ts';
import { type PageCandidate, readCandidates } from '../../perception/candidates.ts';
import { redactText } from '../../perception/redact.ts';
import { snapshot } from '../../perception/snapshot.ts';
import { elementById } from '../../perception/types.ts';
import { clearBlockers } from '../blockers.ts';
import { describeResults, runCommands } from '../commands.ts';
import {
  type Command,
  type Decision,
  DecisionSchema,
  type DecisionStatus,
  settleStatus,
} from '../decision.ts';
import { MAX_ITERATIONS_PER_STEP } from '../run-scenario.ts';
import { stepCode } from './codegen.ts';
import { newScope, runStep } from './interpret.ts';
import { REPAIR_SYSTEM, repairPrompt } from './prompt.ts';
import {
  applyEdits,
  expectedValues,
  loadTs,
  oneLine,
  type ParsedScript,
  parseScript,
  ScriptError,
  type ScriptStep,
  sourceFile,
  stepAtLine,
  stepDiff,
  type Ts,
} from './script.ts';

export interface RepairInput {
  source: string;
  fileName?: string;
  /** The failure as the caller saw it; without it the first step that fails here is repaired. */
  error?: { message: string; line?: number };
  /** The page, already on the start URL. */
  page: Page;
  llm: LlmClient;
  variables?: Record<string, string>;
  checkNavigation?: (url: string) => Promise<void>;
  /** Apply repairs that change an assertion's expected values (default: report them only). */
  allowAssertionChanges?: boolean;
  /** Broken steps repaired in one call before giving up (default 3). */
  maxRepairs?: number;
  /** Timeout of each script step's Playwright calls and expect polling (default 5 s). */
  stepTimeoutMs?: number;
  deadline?: number;
  signal?: AbortSignal;
  onEvent?: (line: string) => void;
}

export interface StepRepair {
  /** 1-based step number and the script line it starts on. */
  step: number;
  line: number;
  before: string;
  /** The replacement code, or null: the step is deleted (already done or obsolete). */
  after: string | null;
  error: string;
  iterations: number;
  reasoning: string;
  applied: boolean;
  /** Why the repair waits for a person (an assertion's expected value changed). */
  review?: string;
  diff: string;
}

export interface RepairIteration {
  step: number;
  iteration: number;
  url: string;
  reasoning: string;
  asked: DecisionStatus;
  status: DecisionStatus;
  refused?: string;
  results: string[];
  promptTokens: number;
  completionTokens: number;
}

export type RepairStatus = 'repaired' | 'review' | 'unchanged' | 'stuck' | 'infeasible' | 'failed';

export interface RepairResult {
  status: RepairStatus;
  reason?: string;
  repairs: StepRepair[];
  /** The repaired script: present when every broken step was repaired (status repaired / review). */
  script?: string;
  steps: {
    step: number;
    line: number;
    text: string;
    outcome: 'ran' | 'repaired' | 'deleted' | 'broken' | 'not_run' | 'harness';
  }[];
  iterations: RepairIteration[];
  usage: Usage;
  url: string;
}

type Outcome = RepairResult['steps'][number]['outcome'];

const errorLine = (err: unknown) =>
  (err instanceof Error ? err.message : String(err)).split('\n')[0]!.slice(0, 500);

/** An assertion's compared values, before and after: a change needs a person. Pure over the AST. */
export function assertionChange(ts: Ts, step: ScriptStep, after: string | null): string | undefined {
  if (!step.assertion) return undefined;
  if (after === null) return 'the repair deletes an assertion';
  const before = expectedValues(ts, step.node);
  const file = ts.createSourceFile('after.ts', after, ts.ScriptTarget.Latest, true);
  const now = expectedValues(ts, file);
  const missing = before.filter((v) => !now.includes(v));
  if (!missing.length) return undefined;
  const added = now.filter((v) => !before.includes(v));
  return `the repair changes the assertion's expected value: ${missing.map((v) => JSON.stringify(v)).join(', ')} → ${added.map((v) => JSON.stringify(v)).join(', ') || '(nothing)'}`;
}

interface StepFix {
  status: 'complete' | 'stuck' | 'infeasible' | 'failed';
  after?: string | null;
  reasoning: string;
  iterations: number;
}

export async function repairScript(input: RepairInput): Promise<RepairResult> {
  const ts = await loadTs();
  const { page, llm } = input;
  const secrets = input.variables;
  const fileName = input.fileName ?? 'script.ts';
  const parsed: ParsedScript = parseScript(ts, input.source, fileName, input.error?.line);
  const brokenAt = input.error?.line !== undefined ? stepAtLine(parsed, input.error.line) : undefined;
  if (input.error?.line !== undefined && !brokenAt)
    throw new ScriptError(`${fileName}: line ${input.error.line} is not a step of the script`);
  const timeoutMs = input.stepTimeoutMs ?? 5000;
  const maxRepairs = input.maxRepairs ?? 3;
  let usage = emptyUsage(llm.model);
  const iterations: RepairIteration[] = [];
  const repairs: StepRepair[] = [];
  /** The script step of each repair, in the same order. */
  const repairedSteps: ScriptStep[] = [];
  const outcomes = new Map<number, Outcome>(
    parsed.steps.map((s) => [s.index, s.harness ? 'harness' : 'not_run']),
  );
  const stepTexts = parsed.steps.filter((s) => !s.harness).map((s) => oneLine(s.text).slice(0, 300));
  const numberOf = (s: ScriptStep) => parsed.steps.filter((x) => !x.harness && x.index <= s.index).length;
  const end = (status: RepairStatus, reason?: string, script?: string): RepairResult => ({
    status,
    ...(reason ? { reason: redactText(reason, secrets) } : {}),
    repairs,
    ...(script !== undefined ? { script } : {}),
    steps: parsed.steps.map((s) => ({
      step: s.harness ? 0 : numberOf(s),
      line: s.line,
      text: oneLine(s.text).slice(0, 300),
      outcome: outcomes.get(s.index)!,
    })),
    iterations,
    usage,
    url: redactText(page.url(), secrets),
  });

  /** The model's repair of one step, proved on the page. */
  const fix = async (step: ScriptStep, error: string): Promise<StepFix> => {
    const number = numberOf(step);
    let note: string | undefined;
    let refused: string | undefined;
    let lastResults: string[] = [];
    let verified = 0;
    const done: { command: Command; candidates?: PageCandidate[] }[] = [];
    for (let iteration = 1; ; iteration++) {
      if (input.signal?.aborted || (input.deadline !== undefined && Date.now() >= input.deadline))
        return {
          status: 'failed',
          reasoning: 'the deadline passed before the step was repaired',
          iterations: iteration - 1,
        };
      const cleared = (await clearBlockers(page, [])).map((c) => c.what);
      const snap = await snapshot(page, {
        budget: 3000,
        keywords: step.text.split(/\W+/).filter((w) => w.length > 3),
        ...(secrets ? { secrets } : {}),
      });
      let reply: Awaited<ReturnType<typeof llm.generate<Decision>>>;
      try {
        reply = await llm.generate({
          system: REPAIR_SYSTEM,
          messages: [
            {
              role: 'user',
              content: repairPrompt({
                steps: stepTexts,
                broken: number - 1,
                error: redactText(error, secrets),
                assertion: step.assertion,
                iteration,
                maxIterations: MAX_ITERATIONS_PER_STEP,
                ...(note ? { note } : {}),
                lastResults,
                ...(refused ? { refused } : {}),
                cleared,
                variableNames: Object.keys(secrets ?? {}),
                url: snap.url,
                title: snap.title,
                tree: snap.tree,
              }),
            },
          ],
          schema: DecisionSchema,
          schemaName: 'repair_decision',
          ...(input.signal ? { signal: input.signal } : {}),
        });
      } catch (err) {
        if (err instanceof LlmError && err.usage) usage = addUsage(usage, err.usage);
        return {
          status: 'failed',
          reasoning: `the model call failed: ${errorLine(err)}`,
          iterations: iteration,
        };
      }
      usage = addUsage(usage, reply.usage);
      const d = reply.value;
      const record = (status: DecisionStatus, results: string[], why?: string) => {
        const it: RepairIteration = {
          step: number,
          iteration,
          url: redactText(snap.url, secrets),
          reasoning: redactText(d.reasoning, secrets),
          asked: d.status,
          status,
          ...(why ? { refused: why } : {}),
          results,
          promptTokens: reply.usage.promptTokens,
          completionTokens: reply.usage.completionTokens,
        };
        iterations.push(it);
        input.onEvent?.(
          `step ${number}.${iteration}  → ${status}${status !== d.status ? ` (asked ${d.status})` : ''}  ${it.reasoning.slice(0, 200)}${results.length ? `\n  ${results.join('\n  ')}` : ''}`,
        );
      };
      // No commands and done: the step is no longer needed (or it was finished by an earlier iteration).
      if (d.status === 'complete' && d.commands.length === 0 && !d.blockerDetected) {
        record('complete', []);
        if (done.length === 0)
          return { status: 'complete', after: null, reasoning: d.reasoning, iterations: iteration };
      } else {
        const all: Command[] = [...(d.blockerDetected?.clearingCommands ?? []), ...d.commands];
        // Each element's candidates are read before the commands change the page.
        const candidates = await Promise.all(
          all.map(async (c) => {
            const el = c.id === undefined ? undefined : elementById(snap, c.id);
            return el ? await readCandidates(page, el.locator).catch(() => undefined) : undefined;
          }),
        );
        const ran = await runCommands(
          {
            page,
            snap,
            step: number - 1,
            ...(secrets ? { variables: secrets } : {}),
            ...(input.checkNavigation ? { checkNavigation: input.checkNavigation } : {}),
          },
          all,
        );
        ran.results.forEach((r, i) => {
          if (!r.ok) return;
          if (r.command.kind === 'verify') verified++;
          // An action step keeps its actions; its verifications were only the proof.
          if (r.command.kind === 'action' || step.assertion)
            done.push({ command: r.command, ...(candidates[i] ? { candidates: candidates[i] } : {}) });
        });
        const settled = settleStatus({
          status: d.status,
          results: ran.results,
          mustVerify: step.assertion,
          verifiedInStep: verified,
          iteration,
          maxIterations: MAX_ITERATIONS_PER_STEP,
        });
        const lines = describeResults(ran.results);
        record(settled.status, lines, settled.refused);
        if (settled.status === 'stuck' || settled.status === 'infeasible')
          return {
            status: settled.status,
            reasoning: settled.refused && d.status !== settled.status ? settled.refused : d.reasoning,
            iterations: iteration,
          };
        if (settled.status !== 'complete') {
          note = d.noteToFutureSelf || undefined;
          refused = settled.refused;
          lastResults = lines;
          continue;
        }
      }
      const code = stepCode(done);
      if (typeof code !== 'string')
        return {
          status: 'failed',
          reasoning: `the repair cannot be written as code: ${code.error}`,
          iterations: iteration,
        };
      return { status: 'complete', after: code, reasoning: d.reasoning, iterations: iteration };
    }
  };

  page.setDefaultTimeout(timeoutMs);
  const scope = newScope();
  for (const step of parsed.steps) {
    if (step.harness) continue;
    let failure: string | undefined;
    if (step === brokenAt) failure = input.error!.message;
    else
      try {
        await runStep(ts, page, step.node, scope, {
          expectTimeoutMs: timeoutMs,
          ...(input.checkNavigation ? { checkNavigation: input.checkNavigation } : {}),
        });
      } catch (err) {
        failure = errorLine(err);
      }
    if (failure === undefined) {
      outcomes.set(step.index, 'ran');
      continue;
    }
    const number = numberOf(step);
    outcomes.set(step.index, 'broken');
    if (repairs.length >= maxRepairs)
      return end(
        'failed',
        `step ${number} (line ${step.line}) failed too, after ${maxRepairs} repairs: ${failure}`,
      );
    input.onEvent?.(`step ${number} (line ${step.line}) broken: ${redactText(failure, secrets)}`);
    const got = await fix(step, failure);
    if (got.status !== 'complete' || got.after === undefined)
      return end(
        got.status === 'complete' ? 'failed' : got.status,
        `step ${number} (line ${step.line}) was not repaired: ${got.reasoning}`,
      );
    const review = assertionChange(ts, step, got.after);
    const applied = !review || input.allowAssertionChanges === true;
    repairedSteps.push(step);
    repairs.push({
      step: number,
      line: step.line,
      before: step.text,
      after: got.after,
      error: redactText(failure, secrets),
      iterations: got.iterations,
      reasoning: redactText(got.reasoning, secrets),
      applied,
      ...(review ? { review } : {}),
      diff: stepDiff(step, got.after),
    });
    outcomes.set(step.index, got.after === null ? 'deleted' : 'repaired');
  }
  if (brokenAt && outcomes.get(brokenAt.index) === 'not_run')
    return end('failed', `line ${input.error!.line} was never reached`);
  if (!repairs.length) return end('unchanged', 'every step ran; nothing to repair');
  const script = applyEdits(
    input.source,
    repairs.flatMap((r, i) => (r.applied ? [{ step: repairedSteps[i]!, text: r.after }] : [])),
  );
  // The written script must still parse.
  sourceFile(ts, script, fileName);
  const waiting = repairs.filter((r) => !r.applied);
  return waiting.length
    ? end('review', waiting.map((r) => `step ${r.step} (line ${r.line}): ${r.review}`).join('; '), script)
    : end('repaired', undefined, script);
}
