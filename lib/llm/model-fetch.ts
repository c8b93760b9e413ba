/**
 * What model calls need from HTTP, in web-standard terms only: the `fetch` the SDKs take, the
 * guard's refusal, the operator's headers a caller's URL must not get, and a `fetch` for runtimes
 * without Node (the edge worker). transport.ts builds the Node one on undici.
 */

/** The `fetch` both model SDKs take in their options. */
export type ModelFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** A connection the guard refused: never retried, never handed to the fallback model. */
export class ModelUrlBlockedError extends Error {
  override name = 'ModelUrlBlockedError';
}

/** Far beyond any model reply; a URL a caller chose must not make us hold more. */
export const MAX_REPLY_BYTES = 32 * 1024 * 1024;

/**
 * Headers that cancel the ones the operator set for its own endpoint through an SDK's environment
 * variable (`OPENAI_CUSTOM_HEADERS`, `ANTHROPIC_CUSTOM_HEADERS`: "Name: value" lines, often a
 * gateway's key). Given as `defaultHeaders` to a client of a caller-chosen URL, which must get none
 * of them.
 */
export function cancelOperatorHeaders(envValue: string | undefined): Record<string, null> {
  const out: Record<string, null> = {};
  for (const line of (envValue ?? '').split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) out[line.slice(0, colon).trim()] = null;
  }
  return out;
}

/** An environment variable where there is a process (Node), undefined where there is none (workerd). */
export function processEnv(name: string): string | undefined {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env?.[name];
}

/** Reads a reply body whole, up to MAX_REPLY_BYTES. */
async function readCapped(res: Response): Promise<Uint8Array<ArrayBuffer>> {
  if (!res.body) return new Uint8Array(new ArrayBuffer(0));
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel();
      throw new Error(`the model reply is larger than ${MAX_REPLY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const out = new Uint8Array(new ArrayBuffer(size));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

/**
 * Model HTTP over the runtime's own `fetch` (workerd, browsers): redirects are not followed (a
 * model endpoint answers itself; a redirect would lead a checked URL somewhere unchecked) and a
 * reply is read whole up to the cap. The runtime resolves names itself, so unlike the Node transport
 * a caller's URL is checked before the call only, not again at connect time.
 */
export function webModelFetch(fetchImpl: typeof fetch = fetch): ModelFetch {
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError('model calls pass a URL, not a Request');
    const res = await fetchImpl(String(input), { ...init, redirect: 'manual' });
    const bytes = await readCapped(res);
    const empty = res.status === 204 || res.status === 205 || res.status === 304 || bytes.byteLength === 0;
    return new Response(empty ? null : bytes, { status: res.status, headers: res.headers });
  };
}
