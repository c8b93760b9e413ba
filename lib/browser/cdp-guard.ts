import ipaddr from 'ipaddr.js';
import { classifyAddress, isAllowed, type Resolver } from './guard-rules.ts';

/**
 * Which remote browsers an API caller may make us connect to. A CDP URL is a connection from our
 * network, like a page load, so the same address rules apply; and since a browser endpoint is
 * not a web page, nothing is open by default: the operator lists the endpoints callers may use.
 */
export interface CdpPolicy {
  /** `BROWSERFN_CDP_ALLOW_HOSTS`: `host`, `host:port`, `*.suffix`, an IP or a CIDR. */
  allowHosts: string[];
}

/**
 * The operator's list, and nothing else. `BROWSERFN_CDP_URL` is not on it by default: that browser
 * runs every tenant's jobs, and a caller attached to it would reach pages of other tenants.
 */
export function cdpPolicyFromEnv(env: NodeJS.ProcessEnv = process.env): CdpPolicy {
  const allowHosts = (env.BROWSERFN_CDP_ALLOW_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  return { allowHosts };
}

/** A cdpUrl we refuse: `invalid` (400, a malformed value) or `blocked` (403, a place we will not go). */
export class CdpRefusedError extends Error {
  override name = 'CdpRefusedError';
  constructor(
    readonly kind: 'invalid' | 'blocked',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Connecting to a browser endpoint failed. The message is ours alone: whatever the other end sent
 * (an error page, a banner, garbage) never reaches it, so a CDP URL cannot be used to read other
 * services' answers.
 */
export class CdpConnectError extends Error {
  override name = 'CdpConnectError';
}

const SCHEMES = new Set(['ws:', 'wss:', 'http:', 'https:']);
const defaultPort = (u: URL) => u.port || (u.protocol === 'wss:' || u.protocol === 'https:' ? '443' : '80');
const bare = (host: string) =>
  host
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();

/** `scheme://host:port` only: paths and query strings of CDP URLs often carry session tokens. */
export function displayCdpUrl(input: string): string {
  try {
    const u = new URL(input);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(unparseable URL)';
  }
}

export interface AdmittedCdpUrl {
  url: URL;
  /** The address checked, to connect to (undefined for a listed `localhost` name). */
  ip?: string;
}

/**
 * May an API caller point us at this browser endpoint? The host must be on the operator's list.
 * A listed IP, CIDR or `localhost` opens exactly that; a
 * listed DNS name is resolved and every address it gives must be public unless an IP or CIDR on
 * the list covers it — a name that resolves to a private, loopback, link-local or metadata
 * address is refused, whatever the name.
 */
export async function checkCdpUrl(
  input: string,
  policy: CdpPolicy,
  // Required: the Node server passes the system resolver, the edge worker a DNS-over-HTTPS one.
  resolve: Resolver,
): Promise<AdmittedCdpUrl> {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new CdpRefusedError('invalid', 'cdpUrl: not a valid URL');
  }
  if (!SCHEMES.has(url.protocol))
    throw new CdpRefusedError('invalid', 'cdpUrl: must be a ws:, wss:, http: or https: URL');
  const host = bare(url.hostname);
  const port = defaultPort(url);
  const shown = displayCdpUrl(input);
  if (!host) throw new CdpRefusedError('invalid', 'cdpUrl: has no host');
  const list = { allowPrivate: false, allowHosts: policy.allowHosts };
  const notListed = () =>
    new CdpRefusedError(
      'blocked',
      `cdpUrl: ${shown} is not one of the operator's browser endpoints (BROWSERFN_CDP_ALLOW_HOSTS)`,
    );
  if (ipaddr.isValid(host)) {
    if (!isAllowed(list, host, port, host)) throw notListed();
    return { url, ip: host };
  }
  const listedByName = isAllowed(list, host, port);
  if (listedByName && (host === 'localhost' || host.endsWith('.localhost'))) return { url };
  // Only an IP or CIDR entry could still admit an unlisted name: without one, not even a lookup.
  if (!listedByName && literalEntries(policy).length === 0) throw notListed();
  let ips: string[];
  try {
    ips = await resolve(host);
  } catch {
    ips = [];
  }
  if (!listedByName && ips.length === 0) throw notListed();
  // Not refused, just not there; connecting anyway would resolve the name again, unchecked.
  if (ips.length === 0)
    throw new CdpConnectError(`cdpUrl: could not connect to the browser at ${shown}: host not found`);
  for (const ip of ips) {
    if (!isAllowed(list, host, port, ip)) throw notListed();
    // A listed IP or CIDR is a deliberate opening; a listed name never reaches a non-public address.
    const c = classifyAddress(ip);
    if (c.blocked && !isAllowed({ allowPrivate: false, allowHosts: literalEntries(policy) }, ip, port, ip))
      throw new CdpRefusedError('blocked', `cdpUrl: ${host} resolves to a ${c.rule} (${ip})`);
  }
  return { url, ip: ips[0]! };
}

/** The list's IP and CIDR entries: the ones that open addresses rather than names. */
function literalEntries(policy: CdpPolicy): string[] {
  return policy.allowHosts.filter((e) => {
    if (e.includes('/')) return true;
    const m = /^(\[[^\]]+\]|[^:]+)(?::\d+)?$/.exec(e);
    return !!m && ipaddr.isValid(m[1]!.replace(/^\[|\]$/g, ''));
  });
}
