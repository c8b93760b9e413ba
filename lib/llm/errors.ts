// The Anthropic SDK's error classes from its error module alone: its entry imports Node modules,
// and this file is on the edge worker's path.
import * as Anthropic from '@anthropic-ai/sdk/core/error';
import OpenAI from 'openai';
import { ModelUrlBlockedError } from './model-fetch.ts';
import { parseRetryAfter } from './retry.ts';
import { LlmError } from './types.ts';

const isTimeout = (e: unknown) =>
  e instanceof OpenAI.APIConnectionTimeoutError || e instanceof Anthropic.APIConnectionTimeoutError;
const isAbort = (e: unknown) =>
  e instanceof OpenAI.APIUserAbortError ||
  e instanceof Anthropic.APIUserAbortError ||
  (e instanceof Error && e.name === 'AbortError');
const isConnection = (e: unknown) =>
  e instanceof OpenAI.APIConnectionError || e instanceof Anthropic.APIConnectionError;

/** A guard refusal somewhere in the error's cause chain (the SDKs wrap what their fetch threw). */
function blockedCause(err: unknown): ModelUrlBlockedError | undefined {
  for (let e = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++)
    if (e instanceof ModelUrlBlockedError) return e;
  return undefined;
}

/** The error a caller's own abort becomes: never retried, never sent to the fallback model. */
export const abortedError = (model: string) =>
  new LlmError('timeout', `${model}: the call was cancelled by the caller`);

/**
 * Either SDK's errors as our kinds. Messages carry the model name and status only: a provider's
 * error text can quote the request, and prompts may hold page data.
 */
export function toLlmError(err: unknown, model: string): LlmError {
  if (err instanceof LlmError) return err;
  const blocked = blockedCause(err);
  if (blocked)
    return new LlmError('bad_request', `${model}: blocked by the network guard: ${blocked.message}`);
  if (isTimeout(err)) return new LlmError('timeout', `${model}: no answer within the time limit`);
  if (isAbort(err)) return abortedError(model);
  if (isConnection(err)) return new LlmError('network', `${model}: could not reach the provider`);
  const apiError = err instanceof OpenAI.APIError || err instanceof Anthropic.APIError;
  const status = apiError ? (err as { status?: number }).status : undefined;
  const headers = apiError ? (err as { headers?: Headers }).headers : undefined;
  if (status === 429)
    return new LlmError('rate_limit', `${model}: rate limited (429)`, 429, parseRetryAfter(headers));
  if (status === 401 || status === 403)
    return new LlmError('auth', `${model}: the API key was refused (${status})`, status);
  if (status !== undefined && status >= 300 && status < 400)
    return new LlmError(
      'bad_request',
      `${model}: the model URL answered with a redirect (${status}), and model calls do not follow redirects: give the final URL as baseURL`,
      status,
    );
  if (status === 408) return new LlmError('timeout', `${model}: the provider timed out (408)`, 408);
  if (status !== undefined && status >= 500)
    return new LlmError('server', `${model}: provider error ${status}`, status, parseRetryAfter(headers));
  if (status !== undefined) {
    // The first line of a 4xx says what was wrong with the request (bad schema, unknown model…).
    const first = ((err as Error).message ?? '').split('\n')[0]?.slice(0, 300);
    return new LlmError('bad_request', `${model}: request refused: ${first}`, status);
  }
  // Not from the wire (a bug, an SDK precondition): retrying would only repeat it.
  const message = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return new LlmError('bad_request', `${model}: ${message}`);
}
