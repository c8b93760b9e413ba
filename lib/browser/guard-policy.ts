/** Which private destinations an operator has opened up. Pure data; see guard.ts for the checks. */
export interface GuardPolicy {
  /** Allow every private / loopback / link-local address (for operators on their own network). */
  allowPrivate: boolean;
  /** `host`, `host:port`, `*.suffix`, an IP, or a CIDR such as `10.0.0.0/8`. */
  allowHosts: string[];
  /**
   * Exact pages allowed even if private: same origin and path, any query (the local server's own
   * demo page). Nothing else on that origin is opened by it.
   */
  allowUrls?: string[];
}

export const DEFAULT_POLICY: GuardPolicy = { allowPrivate: false, allowHosts: [] };

export function policyFromEnv(env: NodeJS.ProcessEnv = process.env): GuardPolicy {
  const allowHosts = (env.BROWSERFN_ALLOW_HOSTS ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const allowPrivate = /^(1|true|yes)$/i.test(env.BROWSERFN_ALLOW_PRIVATE ?? '');
  return { allowPrivate, allowHosts };
}

export function mergePolicy(a: GuardPolicy, b: Partial<GuardPolicy>): GuardPolicy {
  return {
    allowPrivate: a.allowPrivate || !!b.allowPrivate,
    allowHosts: [...new Set([...a.allowHosts, ...(b.allowHosts ?? []).map((h) => h.toLowerCase())])],
    ...(a.allowUrls || b.allowUrls
      ? { allowUrls: [...new Set([...(a.allowUrls ?? []), ...(b.allowUrls ?? [])])] }
      : {}),
  };
}
