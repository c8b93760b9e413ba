import { randomUUID } from 'node:crypto';
import type { ContentfulStatusCode } from 'hono/utils/http-status';

/** A log line as the SDK's logger takes it (0 error, 1 info, 2 debug). */
export interface LogLine {
  category: string;
  message: string;
  level: 0 | 1 | 2;
}

export interface Emitter {
  log(line: LogLine): void;
  /** The call was answered from the server's cache (true) or not (false): the SDK's `cacheStatus`. */
  cacheStatus(hit: boolean): void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
}

/** An operation failure with the status a JSON client gets and the kind both kinds of client see. */
export interface Failure {
  status: ContentfulStatusCode;
  kind: string;
  message: string;
}

/** One `data:` chunk. The 3.7 SDK skips chunks that start with anything else (`event:`, `id:`). */
export const sseChunk = (event: Record<string, unknown>) =>
  `data: ${JSON.stringify({ id: randomUUID(), ...event })}\n\n`;

export const logEvent = (message: LogLine) => sseChunk({ type: 'log', data: { status: 'running', message } });
export const finishedEvent = (result: unknown, cacheHit?: boolean) =>
  sseChunk({
    type: 'system',
    data: { status: 'finished', result: result ?? null, ...(cacheHit !== undefined ? { cacheHit } : {}) },
  });
export const errorEvent = (f: Failure) =>
  sseChunk({ type: 'system', data: { status: 'error', error: f.message, kind: f.kind } });

/** How long a call may run before its events start to stream; one done sooner answers in one write. */
export const HOLD_MS = 50;
/**
 * A streaming call with nothing to say for this long sends a `running` event: proxies cut streams
 * idle for about a minute, and Node's fetch gives up on a body silent for five.
 */
export const HEARTBEAT_MS = 15_000;
export const heartbeatEvent = () => sseChunk({ type: 'system', data: { status: 'running' } });

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
};

/**
 * Runs `work` and answers as the SDK asked: with `x-stream-response: true` a `text/event-stream`
 * of log events, then exactly one `finished` or `error`; otherwise one JSON body
 * (`{ success, data: { result } }`, or an error with its HTTP status).
 *
 * A call that finishes within `holdMs` (most observe / extract calls) is sent as one body: every
 * event is still there, but the client wakes once instead of once per event, which on a busy
 * machine is time taken from the browser and the model. A slower call streams from then on.
 */
export function respond(
  streaming: boolean,
  work: (emit: Emitter) => Promise<unknown>,
  toFailure: (err: unknown) => Failure,
  holdMs = HOLD_MS,
  heartbeatMs = HEARTBEAT_MS,
): Response | Promise<Response> {
  const controller = new AbortController();
  if (!streaming) return respondJson(work, toFailure, controller.signal);
  const held: string[] = [sseChunk({ type: 'system', data: { status: 'starting' } })];
  let live: ((chunk: string) => void) | undefined;
  const write = (chunk: string) => (live ? live(chunk) : held.push(chunk));
  let cacheHit: boolean | undefined;
  const finished = (async () => {
    try {
      const result = await work({
        log: (l) => write(logEvent(l)),
        cacheStatus: (hit) => {
          cacheHit = hit;
        },
        signal: controller.signal,
      });
      write(finishedEvent(result, cacheHit));
    } catch (err) {
      write(errorEvent(toFailure(err)));
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const slow = new Promise<'slow'>((resolve) => {
    timer = setTimeout(() => resolve('slow'), holdMs);
  });
  return Promise.race([finished.then(() => 'done' as const), slow]).then((which) => {
    clearTimeout(timer);
    if (which === 'done') return new Response(held.join(''), { headers: SSE_HEADERS });
    const enc = new TextEncoder();
    let open = true;
    const stream = new ReadableStream<Uint8Array>({
      start(out) {
        let quiet: NodeJS.Timeout | undefined;
        const beat = () => {
          quiet = setTimeout(() => {
            if (!open) return;
            out.enqueue(enc.encode(heartbeatEvent()));
            beat();
          }, heartbeatMs);
        };
        live = (chunk) => {
          if (!open) return;
          out.enqueue(enc.encode(chunk));
          clearTimeout(quiet);
          beat();
        };
        for (const chunk of held.splice(0)) live(chunk);
        void finished.then(() => {
          clearTimeout(quiet);
          if (open) out.close();
          open = false;
        });
      },
      cancel() {
        open = false;
        controller.abort();
      },
    });
    return new Response(stream, { headers: SSE_HEADERS });
  });
}

async function respondJson(
  work: (emit: Emitter) => Promise<unknown>,
  toFailure: (err: unknown) => Failure,
  signal: AbortSignal,
): Promise<Response> {
  let cacheHit: boolean | undefined;
  try {
    const result = await work({
      log: () => undefined,
      cacheStatus: (hit) => {
        cacheHit = hit;
      },
      signal,
    });
    return Response.json(
      { success: true, data: { result: result ?? null } },
      cacheHit === undefined ? {} : { headers: { 'browserbase-cache-status': cacheHit ? 'HIT' : 'MISS' } },
    );
  } catch (err) {
    const f = toFailure(err);
    return Response.json(
      { success: false, error: { kind: f.kind, message: f.message } },
      { status: f.status },
    );
  }
}
