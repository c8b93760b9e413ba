import { LlmError, type ModelConfig, type Provider } from './types.ts';

const PROVIDERS: Provider[] = ['openai', 'anthropic', 'openai-compatible'];
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-5';

/** `openai/gpt-4.1-mini` → provider + model. Model names may contain slashes (`openai-compatible/meta/llama`). */
export function parseModelName(name: string): { provider: Provider; model: string } {
  const at = name.indexOf('/');
  const provider = name.slice(0, at) as Provider;
  const model = name.slice(at + 1).trim();
  if (at <= 0 || !PROVIDERS.includes(provider) || !model)
    throw new LlmError(
      'bad_request',
      `model must be "provider/model" with provider one of ${PROVIDERS.join(', ')} (e.g. openai/gpt-4.1-mini), got "${name}"`,
    );
  return { provider, model };
}

export interface ModelChoiceInput {
  model?: string | undefined;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
}

/**
 * The model for a call: what the call names, else `BROWSERFN_MODEL`, else a default for whichever
 * provider key is set. Undefined when nothing is configured (only the zero-token tier can answer).
 */
export function resolveModelConfig(
  choice: ModelChoiceInput | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ModelConfig | undefined {
  let name = choice?.model ?? env.BROWSERFN_MODEL;
  if (!name) {
    if (env.OPENAI_API_KEY) name = `openai/${DEFAULT_OPENAI_MODEL}`;
    else if (env.ANTHROPIC_API_KEY) name = `anthropic/${DEFAULT_ANTHROPIC_MODEL}`;
    else return undefined;
  }
  const { provider, model } = parseModelName(name);
  const fromEnv: Record<Provider, { key?: string | undefined; url?: string | undefined }> = {
    openai: { key: env.OPENAI_API_KEY, url: env.OPENAI_BASE_URL },
    anthropic: { key: env.ANTHROPIC_API_KEY, url: env.ANTHROPIC_BASE_URL },
    'openai-compatible': {
      key: env.BROWSERFN_MODEL_API_KEY ?? env.OPENAI_API_KEY,
      url: env.BROWSERFN_MODEL_BASE_URL,
    },
  };
  const apiKey =
    choice?.apiKey ?? (provider === 'openai-compatible' ? fromEnv[provider].key : fromEnv[provider].key);
  const baseURL = choice?.baseURL ?? fromEnv[provider].url ?? env.BROWSERFN_MODEL_BASE_URL;
  if (provider === 'openai-compatible' && !baseURL)
    throw new LlmError(
      'bad_request',
      'openai-compatible models need a base URL: set BROWSERFN_MODEL_BASE_URL or model.baseURL',
    );
  if (provider !== 'openai-compatible' && !apiKey)
    throw new LlmError(
      'auth',
      `${name} needs an API key: set ${provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY'}`,
    );
  const config: ModelConfig = { provider, model };
  if (apiKey) config.apiKey = apiKey;
  if (baseURL) config.baseURL = baseURL;
  const timeout = Number(env.BROWSERFN_MODEL_TIMEOUT_MS);
  if (timeout > 0) config.timeoutMs = timeout;
  return config;
}

export function noModelError(): LlmError {
  return new LlmError(
    'no_model',
    'No model is configured. Set BROWSERFN_MODEL (e.g. openai/gpt-4.1-mini or anthropic/claude-sonnet-4-5) with ' +
      'OPENAI_API_KEY or ANTHROPIC_API_KEY, or openai-compatible/<model> with BROWSERFN_MODEL_BASE_URL; ' +
      'or pass "model" in the request.',
  );
}
