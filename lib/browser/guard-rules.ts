/**
 * The network guard's rules, with no I/O of their own: which addresses are off limits, what the
 * operator opened, and whether a URL may load given a resolver. Web-standard only (the edge worker
 * uses it with a DNS-over-HTTPS resolver); guard.ts adds the system resolver for Node.
 */
import ipaddr from 'ipaddr.js';
import type { GuardPolicy } from './guard-policy.ts';

export type GuardVerdict = { ok: true } | { ok: false; rule: string; message: string; url: string };
export type Resolver = (host: string) => Promise<string[]>;

export class NetworkBlockedError extends Error {
  override name = 'NetworkBlockedError';
  constructor(
    readonly url: string,
    readonly rule: string,
    message: string,
  ) {
    super(message);
  }
}

const V4_RULES: Record<string, string> = {
  unspecified: 'unspecified address',
  broadcast: 'broadcast address',
  multicast: 'multicast address',
  linkLocal: 'link-local / cloud metadata address',
  loopback: 'loopback address',
  carrierGradeNat: 'carrier-grade NAT address',
  private: 'private address (RFC 1918)',
  reserved: 'reserved address',
};

const V6_RULES: Record<string, string> = {
  unspecified: 'unspecified address',
  linkLocal: 'link-local address (IPv6)',
  multicast: 'multicast address',
  loopback: 'loopback address',
  uniqueLocal: 'unique local address (IPv6)',
  reserved: 'reserved address',
  teredo: 'Teredo tunnel address',
  benchmarking: 'benchmarking address',
  orchid2: 'reserved address',
  discard: 'discard-only address',
};

function embeddedV4(v6: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range = v6.range();
  const p = v6.parts;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address();
  const v4From = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  // NAT64 (64:ff9b::/96) and the old IPv4-compatible form (::a.b.c.d) carry the address in the last 32 bits.
  if (
    range === 'rfc6052' ||
    (p[0] === 0 && p[1] === 0 && p[2] === 0 && p[3] === 0 && p[4] === 0 && p[5] === 0)
  )
    return v4From(p[6]!, p[7]!);
  // 6to4 (2002::/16) carries it in bits 16–48.
  if (range === '6to4') return v4From(p[1]!, p[2]!);
  return undefined;
}

const METADATA = ['169.254.0.0/16', 'fd00:ec2::254/128', '100.100.100.200/32'];

/** Cloud instance metadata endpoints (AWS, GCP, Azure, Alibaba): credentials live there. */
export function isMetadata(ip: string): boolean {
  try {
    let addr = ipaddr.parse(ip.replace(/^\[|\]$/g, ''));
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress())
      addr = (addr as ipaddr.IPv6).toIPv4Address();
    return METADATA.some((cidr) => {
      const [range, bits] = ipaddr.parseCIDR(cidr);
      return range.kind() === addr.kind() && addr.match([range, bits] as [typeof addr, number]);
    });
  } catch {
    return false;
  }
}

/** Why an address is off limits, or undefined when it is an ordinary public unicast address. */
export function classifyAddress(ip: string): { blocked: boolean; rule?: string } {
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, ''));
  } catch {
    return { blocked: true, rule: 'unparseable address' };
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6;
    const range = v6.range();
    if (range === 'loopback' || range === 'unspecified') return { blocked: true, rule: V6_RULES[range]! };
    const inner = embeddedV4(v6);
    if (inner) {
      const r = classifyAddress(inner.toString());
      return r.blocked ? { blocked: true, rule: `${r.rule} inside an IPv6 address` } : { blocked: false };
    }
    if (range === 'unicast') return { blocked: false };
    return { blocked: true, rule: V6_RULES[range] ?? `${range} address` };
  }
  const range = (addr as ipaddr.IPv4).range();
  if (range === 'unicast') return { blocked: false };
  return { blocked: true, rule: V4_RULES[range] ?? `${range} address` };
}

