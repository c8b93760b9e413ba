/**
 * One slice of a computer-use sample: screenshot → the provider's actions → carry them out →
 * screenshot, with the agent's budgets, circuit breaker, checkpoints and evidence. The provider's
 * conversation is kept by reference (an evidence file saved at each checkpoint, or the provider's own
 * response id), so the state stays small plain JSON and the next slice may run anywhere.
 */
import { createHash } from 'node:crypto';
import type { Page } from 'playwright-core';
import { executeCoordinate } from '../../actions/coordinate-execute.ts';
import { describeCoordinateAction } from '../../actions/coordinates.ts';
import { createComputerUseModel, resolveComputerUseModel } from '../../llm/computer-use/index.ts';
import type { ComputerUseModel, Conversation } from '../../llm/computer-use/types.ts';
import { spentOn } from '../../llm/spent.ts';
import { LlmError } from '../../llm/types.ts';
import { redactText } from '../../perception/redact.ts';
import type { Json } from '../../store/ports.ts';
import type { AgentDeps, AgentLogEvent, SliceOptions } from '../deps.ts';
import { checkDone } from '../done-check.ts';
import { classify, firstLine, isPageGone } from '../errors.ts';
import { ACTION_LOG, keyFor, putJson } from '../evidence.ts';
import { addToUsage, checkpoint, finish, type SliceRuntime } from '../finish.ts';
import { openPage } from '../page-setup.ts';
import {
  type AgentState,
  DEFAULT_MAX_INFRA_ERRORS,
  DEFAULT_WALL_CLOCK_MS,
  isFinal,
  maxStepsOf,
  type StepRecord,
} from '../state.ts';
import { cuaGoal, cuaSystem, declined } from './prompt.ts';
import { captureScreen } from './screen.ts';

export const CUA_CONVERSATION = 'cua_conversation.json';
const CHECKPOINT_EVERY = 5;
const CLOSING_MS = 3000;
/** Turns in a row whose screenshot did not change at all before the sample is stopped as stuck. */
export const UNCHANGED_LIMIT = 6;

async function loadJson<T>(deps: AgentDeps, key: string): Promise<T | undefined> {
  const bytes = await deps.evidence.get(key).catch(() => undefined);
  if (!bytes) return undefined;
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as T;
  } catch {
    return undefined;
  }
}

function modelFor(state: AgentState, deps: AgentDeps): ComputerUseModel {
  if (deps.computerUse) return deps.computerUse;
  const name = state.task.computerUse?.model;
  if (!name) throw new LlmError('bad_request', 'computer-use mode needs task.computerUse.model');
  return createComputerUseModel(resolveComputerUseModel(name));
}

