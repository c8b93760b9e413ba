/**
 * One slice of a sample's agent loop: from a plain-JSON state to the next, until the sample ends or
 * the deadline nears. The page comes fresh from `deps.newPage` (storage and URL restored), so the
 * next slice may run anywhere. Checkpoints every 5 steps, on save_progress, at watchdog level 2
 * and at the slice's end; the result is written once when the sample ends.
 */

import { z } from 'zod';
import { spentOn } from '../llm/spent.ts';
import { type LlmClient, LlmError } from '../llm/types.ts';
import { redactText } from '../perception/redact.ts';
import { runCuaSlice } from './cua/slice.ts';
import type { AgentDeps, AgentLogEvent, SliceOptions } from './deps.ts';
import { checkDone } from './done-check.ts';
import { classify, firstLine, isPageGone } from './errors.ts';
import { ACTION_LOG, keyFor } from './evidence.ts';
import { addToUsage, checkpoint, consolidate, finish, type SliceRuntime, tokensSince } from './finish.ts';
import { dueForSummary, historyLine, KEEP_AFTER_SUMMARY } from './history.ts';
import { openPage } from './page-setup.ts';
import { SUMMARY_SYSTEM } from './prompt.ts';
import { loadRunHints } from './run-memory-sync.ts';
import {
  type AgentState,
  DEFAULT_MAX_INFRA_ERRORS,
  DEFAULT_WALL_CLOCK_MS,
  effectiveMaxSteps,
  isFinal,
  type StepRecord,
} from './state.ts';
import { runStep } from './step.ts';
import { SPAM_REPEATS } from './watchdog.ts';

export type { AgentDeps, SliceOptions } from './deps.ts';

export const CHECKPOINT_EVERY = 5;
/** Time kept free before the deadline for the closing checkpoint. */
const CLOSING_MS = 3000;
const INFRA_PAUSE_MS = 250;
const INFRA_PAUSE_CAP_MS = 4000;

async function loadSteps(deps: AgentDeps, state: AgentState): Promise<StepRecord[]> {
  const bytes = await deps.evidence.get(keyFor(state, ACTION_LOG)).catch(() => undefined);
  if (!bytes) return [];
  try {
    const all = JSON.parse(Buffer.from(bytes).toString('utf8')) as StepRecord[];
    // Steps after the checkpoint were lost with the process; they will be done again.
    return all.filter((s) => s.step <= state.step);
  } catch {
    return [];
  }
}

const hasData = (state: AgentState) => Object.keys(state.data).length > 0;

/** The models asked for a history summary, in order: the summary model, then the main one. Pure. */
export function summaryModels(deps: Pick<AgentDeps, 'llm' | 'summaryLlm'>): LlmClient[] {
  return deps.summaryLlm && deps.summaryLlm !== deps.llm ? [deps.summaryLlm, deps.llm] : [deps.llm];
}

async function summarize(rt: SliceRuntime): Promise<void> {
  const { state, deps } = rt;
  const old = dueForSummary(state.step, state.history);
  if (!old) return;
  const content = `${state.summary ? `Summary so far: ${state.summary}\n` : ''}Steps:\n${old.map(historyLine).join('\n')}`;
  // The cheaper summary model first; the main model is the fallback when it fails.
  for (const [i, llm] of summaryModels(deps).entries()) {
    try {
      const res = await llm.generate({
        system: SUMMARY_SYSTEM,
        messages: [{ role: 'user', content }],
        schema: z.object({ summary: z.string() }),
        schemaName: 'history_summary',
        maxTokens: 400,
      });
      addToUsage(state, res.usage);
      state.summary = res.value.summary.slice(0, 1500);
      break;
    } catch (err) {
      const spent = spentOn(err);
      if (spent) addToUsage(state, spent);
      const last = i === summaryModels(deps).length - 1;
      rt.log({
        level: 'warn',
        msg: last
          ? 'history summary failed; older steps dropped'
          : 'summary model failed; asking the main model',
        error: firstLine(err),
      });
    }
  }
  state.history = state.history.slice(-KEEP_AFTER_SUMMARY);
}