function inCidr(ip: string, cidr: string): boolean {
  try {
    const [range, bits] = ipaddr.parseCIDR(cidr);
    const addr = ipaddr.parse(ip);
    if (addr.kind() !== range.kind()) return false;
    return addr.match([range, bits] as [typeof addr, number]);
  } catch {
    return false;
  }
}

/** Is `host[:port]` (or its resolved IP) on the operator's allow-list? */
export function isAllowed(policy: GuardPolicy, host: string, port: string, ip?: string): boolean {
  const h = host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
  for (const raw of policy.allowHosts) {
    const entry = raw.toLowerCase();
    if (entry.includes('/')) {
      if (inCidr(ip ?? h, entry)) return true;
      continue;
    }
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) continue;
    const name = m[1]!.replace(/^\[|\]$/g, '');
    if (m[2] && m[2] !== port) continue;
    if (name.startsWith('*.') ? h.endsWith(name.slice(1)) : h === name || ip === name) return true;
  }
  return false;
}

/** Is this exact page (origin + path, any query) on the operator's list? */
export function isAllowedPage(policy: GuardPolicy, url: URL): boolean {
  return (policy.allowUrls ?? []).some((entry) => {
    try {
      const allowed = new URL(entry);
      return allowed.origin === url.origin && allowed.pathname === url.pathname;
    } catch {
      return false;
    }
  });
}

const DOCUMENT_SCHEMES = new Set(['about:', 'data:', 'blob:']);

const blocked = (url: string, rule: string, detail: string): GuardVerdict => ({
  ok: false,
  rule,
  url,
  message: `Blocked request to ${url}: ${rule}${detail}. Allow it with BROWSERFN_ALLOW_HOSTS if this is intended.`,
});

/**
 * Why `host:port`, resolved to `ip`, is off limits (the rule), or undefined when it may be reached.
 * allowPrivate opens the operator's own network, never the cloud metadata service: that one has to
 * be named in the allow-list on purpose.
 */
export function addressRefused(
  policy: GuardPolicy,
  host: string,
  port: string,
  ip: string,
): string | undefined {
  const c = classifyAddress(ip);
  if (!c.blocked || isAllowed(policy, host, port, ip)) return undefined;
  if (policy.allowPrivate && !isMetadata(ip)) return undefined;
  return c.rule!;
}

/**
 * May a page load this URL? Canonicalises the host the way the browser will (WHATWG URL turns
 * `2130706433`, `0x7f.1` and `0177.0.0.1` into 127.0.0.1), checks IP literals directly, resolves
 * names and refuses if any address they resolve to is off limits.
 */
export async function checkUrl(input: string, policy: GuardPolicy, resolve: Resolver): Promise<GuardVerdict> {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return blocked(input, 'not a valid URL', '');
  }
  if (DOCUMENT_SCHEMES.has(url.protocol)) return { ok: true };
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return blocked(input, `${url.protocol.replace(':', '')} URLs are not allowed`, '');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (isAllowed(policy, host, port) || isAllowedPage(policy, url)) return { ok: true };
  const refused = (ip: string) => addressRefused(policy, host, port, ip);
  if (ipaddr.isValid(host)) {
    const rule = refused(host);
    return rule ? blocked(input, rule, ` (${host})`) : { ok: true };
  }
  const name = host.replace(/\.$/, '');
  if ((name === 'localhost' || name.endsWith('.localhost')) && !policy.allowPrivate)
    return blocked(input, 'loopback address', ` (${name})`);
  let ips: string[];
  try {
    ips = await resolve(name);
  } catch {
    // Unresolvable: the browser will fail on its own; nothing private can be reached through it.
    return { ok: true };
  }
  for (const ip of ips) {
    const rule = refused(ip);
    if (rule) return blocked(input, rule, ` (${name} resolves to ${ip})`);
  }
  return { ok: true };
}

export async function assertNavigable(url: string, policy: GuardPolicy, resolve: Resolver): Promise<void> {
  const v = await checkUrl(url, policy, resolve);
  if (!v.ok) throw new NetworkBlockedError(v.url, v.rule, v.message);
}