export async function runCuaSlice(
  input: AgentState,
  deps: AgentDeps,
  opts: SliceOptions,
): Promise<AgentState> {
  const state: AgentState = structuredClone(input);
  if (isFinal(state)) return state;
  const log = (event: AgentLogEvent) =>
    deps.log?.(JSON.parse(redactText(JSON.stringify(event), deps.variables)) as AgentLogEvent);
  const saved = (await loadJson<StepRecord[]>(deps, keyFor(state, ACTION_LOG))) ?? [];
  const rt: SliceRuntime = {
    state,
    deps,
    log,
    steps: saved.filter((s) => s.step <= state.step),
    lastResults: [],
  };
  const stored = await deps.runStore.getResult(state.tenant, state.runId, state.sampleId);
  if (stored) {
    state.status = stored.status as AgentState['status'];
    state.reason = stored.reason;
    return state;
  }
  state.slices += 1;
  state.cua ??= { pending: [], unchanged: 0 };
  const cua = state.cua;
  let conversation = cua.conversationKey
    ? await loadJson<Conversation>(deps, cua.conversationKey)
    : undefined;
  const wallClock = state.task.wallClockMs ?? DEFAULT_WALL_CLOCK_MS;
  const maxInfra = state.task.maxInfraErrors ?? DEFAULT_MAX_INFRA_ERRORS;
  const secrets = deps.variables ?? {};
  let model: ComputerUseModel;
  try {
    model = modelFor(state, deps);
  } catch (err) {
    await finish(rt, 'failed', `computer-use model: ${firstLine(err)}`);
    return state;
  }
  const keep = async (why: string) => {
    if (conversation) {
      const text = redactText(JSON.stringify(conversation), deps.variables);
      const obj = await deps.evidence.put(keyFor(state, CUA_CONVERSATION), text, 'application/json');
      cua.conversationKey = obj.key;
    }
    await checkpoint(rt, why);
  };
  let handle: { page: Page; close(): Promise<void> } | undefined;
  let mark = Date.now();
  const tick = () => {
    const now = Date.now();
    state.activeMs += now - mark;
    mark = now;
  };
  let slowest = 0;
  let lastError = '';
  let stepsThisSlice = 0;
  try {
    while (!isFinal(state)) {
      tick();
      if (deps.signal?.aborted) break;
      if (state.infraErrorsInRow >= maxInfra) {
        state.retryable = true;
        await finish(
          rt,
          'failed',
          `circuit breaker: ${state.infraErrorsInRow} infrastructure errors in a row (retryable); last: ${lastError}`,
        );
        break;
      }
      if (state.activeMs >= wallClock) {
        await finish(
          rt,
          'failed',
          `wall-clock limit of ${Math.round(wallClock / 1000)} s reached after ${state.step} steps`,
        );
        break;
      }
      if (state.step >= maxStepsOf(state.task)) {
        await finish(rt, 'needs_review', `step budget of ${maxStepsOf(state.task)} used up before done`);
        break;
      }
      if (Date.now() + CLOSING_MS + slowest >= opts.deadline) break;
      if (opts.maxSteps !== undefined && stepsThisSlice >= opts.maxSteps) break;
      try {
        if (!handle) {
          handle = await openPage(deps, state);
          rt.page = handle.page;
        }
        const t0 = performance.now();
        const end = await turn(rt, handle.page, model, conversation, secrets);
        conversation = end.conversation;
        stepsThisSlice += 1;
        slowest = Math.max(slowest, performance.now() - t0);
        state.infraErrorsInRow = 0;
        if (end.kind === 'continue' && cua.unchanged >= UNCHANGED_LIMIT) {
          await finish(rt, 'needs_review', `stuck: the screen did not change for ${cua.unchanged} steps`);
          break;
        }
        if (end.kind === 'stop') {
          await finish(rt, end.status, end.reason);
          break;
        }
        if (state.step % CHECKPOINT_EVERY === 0) await keep('interval');
      } catch (err) {
        // A failed turn still pays for any reply it received.
        const spent = spentOn(err);
        if (spent) addToUsage(state, spent);
        if (classify(err) === 'infra') {
          state.infraErrorsInRow += 1;
          lastError = firstLine(err);
          log({
            level: 'warn',
            msg: 'infrastructure error',
            error: lastError,
            inRow: state.infraErrorsInRow,
          });
          if (isPageGone(err)) {
            await handle?.close().catch(() => undefined);
            handle = undefined;
          }
          continue;
        }
        if (err instanceof LlmError) {
          await finish(rt, 'failed', `model error: ${firstLine(err)}`);
          break;
        }
        await finish(rt, 'failed', `could not continue: ${redactText(firstLine(err), deps.variables)}`);
        break;
      }
    }
  } finally {
    tick();
    if (!isFinal(state))
      await keep('slice end').catch((err) =>
        log({ level: 'warn', msg: 'closing checkpoint failed', error: firstLine(err) }),
      );
    await handle?.close().catch(() => undefined);
  }
  return state;
}

type TurnEnd =
  | { kind: 'continue'; conversation: Conversation }
  | {
      kind: 'stop';
      conversation: Conversation;
      status: 'done' | 'failed' | 'needs_review' | 'partial_success';
      reason: string;
    };

