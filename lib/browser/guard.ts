import { lookup } from 'node:dns/promises';
import type { GuardPolicy } from './guard-policy.ts';
import {
  checkUrl as checkUrlWith,
  type GuardVerdict,
  NetworkBlockedError,
  type Resolver,
} from './guard-rules.ts';

export {
  addressRefused,
  classifyAddress,
  type GuardVerdict,
  isAllowed,
  isAllowedPage,
  isMetadata,
  NetworkBlockedError,
  type Resolver,
} from './guard-rules.ts';

const dnsCache = new Map<string, { at: number; ips: string[] }>();
const DNS_TTL_MS = 30_000;

export const systemResolver: Resolver = async (host) => {
  const hit = dnsCache.get(host);
  if (hit && Date.now() - hit.at < DNS_TTL_MS) return hit.ips;
  const ips = (await lookup(host, { all: true, verbatim: true })).map((r) => r.address);
  dnsCache.set(host, { at: Date.now(), ips });
  return ips;
};

/** guard-rules.ts's `checkUrl`, resolving names with the system resolver unless told otherwise. */
export function checkUrl(
  input: string,
  policy: GuardPolicy,
  resolve: Resolver = systemResolver,
): Promise<GuardVerdict> {
  return checkUrlWith(input, policy, resolve);
}

export async function assertNavigable(url: string, policy: GuardPolicy, resolve?: Resolver): Promise<void> {
  const v = await checkUrl(url, policy, resolve);
  if (!v.ok) throw new NetworkBlockedError(v.url, v.rule, v.message);
}
