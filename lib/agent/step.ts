/**
 * One step: observe the page, decide (one model call, tools forced), act, and fold what happened
 * into the state. Throws only what the slice must handle itself: model and browser errors.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { settle } from '../browser/settle.ts';
import { redactText } from '../perception/redact.ts';
import { snapshot } from '../perception/snapshot.ts';
import { setOfMarks } from '../perception/som.ts';
import { elementById, type Snapshot } from '../perception/types.ts';
import type { Json } from '../store/ports.ts';
import { dispatch, type ToolResult } from './dispatch.ts';
import { bounceMessage, checkDone } from './done-check.ts';
import { addToUsage, type SliceRuntime, tokensSince } from './finish.ts';
import { fitHistory } from './history.ts';
import { hintsFor, remember } from './memory.ts';
import { canonicalJson, countItems, mergeData } from './merge.ts';
import { stepPrompt, systemPrompt, visionQuestion } from './prompt.ts';
import { RUN_HINT_STEPS } from './run-memory.ts';
import { DEFAULT_MAX_ACTIONS_PER_STEP, effectiveMaxSteps, type StepRecord, scenarioLeft } from './state.ts';
import { decisionSchema, type ToolCall } from './tools.ts';
import {
  budgetWarnings,
  paginationBonus,
  toolsFor,
  trackFailures,
  trackRepeats,
  trackStagnation,
} from './watchdog.ts';

/**
 * Page text per step unless the task says otherwise: ordinary pages fit whole; big ones keep the
 * lines in view, the interactive ones and those matching the task's words.
 */
export const PAGE_BUDGET = 3000;
const HISTORY_BUDGET = 600;
const VISION_BELOW = 0.6;
const SETTLE_QUIET_MS = 50;

export type StepEnd =
  | { kind: 'continue' }
  | { kind: 'done' }
  | { kind: 'fail'; reason: string }
  | { kind: 'bounced_last'; message: string }
  | { kind: 'spam'; key: string };

export interface StepOutcome {
  end: StepEnd;
  record: StepRecord;
  /** save_progress ran, or the watchdog reached level 2: checkpoint now. */
  checkpoint: boolean;
}

const hash = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 16);

function describeCall(call: ToolCall, seen: Snapshot): string {
  const el = 'id' in call && call.id !== undefined ? elementById(seen, call.id) : undefined;
  const target = el
    ? ` [${el.id}] ${el.role} "${el.name.slice(0, 60)}"`
    : 'id' in call && call.id !== undefined
      ? ` [${call.id}]`
      : '';
  switch (call.tool) {
    case 'goto':
      return `goto ${call.url}`;
    case 'type':
      return `type "${call.text.slice(0, 60)}" into${target}`;
    case 'select_option':
      return `select "${call.option}" in${target}`;
    case 'scroll':
      return `scroll ${call.direction}${target}`;
    case 'screenshot':
      return `screenshot "${call.label}"`;
    case 'extract':
      return `extract "${call.instruction.slice(0, 80)}"`;
    case 'save_progress':
      return `save_progress (${call.note.slice(0, 80)})`;
    case 'fail':
      return `fail (${call.reason.slice(0, 80)})`;
    default:
      return `${call.tool}${target}`;
  }
}

async function observe(rt: SliceRuntime): Promise<Snapshot> {
  const { page, state, deps } = rt;
  // Requests in flight still hold the read back (up to 3 s); a parsed page that has not changed for
  // 50 ms is read at once: the actions already waited for their navigations.
  await settle(page!, { timeoutMs: 3000, quietMs: SETTLE_QUIET_MS });
  const keywords = [
    ...(state.task.keywords ?? []),
    ...state.task.goal.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 3),
  ].slice(0, 16);
  const read = () =>
    snapshot(page!, {
      budget: state.task.pageBudget ?? PAGE_BUDGET,
      keywords,
      ...(deps.variables ? { secrets: deps.variables } : {}),
    });
  try {
    return await read();
  } catch (err) {
    // A navigation started by the page's own script replaced the document mid-read: read the new one.
    if (!/context was destroyed|navigat|detached/i.test((err as Error).message)) throw err;
    await page!.waitForLoadState('domcontentloaded').catch(() => undefined);
    await settle(page!, { timeoutMs: 3000, quietMs: SETTLE_QUIET_MS });
    return read();
  }
}