/** Ends a sample that could not finish by itself: collected data makes it a partial success. */
async function stopWith(rt: SliceRuntime, reason: string, consolidateData: boolean): Promise<void> {
  if (hasData(rt.state)) {
    if (consolidateData) rt.state.data = await consolidate(rt);
    await finish(rt, 'partial_success', reason);
  } else await finish(rt, 'failed', reason);
}

export async function runSlice(input: AgentState, deps: AgentDeps, opts: SliceOptions): Promise<AgentState> {
  // Computer-use samples take turns of screenshots and coordinates: their own loop, same budgets.
  if (input.task.computerUse) return runCuaSlice(input, deps, opts);
  const state: AgentState = structuredClone(input);
  if (isFinal(state)) return state;
  const log = (event: AgentLogEvent) =>
    deps.log?.(JSON.parse(redactText(JSON.stringify(event), deps.variables)) as AgentLogEvent);
  const rt: SliceRuntime = { state, deps, log, steps: await loadSteps(deps, state), lastResults: [] };
  const stored = await deps.runStore.getResult(state.tenant, state.runId, state.sampleId);
  if (stored) {
    state.status = stored.status as AgentState['status'];
    state.reason = stored.reason;
    return state;
  }
  state.slices += 1;
  // Once per sample: what earlier samples of the run learned on this site (kept in the state after).
  await loadRunHints(rt);
  const wallClock = state.task.wallClockMs ?? DEFAULT_WALL_CLOCK_MS;
  const maxInfra = state.task.maxInfraErrors ?? DEFAULT_MAX_INFRA_ERRORS;
  let handle: { page: import('playwright-core').Page; close(): Promise<void> } | undefined;
  let mark = Date.now();
  const tick = () => {
    const now = Date.now();
    state.activeMs += now - mark;
    mark = now;
  };
  let stepsThisSlice = 0;
  let slowestStep = 0;
  let lastError = '';
  const infra = async (err: unknown) => {
    state.infraErrorsInRow += 1;
    lastError = firstLine(err);
    log({ level: 'warn', msg: 'infrastructure error', error: lastError, inRow: state.infraErrorsInRow });
    // A short, growing pause: a blip (a DNS hiccup, a browser restarting) gets a chance to pass.
    // A caller that stopped waiting made the error (its cancel): no pause for it.
    if (state.infraErrorsInRow < maxInfra && !deps.signal?.aborted) {
      const pause = Math.min(INFRA_PAUSE_CAP_MS, INFRA_PAUSE_MS * 2 ** (state.infraErrorsInRow - 1));
      if (Date.now() + pause + CLOSING_MS < opts.deadline) await new Promise((r) => setTimeout(r, pause));
    }
  };
  try {
    while (!isFinal(state)) {
      tick();
      // The caller has its answer: the state is checkpointed below, and nothing more is done.
      if (deps.signal?.aborted) break;
      if (state.infraErrorsInRow >= maxInfra) {
        state.retryable = true;
        await stopWith(
          rt,
          `circuit breaker: ${state.infraErrorsInRow} infrastructure errors in a row (retryable); last: ${lastError}`,
          false,
        );
        break;
      }
      if (state.activeMs >= wallClock) {
        await stopWith(
          rt,
          `wall-clock limit of ${Math.round(wallClock / 1000)} s reached after ${state.step} steps`,
          true,
        );
        break;
      }
      if (state.step >= effectiveMaxSteps(state)) {
        await stopWith(rt, `step budget of ${effectiveMaxSteps(state)} used up before done`, true);
        break;
      }
      // Start a step only if one as long as the slowest so far still fits before the deadline.
      if (Date.now() + CLOSING_MS + slowestStep >= opts.deadline) break;
      if (opts.maxSteps !== undefined && stepsThisSlice >= opts.maxSteps) break;
      if (!handle) {
        try {
          handle = await openPage(deps, state);
          rt.page = handle.page;
        } catch (err) {
          if (classify(err) === 'logic') {
            await stopWith(rt, `could not open ${state.url}: ${firstLine(err)}`, false);
            break;
          }
          await infra(err);
          continue;
        }
      }
      let outcome: Awaited<ReturnType<typeof runStep>>;
      const usageBefore = { ...state.usage };
      try {
        outcome = await runStep(rt);
      } catch (err) {
        // A step that failed still paid for the model replies it got (a wrong shape, a repair).
        const spent = spentOn(err);
        if (spent) addToUsage(state, spent);
        if (classify(err) === 'infra') {
          await infra(err);
          if (isPageGone(err)) {
            await handle.close().catch(() => undefined);
            handle = undefined;
            rt.page = undefined;
          }
          continue;
        }
        if (err instanceof LlmError && err.kind !== 'invalid_output') {
          // Saved data is consolidated first (one small call; if it fails too the data is kept as saved).
          await stopWith(rt, `model error: ${firstLine(err)}`, true);
          break;
        }
        // A reply in the wrong shape twice, or a page that could not be read: a lost step.
        const why = redactText(firstLine(err), deps.variables);
        log({ level: 'warn', msg: 'step failed', error: why });
        state.step += 1;
        stepsThisSlice += 1;
        rt.steps.push({
          step: state.step,
          url: state.url,
          signature: '',
          actions: [],
          tokens: tokensSince(state, usageBefore),
          observeMs: 0,
          modelMs: 0,
          actMs: 0,
          ms: 0,
          notices: [`step lost: ${why}`],
        });
        rt.lastResults = [`The last step failed: ${why}`];
        continue;
      }
      stepsThisSlice += 1;
      slowestStep = Math.max(slowestStep, outcome.record.ms);
      rt.steps.push(outcome.record);
      try {
        deps.onStep?.(JSON.parse(redactText(JSON.stringify(outcome.record), deps.variables)) as StepRecord);
      } catch (err) {
        log({ level: 'warn', msg: 'onStep listener threw', error: firstLine(err) });
      }
      log({
        level: 'info',
        msg: 'step',
        step: outcome.record.step,
        url: outcome.record.url,
        actions: outcome.record.actions.map((a) => `${a.tool}: ${a.ok ? 'ok' : 'failed'}`),
      });
      const end = outcome.end;
      tick();
      if (end.kind === 'done') {
        const check = checkDone(state.task, state.data, state.artifacts, state.scenario?.index);
        await finish(
          rt,
          check.short ? 'partial_success' : 'done',
          check.short
            ? `done with ${check.short.found} of ${check.short.expected} expected items`
            : 'done: all required fields present',
        );
        break;
      }
      if (end.kind === 'fail') {
        await finish(rt, 'failed', `the agent gave up: ${end.reason}`);
        break;
      }
      if (end.kind === 'bounced_last') {
        await finish(rt, 'needs_review', `done on the last step but incomplete: ${end.message}`);
        break;
      }
      if (end.kind === 'spam') {
        await stopWith(
          rt,
          `stopped: ${SPAM_REPEATS} actions of one type (${end.key}) on one page while nothing changed`,
          false,
        );
        break;
      }
      if (!deps.signal?.aborted) await summarize(rt);
      if (outcome.checkpoint || state.step % CHECKPOINT_EVERY === 0)
        await checkpoint(rt, outcome.checkpoint ? 'progress' : 'interval');
    }
  } finally {
    tick();
    if (!isFinal(state))
      await checkpoint(rt, 'slice end').catch((err) =>
        log({ level: 'warn', msg: 'closing checkpoint failed', error: firstLine(err) }),
      );
    await handle?.close().catch(() => undefined);
  }
  return state;
}
