import type { Page, Response as PwResponse } from 'playwright-core';
import type { z } from 'zod';
import { assertNavigable, NetworkBlockedError } from '../../browser/guard.ts';
import { blockedBy } from '../../browser/navigate.ts';
import { noChatModel } from '../../llm/computer-use/index.ts';
import type { Usage } from '../../llm/types.ts';
import { act } from '../../ops/act.ts';
import { extract } from '../../ops/extract.ts';
import { observe } from '../../ops/observe.ts';
import { readAhead } from '../../ops/page-state.ts';
import {
  type ObservedElement,
  type OpContext,
  OpError,
  type OpLog,
  type OpOptions,
} from '../../ops/types.ts';
import type { OpDeps } from '../run-op.ts';
import { runAgentForStagehand } from './agent.ts';
import { navigableScheme } from './cdp-filter.ts';
import { mainLoaderId, type SessionContext } from './context.ts';
import { chooseComputerUseModel, chooseModel, type ModelChoice } from './models.ts';
import type { ReplayAction, StagehandSession } from './sessions.ts';
import type { Emitter } from './sse.ts';
import {
  type ActBody,
  type AgentExecuteBody,
  actToSdk,
  type ExtractBody,
  flatVariables,
  type NavigateBody,
  type ObserveBody,
  observedFromSdk,
  observedToSdk,
  WireError,
} from './wire.ts';

export interface CallEnv {
  session: StagehandSession<SessionContext>;
  page: Page;
  deps: OpDeps;
  headerKey: string | undefined;
  /** Whether the caller lets the server's action cache answer (the SDK's `serverCache`). */
  serverCache: boolean;
  emit: Emitter;
  /** Aborted when the call's deadline passes or its client goes away. */
  signal: AbortSignal;
  /** Epoch ms by which a long call (the agent) answers with what it has, before the hard deadline. */
  finishBy?: number;
}

const tokenUsage = (u: Usage | undefined): ReplayAction['tokenUsage'] => ({
  inputTokens: u?.promptTokens ?? 0,
  outputTokens: u?.completionTokens ?? 0,
  reasoningTokens: 0,
  cachedInputTokens: u?.cachedTokens ?? 0,
  timeMs: u?.ms ?? 0,
});

function record(env: CallEnv, entry: Omit<ReplayAction, 'timestamp' | 'url'>) {
  env.session.replay.push({ ...entry, timestamp: Date.now(), url: env.page.url() });
  // A long-lived session must not grow without bound; metrics need only the recent calls.
  if (env.session.replay.length > 2000) env.session.replay.shift();
}

/** Op log lines go to the SDK's logger by message only: extra fields could carry page text. */
const opLog =
  (emit: Emitter): OpLog =>
  (e) => {
    if (e.level !== 'debug') emit.log({ category: 'browserfn', message: e.msg, level: 1 });
  };

/** Which model answers the call, in its log: at the SDK's default level when it is not the one named. */
const tellModel = (env: CallEnv, choice: ModelChoice) =>
  env.emit.log({ category: 'browserfn', message: choice.note, level: choice.substituted ? 1 : 2 });

async function opContext(
  env: CallEnv,
  model: Parameters<typeof chooseModel>[0]['call'],
  variables: Record<string, string> | undefined,
  options: OpOptions,
): Promise<OpContext> {
  const choice = await chooseModel(
    { call: model, session: env.session.modelName, headerKey: env.headerKey },
    env.deps,
  );
  tellModel(env, choice);
  const cache = env.serverCache ? env.deps.cacheFor?.(env.session.tenant) : undefined;
  const policy = env.deps.policy;
  return {
    page: env.page,
    checkNavigation: (url) => assertNavigable(url, policy),
    log: opLog(env.emit),
    options,
    // A session's page takes call after call: an observe then an extract read it once.
    reuseReads: true,
    signal: env.signal,
    ...(env.session.systemPrompt ? { guidance: env.session.systemPrompt } : {}),
    ...(choice.llm ? { llm: choice.llm } : {}),
    ...(variables ? { variables } : {}),
    ...(cache ? { cache } : {}),
  };
}

export async function runAct(env: CallEnv, body: z.infer<typeof ActBody>) {
  const ctx = await opContext(env, body.options?.model, flatVariables(body.options?.variables), {});
  let input: string | ObservedElement;
  try {
    input = typeof body.input === 'string' ? body.input : observedFromSdk(body.input);
  } catch (err) {
    // A method we cannot carry out is an act that did not happen, as the SDK reports it locally.
    if (!(err instanceof WireError) || typeof body.input === 'string') throw err;
    return {
      success: false,
      message: err.message,
      actionDescription: body.input.description ?? '',
      actions: [],
    };
  }
  const instruction = typeof input === 'string' ? input : input.description;
  try {
    const result = await act(ctx, input).finally(() => readAhead(ctx));
    if (result.cache) env.emit.cacheStatus(result.resolvedBy === 'cache');
    record(env, {
      method: 'act',
      parameters: { instruction },
      result: { success: result.success, resolvedBy: result.resolvedBy },
      tokenUsage: tokenUsage(result.usage),
    });
    return actToSdk(result);
  } catch (err) {
    // Stagehand reports "nothing fits" as an unsuccessful act, not as an exception.
    if (err instanceof OpError && (err.kind === 'not_found' || err.kind === 'not_actionable')) {
      record(env, {
        method: 'act',
        parameters: { instruction },
        result: { success: false },
        tokenUsage: tokenUsage(err.usage),
      });
      return { success: false, message: err.message, actionDescription: instruction, actions: [] };
    }
    throw err;
  }
}