/** One turn: picture, the model's calls, carried out and recorded. */
async function turn(
  rt: SliceRuntime,
  page: Page,
  model: ComputerUseModel,
  conversation: Conversation | undefined,
  secrets: Record<string, string>,
): Promise<TurnEnd> {
  const { state, deps } = rt;
  const cua = state.cua!;
  const started = performance.now();
  const shot = await captureScreen(page, model.config.provider, {
    ...(cua.marker ? { marker: cua.marker } : {}),
    secrets,
    ...(state.task.computerUse?.format ? { format: state.task.computerUse.format } : {}),
  });
  const hash = createHash('sha256').update(shot.data).digest('hex').slice(0, 16);
  cua.unchanged = cua.lastShot === hash ? cua.unchanged + 1 : 0;
  cua.lastShot = hash;
  const observeMs = performance.now() - started;
  const modelStart = performance.now();
  const reply = await model.turn(
    conversation,
    {
      goal: cuaGoal(state),
      system: cuaSystem(state, Object.keys(secrets)),
      screenshot: shot.data,
      mediaType: shot.mediaType,
      image: { width: shot.frame.imageWidth, height: shot.frame.imageHeight },
      url: page.url(),
      results: cua.pending,
    },
    deps.signal,
  );
  const modelMs = performance.now() - modelStart;
  addToUsage(state, { ...reply.turn.usage, ms: modelMs });
  state.step += 1;
  const record: StepRecord = {
    step: state.step,
    url: page.url(),
    signature: hash,
    ...(reply.turn.message ? { evaluation: reply.turn.message.slice(0, 500) } : {}),
    actions: [],
    tokens: {
      prompt: reply.turn.usage.promptTokens,
      completion: reply.turn.usage.completionTokens,
      cached: reply.turn.usage.cachedTokens,
    },
    observeMs: Math.round(observeMs),
    modelMs: Math.round(modelMs),
    actMs: 0,
    ms: 0,
    notices: [],
  };
  const actStart = performance.now();
  let end: TurnEnd = { kind: 'continue', conversation: reply.conversation };
  if (reply.turn.calls.length === 0) {
    const no = declined(reply.turn.message);
    if (no)
      end = {
        kind: 'stop',
        conversation: reply.conversation,
        status: 'failed',
        reason: `the agent gave up: ${no}`,
      };
    else {
      state.data = { ...state.data, answer: reply.turn.message };
      const check = checkDone(state.task, state.data, state.artifacts);
      end = {
        kind: 'stop',
        conversation: reply.conversation,
        status: check.missingFields.length ? 'needs_review' : 'done',
        reason: check.missingFields.length
          ? `answered without ${check.missingFields.join(', ')}`
          : 'done: the model answered',
      };
    }
  }
  const pending: typeof cua.pending = [];
  for (const call of reply.turn.calls) {
    if (call.safetyChecks?.length && !model.config.acknowledgeSafetyChecks) {
      const check = call.safetyChecks[0]!;
      end = {
        kind: 'stop',
        conversation: reply.conversation,
        status: 'needs_review',
        reason: `the model's safety check needs an operator's approval (${check.code}: ${check.message}); set BROWSERFN_CUA_ACKNOWLEDGE_SAFETY=1 to allow`,
      };
      break;
    }
    if (call.unsupported) {
      pending.push({ callId: call.callId, ok: false, message: `not available here: ${call.unsupported}` });
      record.actions.push({
        tool: 'computer',
        input: {},
        ok: false,
        outcome: `not available: ${call.unsupported}`,
        ms: 0,
      });
      continue;
    }
    const said: string[] = [];
    let ok = true;
    for (const action of call.actions) {
      const t = performance.now();
      const out = await executeCoordinate(page, action, shot.frame, {
        variables: secrets,
        ...(deps.checkNavigation ? { checkNavigation: deps.checkNavigation } : {}),
      });
      if (action.kind === 'click' && out.cssPoint) cua.marker = out.cssPoint;
      record.actions.push({
        tool: `computer.${action.kind}`,
        input: {
          ...(action as unknown as Record<string, Json>),
          frame: shot.frame as unknown as Json,
          ...(out.target ? { target: out.target as unknown as Json } : {}),
        },
        ok: out.ok,
        outcome: out.message || describeCoordinateAction(action),
        ms: Math.round(performance.now() - t),
      });
      said.push(out.message);
      if (!out.ok) {
        ok = false;
        break;
      }
    }
    pending.push({ callId: call.callId, ok, message: said.join('; ') || 'done' });
  }
  cua.pending = pending;
  state.url = page.url();
  record.actMs = Math.round(performance.now() - actStart);
  record.ms = Math.round(performance.now() - started);
  rt.steps.push(record);
  try {
    deps.onStep?.(JSON.parse(redactText(JSON.stringify(record), deps.variables)) as StepRecord);
  } catch (err) {
    rt.log({ level: 'warn', msg: 'onStep listener threw', error: firstLine(err) });
  }
  rt.log({
    level: 'info',
    msg: 'step',
    step: record.step,
    url: record.url,
    actions: record.actions.map((a) => a.outcome),
  });
  if (end.kind === 'stop')
    await putJson(deps.evidence, state, CUA_CONVERSATION, end.conversation, deps.variables, false);
  return end;
}
