/**
 * How long the Node server waits for a request to arrive. Node's own default lets a client take
 * 300 s to send one body, and checks only every 30 s: a few slow senders then hold connections (and
 * the memory of their half-read bodies) for minutes. Limits apply to receiving the request only; the
 * time a handler then takes (an agent call may run for minutes) is not counted.
 * Pure: options for `http.createServer` from the environment.
 */

/** Headers must be complete within this. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** Headers and body must be complete within this (a body limit of a few MB at a slow link fits). */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

export interface RequestTimeouts {
  headersTimeout: number;
  requestTimeout: number;
  /** How often Node looks for requests over their time; a tenth of the shorter limit, ≥ 250 ms. */
  connectionsCheckingInterval: number;
}

const positive = (v: string | undefined) => (Number(v) > 0 ? Math.floor(Number(v)) : undefined);

/** From BROWSERFN_HEADERS_TIMEOUT_MS and BROWSERFN_REQUEST_TIMEOUT_MS (milliseconds). */
export function requestTimeouts(env: Record<string, string | undefined>): RequestTimeouts {
  const requestTimeout = positive(env.BROWSERFN_REQUEST_TIMEOUT_MS) ?? DEFAULT_REQUEST_TIMEOUT_MS;
  // Node refuses a headers limit above the request limit.
  const headersTimeout = Math.min(
    positive(env.BROWSERFN_HEADERS_TIMEOUT_MS) ?? DEFAULT_HEADERS_TIMEOUT_MS,
    requestTimeout,
  );
  return {
    headersTimeout,
    requestTimeout,
    connectionsCheckingInterval: Math.max(250, Math.floor(headersTimeout / 10)),
  };
}