/**
 * The scope of an observe / extract as the SDK gives it: `selector` and `ignoreSelectors`, CSS or
 * XPath. A selector that finds nothing reads the whole page, with a log line, as the SDK does.
 */
const scopeOf = (
  o: { selector?: string | undefined; ignoreSelectors?: string[] | undefined } | undefined,
) => ({
  ...(o?.selector ? { selector: o.selector, selectorFallback: true } : {}),
  ...(o?.ignoreSelectors?.length ? { ignore: o.ignoreSelectors } : {}),
});

export async function runObserve(env: CallEnv, body: z.infer<typeof ObserveBody>) {
  const o = body.options;
  const ctx = await opContext(env, o?.model, flatVariables(o?.variables), scopeOf(o));
  const result = await observe(ctx, body.instruction);
  record(env, {
    method: 'observe',
    parameters: { instruction: body.instruction ?? '' },
    result: { found: result.elements.length, resolvedBy: result.resolvedBy },
    tokenUsage: tokenUsage(result.usage),
  });
  return result.elements.map(observedToSdk);
}

/** Asked for a schema without words: the schema says what to read. */
const SCHEMA_ONLY = 'Extract the data the schema describes from this page.';

export async function runExtract(env: CallEnv, body: z.infer<typeof ExtractBody>) {
  const o = body.options;
  const ctx = await opContext(env, o?.model, undefined, scopeOf(o));
  const instruction = body.instruction?.trim() || (body.schema ? SCHEMA_ONLY : undefined);
  const result = await extract(ctx, instruction, body.schema);
  record(env, {
    method: 'extract',
    parameters: { instruction: instruction ?? '', schema: !!body.schema },
    result: { resolvedBy: result.resolvedBy },
    tokenUsage: tokenUsage(result.usage),
  });
  return result.data;
}

/** The navigation's response as the SDK rebuilds it (`SerializableResponse`), or null. */
async function serializable(page: Page, response: PwResponse | null, frameId: string | undefined) {
  if (!response) return null;
  // The frame's current document is the response's only if the page has not moved on since.
  const loaderId = page.url() === response.url() ? await mainLoaderId(page).catch(() => '') : '';
  return {
    requestId: loaderId || `browserfn-${Date.now().toString(36)}`,
    ...(frameId ? { frameId } : {}),
    loaderId,
    response: {
      url: response.url(),
      status: response.status(),
      statusText: response.statusText(),
      headers: await response.allHeaders().catch(() => response.headers()),
      mimeType: (response.headers()['content-type'] ?? '').split(';')[0] ?? '',
      protocol: 'http/1.1',
    },
    finishedSettled: true,
  };
}

export async function runNavigate(env: CallEnv, body: z.infer<typeof NavigateBody>) {
  const { url } = body;
  if (!navigableScheme(url)) throw new OpError('invalid', `url: ${url} is not a web URL`);
  await assertNavigable(url, env.deps.policy);
  let response: PwResponse | null;
  try {
    response = await env.page.goto(url, {
      waitUntil: body.options?.waitUntil ?? 'domcontentloaded',
      timeout: body.options?.timeout ?? 30_000,
    });
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0] ?? '';
    if (/ERR_BLOCKED_BY_CLIENT|ERR_TUNNEL_CONNECTION_FAILED/.test(msg))
      throw new NetworkBlockedError(url, 'blocked', `Blocked request to ${url} by the network guard`);
    if ((err as Error).name === 'TimeoutError') throw new OpError('timeout', msg);
    throw new OpError('navigation', `could not open ${url}: ${msg}`);
  }
  const refused = response ? await blockedBy(response) : undefined;
  if (refused) throw new NetworkBlockedError(response!.url(), 'redirect', refused);
  record(env, {
    method: 'navigate',
    parameters: { url },
    result: { status: response?.status() ?? null },
    tokenUsage: tokenUsage(undefined),
  });
  return serializable(env.page, response, body.frameId);
}

export async function runAgentExecute(env: CallEnv, body: z.infer<typeof AgentExecuteBody>) {
  const config = body.agentConfig;
  const modelRequest = {
    call: body.agentConfig?.model,
    session: env.session.modelName,
    headerKey: env.headerKey,
  };
  // mode "cua": the provider's computer-use model drives the session's page by screenshots.
  const computerUse =
    config?.cua || config?.mode === 'cua' ? await chooseComputerUseModel(modelRequest, env.deps) : undefined;
  const choice = computerUse
    ? {
        llm: noChatModel,
        note: `computer-use model ${computerUse.config.provider}/${computerUse.config.model}`,
        substituted: false,
      }
    : await chooseModel(modelRequest, env.deps);
  tellModel(env, choice);
  const result = await runAgentForStagehand({
    tenant: env.session.tenant,
    page: env.page,
    instruction: body.executeOptions.instruction,
    maxSteps: body.executeOptions.maxSteps,
    systemPrompt: body.agentConfig?.systemPrompt,
    variables: flatVariables(body.executeOptions.variables),
    llm: choice.llm,
    ...(computerUse ? { computerUse } : {}),
    checkNavigation: (url) => assertNavigable(url, env.deps.policy),
    log: opLog(env.emit),
    signal: env.signal,
    ...(env.finishBy ? { finishBy: env.finishBy } : {}),
  });
  const u = result.usage;
  record(env, {
    method: 'agent',
    parameters: { instruction: body.executeOptions.instruction },
    result: { success: result.success, completed: result.completed },
    tokenUsage: {
      inputTokens: u.input_tokens,
      outputTokens: u.output_tokens,
      reasoningTokens: u.reasoning_tokens ?? 0,
      cachedInputTokens: u.cached_input_tokens ?? 0,
      timeMs: u.inference_time_ms,
    },
  });
  return result;
}
