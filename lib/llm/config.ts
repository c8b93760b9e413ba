import { LlmError, type ModelConfig, type Provider } from './types.ts';

const PROVIDERS: Provider[] = ['openai', 'anthropic', 'openai-compatible'];
export const DEFAULT_OPENAI_MODEL = 'gpt-4.1-mini';
export const DEFAULT_ANTHROPIC_MODEL = 'claude-haiku-4-5';

/** `openai/gpt-4.1-mini` → provider + model. Model names may contain slashes (`openai-compatible/meta/llama`). */
export function parseModelName(name: string): { provider: Provider; model: string } {
  const at = name.indexOf('/');
  const provider = name.slice(0, at).trim() as Provider;
  const model = name.slice(at + 1).trim();
  if (at <= 0 || !PROVIDERS.includes(provider) || !model)
    throw new LlmError(
      'bad_request',
      `model must be written "provider/model" with provider one of ${PROVIDERS.join(', ')} ` +
        `(e.g. openai/gpt-4.1-mini, anthropic/${DEFAULT_ANTHROPIC_MODEL}, openai-compatible/llama3.1), got "${name}"`,
    );
  return { provider, model };
}

export interface ModelChoiceInput {
  model?: string | undefined;
  baseURL?: string | undefined;
  apiKey?: string | undefined;
}

type Env = Record<string, string | undefined>;

/** Where each provider's SDK sends requests when no base URL is set. */
const PROVIDER_URL: Record<Provider, string | undefined> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
  'openai-compatible': undefined,
};

/** The same endpoint, written either way (case of scheme and host, a trailing slash, a default port). */
function sameEndpoint(a: string, b: string): boolean {
  const norm = (u: string) => {
    try {
      const url = new URL(u);
      return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
    } catch {
      return undefined;
    }
  };
  const [x, y] = [norm(a), norm(b)];
  return x !== undefined && x === y;
}
const nonEmpty = (v: string | undefined) => (v?.trim() ? v.trim() : undefined);
const providerOf = (name: string) => PROVIDERS.find((p) => name.startsWith(`${p}/`));

/**
 * The model for a call: what the call names, else `BROWSERFN_MODEL`, else a default for whichever
 * provider key is set. Undefined when nothing is configured (only the zero-token tier can answer).
 *
 * `BROWSERFN_MODEL_BASE_URL` / `BROWSERFN_MODEL_API_KEY` belong to the `BROWSERFN_MODEL` setup: they
 * apply to models of that provider and to openai-compatible ones, never to another provider's model
 * (an OpenAI key must not travel to a custom URL, nor a local URL to Anthropic).
 */
export function resolveModelConfig(
  choice: ModelChoiceInput | undefined,
  env: Env = process.env,
): ModelConfig | undefined {
  const envModel = nonEmpty(env.BROWSERFN_MODEL);
  let name = nonEmpty(choice?.model) ?? envModel;
  if (!name) {
    if (nonEmpty(env.OPENAI_API_KEY)) name = `openai/${DEFAULT_OPENAI_MODEL}`;
    else if (nonEmpty(env.ANTHROPIC_API_KEY)) name = `anthropic/${DEFAULT_ANTHROPIC_MODEL}`;
    else return undefined;
  }
  const { provider, model } = parseModelName(name);
  const generic = provider === 'openai-compatible' || (envModel && providerOf(envModel) === provider);
  const own = {
    openai: { key: env.OPENAI_API_KEY, url: env.OPENAI_BASE_URL },
    anthropic: { key: env.ANTHROPIC_API_KEY, url: env.ANTHROPIC_BASE_URL },
    'openai-compatible': { key: undefined, url: undefined },
  }[provider];
  // A key of the server's goes only to the endpoint it was configured for. A URL the caller names
  // gets the caller's key or none: ours would be handed to whoever runs that URL.
  const callerUrl = nonEmpty(choice?.baseURL);
  const serverKey = (key: string | undefined, home: string | undefined) =>
    !callerUrl || (home !== undefined && sameEndpoint(callerUrl, home)) ? nonEmpty(key) : undefined;
  const ownHome = nonEmpty(own.url) ?? PROVIDER_URL[provider];
  const apiKey =
    nonEmpty(choice?.apiKey) ??
    (generic
      ? serverKey(env.BROWSERFN_MODEL_API_KEY, nonEmpty(env.BROWSERFN_MODEL_BASE_URL) ?? ownHome)
      : undefined) ??
    serverKey(own.key, ownHome);
  const baseURL =
    nonEmpty(choice?.baseURL) ??
    (generic ? nonEmpty(env.BROWSERFN_MODEL_BASE_URL) : undefined) ??
    nonEmpty(own.url);

  if (provider === 'openai-compatible' && !baseURL)
    throw new LlmError(
      'bad_request',
      `${name} needs the server's URL: set BROWSERFN_MODEL_BASE_URL (e.g. http://localhost:11434/v1) or pass model.baseURL`,
    );
  // A custom base URL (a proxy, a gateway) may not want a key; the provider's own API always does.
  if (provider !== 'openai-compatible' && !apiKey && !baseURL)
    throw new LlmError(
      'auth',
      `${name} needs an API key: set ${provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY'} (or BROWSERFN_MODEL_API_KEY)`,
    );

  const config: ModelConfig = { provider, model };
  if (apiKey) config.apiKey = apiKey;
  if (baseURL) config.baseURL = baseURL;
  const timeoutMs = Number(env.BROWSERFN_MODEL_TIMEOUT_MS);
  if (timeoutMs > 0) config.timeoutMs = timeoutMs;
  const retries = env.BROWSERFN_MODEL_MAX_RETRIES;
  if (retries !== undefined && retries !== '' && Number.isInteger(Number(retries)) && Number(retries) >= 0)
    config.maxRetries = Number(retries);
  return config;
}

/** The model to switch to when the main one keeps failing: `BROWSERFN_FALLBACK_MODEL`, if set. */
export function resolveFallbackConfig(env: Env = process.env): ModelConfig | undefined {
  const name = nonEmpty(env.BROWSERFN_FALLBACK_MODEL);
  return name ? resolveModelConfig({ model: name }, env) : undefined;
}

/** How a caller names a model where it calls from: the API's request field, the CLI's flag. */
export const MODEL_HINT = {
  api: 'Or pass "model" with the request.',
  cli: 'Or pass --model provider/model on the command line.',
} as const;

/** A no-model message as the command line should say it (its flag, not the API's field). */
export const forCommandLine = (message: string): string => message.replaceAll(MODEL_HINT.api, MODEL_HINT.cli);

export function noModelError(): LlmError {
  return new LlmError(
    'no_model',
    'No model is configured, and this step needs one. Set BROWSERFN_MODEL to "provider/model" with that ' +
      `provider's key, e.g. BROWSERFN_MODEL=openai/${DEFAULT_OPENAI_MODEL} with OPENAI_API_KEY, or ` +
      `BROWSERFN_MODEL=anthropic/${DEFAULT_ANTHROPIC_MODEL} with ANTHROPIC_API_KEY (setting only OPENAI_API_KEY ` +
      'or ANTHROPIC_API_KEY also works). For a local or other OpenAI-compatible server: ' +
      'BROWSERFN_MODEL=openai-compatible/<model> and BROWSERFN_MODEL_BASE_URL=http://host:port/v1 ' +
      `(BROWSERFN_MODEL_API_KEY if it wants one). ${MODEL_HINT.api}`,
  );
}
