/**
 * Name resolution for the network guard where there is no system resolver (the edge worker): DNS
 * over HTTPS, JSON flavour (`application/dns-json`, as Cloudflare's and Google's public resolvers
 * answer it), A and AAAA, answers kept for 30 s like the Node resolver's.
 */
import type { Resolver } from './guard-rules.ts';

export const DEFAULT_DOH_URL = 'https://cloudflare-dns.com/dns-query';
const TTL_MS = 30_000;
const A = 1;
const AAAA = 28;

interface DnsJson {
  Status?: number;
  Answer?: { type?: number; data?: string }[];
}

/** The A / AAAA addresses in a DNS JSON answer (CNAME hops and other records left out). */
export function addressesIn(answer: DnsJson): string[] {
  if (answer.Status !== 0) return [];
  return (answer.Answer ?? [])
    .filter((r) => (r.type === A || r.type === AAAA) && typeof r.data === 'string')
    .map((r) => r.data as string);
}

/**
 * A resolver over `url`. A name with no address is an error (the guard then treats it as it is
 * told); a resolver that does not answer is an error too, never an empty "safe" list.
 */
export function dohResolver(url = DEFAULT_DOH_URL, fetchImpl: typeof fetch = fetch): Resolver {
  const cache = new Map<string, { at: number; ips: string[] }>();
  const ask = async (name: string, type: 'A' | 'AAAA'): Promise<string[]> => {
    const q = new URL(url);
    q.searchParams.set('name', name);
    q.searchParams.set('type', type);
    const res = await fetchImpl(q.toString(), {
      headers: { accept: 'application/dns-json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(5_000),
    });
    if (res.status !== 200) throw new Error(`the DNS resolver answered ${res.status}`);
    return addressesIn((await res.json()) as DnsJson);
  };
  return async (host) => {
    const hit = cache.get(host);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.ips;
    const [v4, v6] = await Promise.all([ask(host, 'A'), ask(host, 'AAAA')]);
    const ips = [...v4, ...v6];
    if (ips.length === 0) throw new Error(`${host} has no address`);
    cache.set(host, { at: Date.now(), ips });
    return ips;
  };
}
