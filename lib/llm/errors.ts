import { parseRetryAfter } from './retry.ts';
import { LlmError } from './types.ts';

interface SdkError {
  name?: string;
  status?: number;
  headers?: Headers;
  message?: string;
}

/** Maps either SDK's errors to our kinds; both SDKs share the same error class shapes. */
export function toLlmError(err: unknown, model: string): LlmError {
  if (err instanceof LlmError) return err;
  const e = (err ?? {}) as SdkError;
  const name = e.name ?? '';
  const first = (e.message ?? String(err)).split('\n')[0];
  if (/Timeout/i.test(name) || /timed out|timeout/i.test(first ?? ''))
    return new LlmError('timeout', `${model}: request timed out`);
  if (/ConnectionError|UserAbort|AbortError/i.test(name))
    return new LlmError('network', `${model}: ${first}`);
  const status = e.status;
  if (status === 429)
    return new LlmError('rate_limit', `${model}: rate limited (429)`, 429, parseRetryAfter(e.headers));
  if (status === 401 || status === 403)
    return new LlmError('auth', `${model}: the API key was refused (${status})`, status);
  if (status !== undefined && status >= 500)
    return new LlmError('server', `${model}: provider error ${status}`, status, parseRetryAfter(e.headers));
  if (status !== undefined) return new LlmError('bad_request', `${model}: ${first}`, status);
  return new LlmError('network', `${model}: ${first}`);
}
