import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { guardedLookup, MAX_REPLY_BYTES, ModelUrlBlockedError, modelFetch } from '../../lib/llm/transport.ts';

/** A resolver answering from a table, so no query leaves the process. */
const table =
  (answers: Record<string, LookupAddress[]>) =>
  (host: string, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) =>
    answers[host]
      ? cb(null, answers[host]!)
      : cb(Object.assign(new Error(`no ${host}`), { code: 'ENOTFOUND' }), []);

const resolver = table({
  'rebound.test': [{ address: '169.254.169.254', family: 4 }],
  'loop.test': [
    { address: '127.0.0.1', family: 4 },
    { address: '::1', family: 6 },
  ],
});
const policy = { allowPrivate: false, allowHosts: [] };

function look(lookup: ReturnType<typeof guardedLookup>, host: string, options: object) {
  return new Promise<{ err: Error | null; address: unknown; family: number | undefined }>((resolve) =>
    lookup(host, options as never, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('guardedLookup (connect-time check of a caller-chosen model URL)', () => {
  it('refuses a name that now resolves to the metadata service or loopback', async () => {
    const lookup = guardedLookup(policy, '443', resolver);
    const meta = await look(lookup, 'rebound.test', {});
    expect(meta.err).toBeInstanceOf(ModelUrlBlockedError);
    expect(meta.err!.message).toContain('rebound.test resolves to 169.254.169.254');
    const loop = await look(lookup, 'loop.test', { all: true });
    expect(loop.err).toBeInstanceOf(ModelUrlBlockedError);
  });

  it('answers in the shape asked for (one address or all, by family) when every address may be reached', async () => {
    const open = guardedLookup({ allowPrivate: false, allowHosts: ['loop.test:8080'] }, '8080', resolver);
    expect(await look(open, 'loop.test', {})).toEqual({ err: null, address: '127.0.0.1', family: 4 });
    expect(await look(open, 'loop.test', { family: 6 })).toEqual({ err: null, address: '::1', family: 6 });
    const all = await look(open, 'loop.test', { all: true });
    expect(all.address).toEqual([
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ]);
    // The allow-list entry names a port: the same host on another port stays refused.
    const otherPort = guardedLookup(
      { allowPrivate: false, allowHosts: ['loop.test:8080'] },
      '9090',
      resolver,
    );
    expect((await look(otherPort, 'loop.test', {})).err).toBeInstanceOf(ModelUrlBlockedError);
  });

  it('passes resolver failures through unchanged', async () => {
    const res = await look(guardedLookup(policy, '443', resolver), 'missing.test', {});
    expect((res.err as NodeJS.ErrnoException).code).toBe('ENOTFOUND');
  });
});

describe('modelFetch', () => {
  it('sends the body and headers as given, and decodes a reply compressed without being asked', async () => {
    const seen: { method?: string; type?: string; body?: string; encoding?: string }[] = [];
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({
          method: req.method,
          type: req.headers['content-type'],
          body: Buffer.concat(chunks).toString(),
          encoding: req.headers['accept-encoding'],
        });
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(JSON.stringify({ ok: true, echo: seen.length })));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await modelFetch()(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"model":"m"}',
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-encoding')).toBeNull();
      expect(await res.json()).toEqual({ ok: true, echo: 1 });
      expect(seen).toEqual([
        { method: 'POST', type: 'application/json', body: '{"model":"m"}', encoding: undefined },
      ]);
    } finally {
      server.close();
    }
  });
});

describe('modelFetch limits', () => {
  it('refuses a compressed reply that would inflate past the cap, instead of holding it', async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_REPLY_BYTES + 1024 * 1024));
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(bomb);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const err = await modelFetch()(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        body: '{}',
      }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as NodeJS.ErrnoException).code).toBe('ERR_BUFFER_TOO_LARGE');
    } finally {
      server.close();
    }
  });
});
