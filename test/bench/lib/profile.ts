/**
 * Self time of a V8 CPU profile (CDP Profiler.stop), summed by function and by kind of work, for
 * bench:snapshot's first-read profile. DOM calls show up under their own names (getComputedStyle,
 * getBoundingClientRect…), and a forced style or layout is billed to the call that forced it.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileSummary {
  totalMs: number;
  /** ms by kind: style reads, geometry/layout, text and attribute reads, JSON, GC, idle, compile, script. */
  kinds: Record<string, number>;
  /** The functions with the most self time: [name, ms]. */
  top: [string, number][];
}

const KINDS: [string, RegExp][] = [
  [
    'style',
    /^(getComputedStyle|getPropertyValue|display|visibility|opacity|cursor|position|overflow\w*|pointerEvents|contentVisibility)$/,
  ],
  [
    'geometry',
    /^(getBoundingClientRect|getClientRects|checkVisibility|offset\w+|client\w+|scroll(Width|Height|Top|Left)|elementFromPoint|elementsFromPoint)$/,
  ],
  ['json', /^(stringify|parse)$/],
  ['gc', /^\(garbage collector\)$/],
  ['idle', /^\((idle|program|root)\)$/],
];

export function kindOf(name: string, url: string): string {
  for (const [kind, re] of KINDS) if (re.test(name)) return kind;
  // Our collector is evaluated without a URL; native DOM getters too, but they matched above or
  // are billed as other DOM reads (textContent, attributes, tagName…).
  return url ? 'page scripts' : 'collector + other DOM reads';
}

const r1 = (x: number) => Math.round(x * 10) / 10;

export function profileByKind(profile: CpuProfile, topN = 10): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // timeDeltas[i] is the time before sample i; it is billed to the node of sample i - 1.
  for (let i = 1; i < samples.length; i++)
    selfUs.set(samples[i - 1]!, (selfUs.get(samples[i - 1]!) ?? 0) + (deltas[i] ?? 0));
  const kinds: Record<string, number> = {};
  const byName = new Map<string, number>();
  let total = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    const name = n.callFrame.functionName || '(anonymous)';
    const kind = kindOf(name, n.callFrame.url);
    kinds[kind] = (kinds[kind] ?? 0) + us / 1000;
    byName.set(name, (byName.get(name) ?? 0) + us / 1000);
    total += us / 1000;
  }
  return {
    totalMs: r1(total),
    kinds: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, r1(v)])),
    top: [...byName.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, topN)
      .map(([n, ms]) => [n, r1(ms)]),
  };
}
