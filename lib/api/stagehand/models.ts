import { checkUrl } from '../../browser/guard.ts';
import { createComputerUseModel, resolveComputerUseModel } from '../../llm/computer-use/index.ts';
import type { ComputerUseConfig, ComputerUseModel } from '../../llm/computer-use/types.ts';
import type { LlmClient } from '../../llm/types.ts';
import { OpError } from '../../ops/types.ts';
import { modelFor, type OpDeps } from '../run-op.ts';
import type { ModelOption } from './wire.ts';

export interface ModelRequest {
  /** `options.model` of the call (or `agentConfig.model`). */
  call: ModelOption | undefined;
  /** `modelName` given at session start. */
  session: string | undefined;
  /** The `x-model-api-key` header. */
  headerKey: string | undefined;
}

export interface ModelChoice {
  llm: LlmClient | undefined;
  /** One line for the call's log: which model answers and why. */
  note: string;
  /** A model was named but another one (or none) answers: worth telling the script's logger. */
  substituted: boolean;
}

const isAuto = (name: string | undefined) => !name || name === 'auto' || name.endsWith('/auto');

/**
 * The SDK still takes the bare model names of its first releases ("gpt-4.1-mini", with a deprecation
 * warning); ours are "provider/model". Bare OpenAI and Anthropic names get their provider.
 */
export function withProvider(name: string): string {
  if (name.includes('/')) return name;
  if (/^(gpt-|chatgpt-|o\d)/.test(name)) return `openai/${name}`;
  if (/^claude-/.test(name)) return `anthropic/${name}`;
  return name;
}

/**
 * The model for one SDK call, chosen as our own API does: the named model with the caller's key
 * (call option, then `x-model-api-key`), or with the server's key for that provider. `"auto"`,
 * or a named model nobody holds a key for, falls back to the server's configured model, then to
 * no model at all (the zero-token tier answers what it can). A caller who sends a key and a model
 * we cannot serve gets an error, not a different model.
 */
export async function chooseModel(req: ModelRequest, deps: OpDeps): Promise<ModelChoice> {
  const call = typeof req.call === 'string' ? { modelName: req.call } : req.call;
  const given = call?.modelName ?? req.session;
  const name = given && withProvider(given);
  const key = call?.apiKey ?? req.headerKey;
  if (!isAuto(name)) {
    try {
      const llm = await modelFor(
        {
          model: {
            name: name!,
            ...(key ? { apiKey: key } : {}),
            ...(call?.baseURL ? { baseURL: call.baseURL } : {}),
          },
        },
        deps,
      );
      if (llm) return { llm, note: `model ${llm.model}`, substituted: false };
    } catch (err) {
      if (key || call?.baseURL) throw err;
    }
  }
  const fallback = await modelFor({}, deps);
  const why = isAuto(name) ? `"${name ?? 'auto'}"` : `no key for ${name}`;
  const substituted = !isAuto(name);
  return fallback
    ? { llm: fallback, note: `${why}: the server's model ${fallback.model}`, substituted }
    : { llm: undefined, note: `${why} and no server model: zero-token tier only`, substituted };
}

/**
 * The computer-use model of an `agent({ mode: "cua" })` call: the named model (call option, then the
 * session's), with the caller's key (call option, then `x-model-api-key`) or the server's for that
 * provider. A caller's own base URL is checked by the guard and never gets the server's key.
 */
export async function chooseComputerUseModel(req: ModelRequest, deps: OpDeps): Promise<ComputerUseModel> {
  const call = typeof req.call === 'string' ? { modelName: req.call } : req.call;
  const given = call?.modelName ?? req.session;
  if (!given || isAuto(given))
    throw new OpError(
      'invalid',
      'agentConfig.model: mode "cua" needs a computer-use model (anthropic/…, openai/computer-use-preview, google/…)',
    );
  let config: ComputerUseConfig;
  try {
    config = resolveComputerUseModel(withProvider(given), deps.env ?? process.env);
  } catch (err) {
    throw new OpError('invalid', `agentConfig.model: ${(err as Error).message}`);
  }
  if (call?.baseURL) {
    const verdict = await checkUrl(call.baseURL, deps.policy);
    if (!verdict.ok) throw new OpError('blocked', `agentConfig.model.baseURL: ${verdict.message}`);
    const { apiKey: _serverKey, ...rest } = config;
    config = { ...rest, baseURL: call.baseURL };
  }
  const key = call?.apiKey ?? req.headerKey;
  if (key) config = { ...config, apiKey: key };
  return createComputerUseModel(config);
}
