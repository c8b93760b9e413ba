/**
 * The edge guard's URL rule and its DNS-over-HTTPS resolver. Differs from Node in one way: a name
 * the guard cannot resolve is refused, since the remote browser resolves it in another network.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressesIn, dohResolver } from '../../lib/browser/doh-resolver.ts';
import { checkEdgeUrl } from '../../lib/browser/edge-guard.ts';
import type { Resolver } from '../../lib/browser/guard-rules.ts';

const policy = { allowPrivate: false, allowHosts: ['intranet.test'] };
const table: Record<string, string[]> = { 'public.test': ['93.184.216.34'], 'rebound.test': ['10.0.0.7'] };
const asked: string[] = [];
const resolve: Resolver = async (host) => {
  asked.push(host);
  const ips = table[host];
  if (!ips) throw new Error(`${host} has no address`);
  return ips;
};

let doh: http.Server;
let dohUrl: string;
const queries: string[] = [];
beforeAll(async () => {
  doh = http.createServer((req, res) => {
    const q = new URL(req.url ?? '/', 'http://doh.test');
    const name = q.searchParams.get('name') ?? '';
    const type = q.searchParams.get('type');
    queries.push(`${name} ${type} ${req.headers.accept}`);
    const answer =
      name === 'two.test' && type === 'A'
        ? [
            { name, type: 5, data: 'alias.test.' },
            { name, type: 1, data: '93.184.216.34' },
          ]
        : name === 'two.test' && type === 'AAAA'
          ? [{ name, type: 28, data: '2606:2800:220:1::1' }]
          : [];
    res.writeHead(200, { 'content-type': 'application/dns-json' });
    res.end(JSON.stringify({ Status: name === 'two.test' ? 0 : 3, Answer: answer }));
  });
  await new Promise<void>((r) => doh.listen(0, '127.0.0.1', r));
  dohUrl = `http://127.0.0.1:${(doh.address() as AddressInfo).port}/dns-query`;
});
afterAll(() => new Promise((r) => doh.close(r)));

describe('edge guard', () => {
  it('lets a public name and an allowed name through (the allowed one without a lookup)', async () => {
    asked.length = 0;
    expect(await checkEdgeUrl('https://public.test/page', policy, resolve)).toEqual({ ok: true });
    expect(await checkEdgeUrl('http://intranet.test/', policy, resolve)).toEqual({ ok: true });
    expect(asked).toEqual(['public.test']);
  });

  it('refuses a name that resolves to a private address, a loopback literal, and a name it cannot resolve', async () => {
    expect(await checkEdgeUrl('http://rebound.test/', policy, resolve)).toMatchObject({
      ok: false,
      rule: 'private address (RFC 1918)',
    });
    expect(await checkEdgeUrl('http://127.0.0.1:9/', policy, resolve)).toMatchObject({ ok: false });
    const unknown = await checkEdgeUrl('http://only-inside.corp/', policy, resolve);
    expect(unknown).toMatchObject({ ok: false, rule: 'name the guard could not resolve' });
  });

  it('resolves A and AAAA over DNS-over-HTTPS JSON, skipping CNAME hops; no address is an error', async () => {
    const r = dohResolver(dohUrl);
    expect(await r('two.test')).toEqual(['93.184.216.34', '2606:2800:220:1::1']);
    expect(queries).toContain('two.test A application/dns-json');
    await expect(r('nowhere.test')).rejects.toThrow(/no address/);
    expect(addressesIn({ Status: 2, Answer: [{ type: 1, data: '1.2.3.4' }] })).toEqual([]);
  });
});
