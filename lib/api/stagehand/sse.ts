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
export const finishedEvent = (result: unknown) =>
  sseChunk({ type: 'system', data: { status: 'finished', result: result ?? null } });
export const errorEvent = (f: Failure) =>
  sseChunk({ type: 'system', data: { status: 'error', error: f.message, kind: f.kind } });

/**
 * Runs `work` and answers as the SDK asked: with `x-stream-response: true` a `text/event-stream`
 * of log events, then exactly one `finished` or `error`; otherwise one JSON body
 * (`{ success, data: { result } }`, or an error with its HTTP status).
 */
export function respond(
  streaming: boolean,
  work: (emit: Emitter) => Promise<unknown>,
  toFailure: (err: unknown) => Failure,
): Response | Promise<Response> {
  const controller = new AbortController();
  if (!streaming) return respondJson(work, toFailure, controller.signal);
  const enc = new TextEncoder();
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    async start(out) {
      const write = (chunk: string) => {
        if (open) out.enqueue(enc.encode(chunk));
      };
      write(sseChunk({ type: 'system', data: { status: 'starting' } }));
      try {
        const result = await work({ log: (l) => write(logEvent(l)), signal: controller.signal });
        write(finishedEvent(result));
      } catch (err) {
        write(errorEvent(toFailure(err)));
      }
      if (open) out.close();
      open = false;
    },
    cancel() {
      open = false;
      controller.abort();
    },
  });
  return new Response(stream, {
    headers: {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    },
  });
}

async function respondJson(
  work: (emit: Emitter) => Promise<unknown>,
  toFailure: (err: unknown) => Failure,
  signal: AbortSignal,
): Promise<Response> {
  try {
    const result = await work({ log: () => undefined, signal });
    return Response.json({ success: true, data: { result: result ?? null } });
  } catch (err) {
    const f = toFailure(err);
    return Response.json(
      { success: false, error: { kind: f.kind, message: f.message } },
      { status: f.status },
    );
  }
}