async function visionNote(rt: SliceRuntime, snap: Snapshot): Promise<string | undefined> {
  const { state, deps } = rt;
  const mode = state.task.vision ?? 'fallback';
  if (mode === 'never' || (mode === 'fallback' && snap.confidence >= VISION_BELOW)) return undefined;
  const png = await setOfMarks(rt.page!, snap, deps.variables ? { secrets: deps.variables } : {});
  const res = await deps.llm.generate({
    system: 'You answer questions about a screenshot of a web page, briefly and only from what is visible.',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: visionQuestion(state.task.goal, snap.tree) },
          { type: 'image', mediaType: 'image/png', data: png.toString('base64') },
        ],
      },
    ],
    schema: z.object({ answer: z.string() }),
    schemaName: 'vision_answer',
    maxTokens: 500,
  });
  addToUsage(state, res.usage);
  const answer = res.value.answer.trim();
  return answer && !/^nothing\.?$/i.test(answer) ? answer : undefined;
}

function interactiveList(snap: Snapshot): string {
  return snap.elements
    .filter((e) => e.interactive && e.inViewport)
    .slice(0, 60)
    .map((e) => `[${e.id}] ${e.role}: ${e.name.slice(0, 60)}`)
    .join('\n');
}

export async function runStep(rt: SliceRuntime): Promise<StepOutcome> {
  const { state, deps } = rt;
  const started = performance.now();
  // The step's tokens: its vision question, its decision and its tools' model calls.
  const usageBefore = { ...state.usage };
  const stepNo = state.step + 1;
  const max = effectiveMaxSteps(state);
  const notices: string[] = [];

  const snap = await observe(rt);
  const observeMs = performance.now() - started;
  state.url = snap.url;
  const signature = hash(`${snap.url}\n${snap.contentHash}`);
  const progress = hash(
    `${canonicalJson(state.data)}\n${state.watchdog.extractHash ?? ''}\n${state.scenario?.index ?? ''}`,
  );
  const stag = trackStagnation(state.watchdog, signature, progress);
  state.watchdog = stag.watchdog;
  if (stag.notice) notices.push(stag.notice);
  const budget = budgetWarnings(state.watchdog, stepNo, max);
  state.watchdog = budget.watchdog;
  notices.push(...budget.notices);
  if (state.watchdog.bounce) {
    notices.push(state.watchdog.bounce);
    delete state.watchdog.bounce;
  }
  const expected = state.task.expectedItems;
  if (expected && !state.watchdog.expectedNudged && countItems(state.data) >= expected) {
    state.watchdog.expectedNudged = true;
    notices.push(`All ${expected} expected items are collected. Call done now.`);
  }
  const tools = toolsFor(stepNo, max, stag.level, scenarioLeft(state));
  const vision = await visionNote(rt, snap);
  const prompt = stepPrompt({
    step: stepNo,
    maxSteps: max,
    url: snap.url,
    title: snap.title,
    tree: snap.tree,
    notices,
    summary: state.summary,
    history: fitHistory(state.history, HISTORY_BUDGET),
    notes: state.notes.slice(-5),
    memoryHints: hintsFor(state.memory, snap.url),
    runHints: stepNo <= RUN_HINT_STEPS ? (state.runHints ?? []) : [],
    data: state.data,
    input: state.input,
    variableNames: Object.keys(deps.variables ?? {}),
    lastResults: rt.lastResults,
    ...(vision ? { visionNote: vision } : {}),
    ...(state.watchdog.failuresInRow >= 3 ? { interactive: interactiveList(snap) } : {}),
    finalOnly: tools.length === 2,
    ...(state.task.steps
      ? {
          scenario: {
            index: state.scenario?.index ?? 0,
            total: state.task.steps.length,
            text: state.task.steps[state.scenario?.index ?? 0],
          },
        }
      : {}),
  });

  const modelStarted = performance.now();
  const decided = await deps.llm.generate({
    system: systemPrompt(state.task),
    messages: [{ role: 'user', content: prompt }],
    schema: decisionSchema(tools, state.task.maxActionsPerStep ?? DEFAULT_MAX_ACTIONS_PER_STEP),
    schemaName: 'next_actions',
    schemaDescription: 'Your reflection and the tool calls for this step.',
    maxTokens: 2048,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const modelMs = performance.now() - modelStarted;
  addToUsage(state, decided.usage);
  const decision = decided.value;
  const allowed = new Set<string>(tools);
  const calls = decision.actions.filter((a) => allowed.has(a.tool));

  const actStarted = performance.now();
  const { results, skipped, abort } = await dispatch(
    {
      page: rt.page!,
      seen: snap,
      state,
      llm: deps.llm,
      evidence: deps.evidence,
      variables: deps.variables,
      checkNavigation: deps.checkNavigation,
      signal: deps.signal,
      toolTimeoutMs: deps.toolTimeoutMs,
    },
    calls,
  );
  const actMs = performance.now() - actStarted;
  for (const r of results) if (r.usage) addToUsage(state, r.usage);

  // Fold results into the state.
  state.step = stepNo;
  // A URL can carry what was typed (a GET form): keep only placeholders in the state.
  state.url = redactText(rt.page!.url(), deps.variables);
  let checkpointNow = stag.checkpoint;
  let end: StepEnd = { kind: 'continue' };
  const itemsBefore = countItems(state.data);
  for (const r of results) {
    if (r.saved) {
      state.data = mergeData(state.data, r.saved.data);
      state.progressNotes = [...state.progressNotes, r.saved.note].slice(-20);
      checkpointNow = true;
    }
    if (r.pagination) state.watchdog = { ...state.watchdog, paginationPending: true };
    if (r.extracted !== undefined)
      state.watchdog = { ...state.watchdog, extractHash: hash(canonicalJson(r.extracted)) };
    if (r.final?.kind === 'fail') end = { kind: 'fail', reason: r.final.reason };
    if (r.stepDone !== undefined && state.scenario && scenarioLeft(state) > 0)
      state.scenario = { index: state.scenario.index + 1, notes: [...state.scenario.notes, r.stepDone] };
    if (r.final?.kind === 'done') {
      // Even a done that is bounced keeps its data: merging is idempotent, so nothing is lost or doubled.
      state.data = mergeData(state.data, r.final.data);
      const check = checkDone(state.task, state.data, state.artifacts, state.scenario?.index);
      if (check.ok) end = { kind: 'done' };
      else if (stepNo >= max) end = { kind: 'bounced_last', message: bounceMessage(check) };
      else {
        state.watchdog = { ...state.watchdog, bounce: bounceMessage(check) };
        r.ok = false;
        r.outcome = bounceMessage(check);
      }
    }
  }
  if (!state.task.strictMaxSteps)
    state.watchdog = paginationBonus(
      state.watchdog,
      countItems(state.data) > itemsBefore,
      state.task.maxSteps ?? 20,
    );
  const fails = trackFailures(
    state.watchdog,
    results.map((r) => r.ok),
  );
  state.watchdog = fails.watchdog;
  const repeats = trackRepeats(
    state.watchdog,
    results.filter((r) => !r.final && !r.saved).map((r) => r.key),
    // Not stagnant: this step saw another page or new data than the last one.
    stag.watchdog.stagnant === 0,
  );
  state.watchdog = repeats.watchdog;
  if (repeats.spam && end.kind === 'continue') end = { kind: 'spam', key: repeats.spam };

  const lines = results.map(
    (r, i) => `${describeCall(calls[i]!, snap)} → ${r.ok ? 'ok' : 'FAILED'}: ${r.outcome}`,
  );
  if (skipped) lines.push(`(${skipped} more action(s) skipped: ${abort})`);
  for (const [i, r] of results.entries()) {
    if (r.final || r.saved || calls[i]!.tool === 'screenshot') continue;
    if (!r.ok || r.navigated || r.extracted !== undefined)
      // Ids mean nothing on the next page or sample; role and name do.
      state.memory = remember(
        state.memory,
        snap.url,
        describeCall(calls[i]!, snap).replace(/\[\d+\] /g, ''),
        r.ok,
      );
  }
  state.history = [
    ...state.history,
    {
      step: stepNo,
      url: snap.url,
      actions: lines.join(' ; '),
      ok: results.every((r) => r.ok),
      ...(decision.memory_update ? { memory: decision.memory_update } : {}),
      ...(decision.next_goal ? { nextGoal: decision.next_goal } : {}),
    },
  ];
  if (decision.memory_update) state.notes = [...state.notes, decision.memory_update].slice(-10);
  rt.lastResults = lines.map((l) => l.slice(0, 2000));
  state.infraErrorsInRow = results.some((r) => r.errorClass === 'infra') ? state.infraErrorsInRow + 1 : 0;

  const record: StepRecord = {
    step: stepNo,
    url: snap.url,
    signature,
    ...(decision.evaluation_previous_step ? { evaluation: decision.evaluation_previous_step } : {}),
    ...(decision.memory_update ? { memory: decision.memory_update } : {}),
    ...(decision.next_goal ? { nextGoal: decision.next_goal } : {}),
    actions: results.map((r: ToolResult, i) => ({
      tool: r.tool,
      input: r.input as Json,
      ok: r.ok,
      outcome: r.outcome,
      ms: r.ms,
      // By role and name: what a later sample of the run can be told (run memory), ids left out.
      what: redactText(describeCall(calls[i]!, snap).replace(/\[\d+\] /g, ''), deps.variables),
      ...(r.recorded ? { recorded: r.recorded } : {}),
    })),
    tokens: tokensSince(state, usageBefore),
    observeMs: Math.round(observeMs),
    modelMs: Math.round(modelMs),
    actMs: Math.round(actMs),
    ms: Math.round(performance.now() - started),
    notices: [
      ...notices,
      ...(vision ? ['vision question asked'] : []),
      ...(skipped ? [`batch stopped: ${abort}`] : []),
    ],
  };
  return { end, record, checkpoint: checkpointNow };
}
