import { type LookupAddress, lookup as systemLookup } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, request } from 'undici';
import type { GuardPolicy } from '../browser/guard-policy.ts';
import { addressRefused } from '../browser/guard-rules.ts';
import { MAX_REPLY_BYTES, type ModelFetch, ModelUrlBlockedError } from './model-fetch.ts';

export {
  cancelOperatorHeaders,
  MAX_REPLY_BYTES,
  type ModelFetch,
  ModelUrlBlockedError,
} from './model-fetch.ts';

type AllLookup = (
  host: string,
  callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;
const lookupAll: AllLookup = (host, callback) => systemLookup(host, { all: true }, callback);

/**
 * A DNS lookup that refuses addresses the guard forbids, for connections to a model URL a caller
 * chose. The URL was checked before the call; checking again at connect time closes the gap in
 * which its name could be made to resolve somewhere else (DNS rebinding).
 */
export function guardedLookup(
  policy: GuardPolicy,
  port: string,
  resolve: AllLookup = lookupAll,
): LookupFunction {
  return (host, options, callback) => {
    resolve(host, (err, addresses) => {
      if (err) return callback(err, '', 0);
      for (const a of addresses) {
        const rule = addressRefused(policy, host, port, a.address);
        if (rule)
          return callback(
            new ModelUrlBlockedError(`${host} resolves to ${a.address} (${rule})`) as NodeJS.ErrnoException,
            '',
            0,
          );
      }
      const wanted = options.family === 4 || options.family === 6 ? options.family : undefined;
      const usable = wanted ? addresses.filter((a) => a.family === wanted) : addresses;
      if (options.all) return callback(null, usable as never, 0);
      const first = usable[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

async function readCapped(
  body: AsyncIterable<Uint8Array> & { destroy(): void },
): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_REPLY_BYTES) {
      body.destroy();
      throw new Error(`the model reply is larger than ${MAX_REPLY_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * We ask for no compression (fetch would have, and decoded the reply itself); a server that
 * compresses anyway is decoded here, and the headers then describe the decoded body.
 */
function decoded(body: Uint8Array<ArrayBuffer>, headers: Headers): Uint8Array<ArrayBuffer> {
  const encoding = headers.get('content-encoding')?.trim().toLowerCase();
  const decode =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? gunzipSync
      : encoding === 'br'
        ? brotliDecompressSync
        : encoding === 'deflate'
          ? inflateSync
          : undefined;
  if (!decode || body.length === 0) return body;
  headers.delete('content-encoding');
  headers.delete('content-length');
  // A reply that inflates past the cap (a compression bomb from a caller's URL) fails instead.
  return new Uint8Array(decode(body, { maxOutputLength: MAX_REPLY_BYTES }));
}

function bodyOf(init: RequestInit): string | Uint8Array | undefined {
  const body = init.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // The SDKs send JSON text; anything else (forms, streams) is a call we never make.
  throw new TypeError('model calls send text or bytes only');
}

/**
 * HTTP for the model SDKs, on undici's request API rather than the fetch built on top of it:
 * fetch wraps every request and reply in web streams, a cost paid on each model call for nothing
 * (replies are read whole). Redirects are never followed: a model endpoint answers itself, and a
 * redirect would lead a URL that passed the guard somewhere it was never checked. With `guard`
 * (a caller-chosen URL), every connection's address is checked again as it is made.
 */
export function modelFetch(opts: { guard?: { policy: GuardPolicy; port: string } } = {}): ModelFetch {
  const guard = opts.guard;
  const dispatcher = new Agent({
    keepAliveTimeout: 10_000,
    ...(guard ? { connect: { lookup: guardedLookup(guard.policy, guard.port) } } : {}),
  });
  return async (input, init = {}) => {
    if (input instanceof Request) throw new TypeError('model calls pass a URL, not a Request');
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = bodyOf(init);
    const res = await request(String(input), {
      method: (init.method ?? 'GET') as 'GET',
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(init.signal ? { signal: init.signal } : {}),
      dispatcher,
    });
    const replyHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers))
      for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
        replyHeaders.append(name, v);
    const bytes = decoded(await readCapped(res.body), replyHeaders);
    return new Response(NULL_BODY_STATUS.has(res.statusCode) ? null : bytes, {
      status: res.statusCode,
      headers: replyHeaders,
    });
  };
}
