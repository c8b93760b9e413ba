import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

/**
 * hono's body limit, judged by the declared length when there is one. hono's own middleware
 * first touches `c.req.raw.body`, and on Node that makes the adapter wrap the socket in a web
 * stream, which every later read then goes through (a third of a millisecond per call, most of a
 * small call's parsing). Node's parser never delivers more than `content-length` bytes, so the
 * header is as good as counting; a body without one (chunked) is still counted as it arrives.
 */
export function limitBody(
  maxSize: number,
  onError: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler {
  const counted = bodyLimit({ maxSize, onError });
  return (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const length = c.req.header('content-length');
    if (length !== undefined && c.req.header('transfer-encoding') === undefined)
      return Number(length) > maxSize ? Promise.resolve(onError(c)) : next();
    return counted(c, next);
  };
}
