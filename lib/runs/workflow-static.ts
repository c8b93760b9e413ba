/**
 * Mode "workflow" reads a page from its served HTML, without a browser, when the workflow's compile
 * check marked it so (lib/workflows/static-read.ts) and the run does not sign in (an auth profile's
 * cookies would not go with a plain fetch). Right or nothing: any miss sends the page to the browser,
 * and the first page a worker process reads this way in a run, then one in `every`, is read in the
 * browser as well — the first difference turns the served-HTML path off for that run in this process.
 */
import type { GuardPolicy } from '../browser/guard-policy.ts';
import type { OnThrottle } from '../browser/navigate.ts';
import { redactText } from '../perception/redact.ts';
import type { Workflow } from '../workflows/schema.ts';
import { replayStatic, StaticGate, staticReadable } from '../workflows/static-read.ts';
import type { WorkflowState } from '../workflows/types.ts';

export interface RunStaticRead {
  policy: GuardPolicy;
  /** The run's samples load an auth profile: read in the browser. */
  authenticated: boolean;
  /** One in this many pages read from HTML is read in the browser too (default 50; 0: never). */
  recheckEvery?: number;
}

/** One gate per run in this process; old runs' gates are dropped (a gate only ever turns the path off). */
const gates = new Map<string, StaticGate>();
const MAX_GATES = 200;
function gateFor(key: string, every: number): StaticGate {
  let gate = gates.get(key);
  if (!gate) {
    if (gates.size >= MAX_GATES) gates.delete(gates.keys().next().value as string);
    gate = new StaticGate(every);
    gates.set(key, gate);
  }
  return gate;
}

export type StaticAttempt =
  /** Read from the served HTML: `state` is the finished workflow state. */
  | { path: 'static-html'; state: WorkflowState }
  /** Read it in the browser; `compare` (a re-check) takes the browser's data once it is done. */
  | { path: 'browser'; why?: string; compare?: (browserData: unknown) => boolean }
  /** The site kept asking us to come back later: the sample fails saying so, with no browser asking again. */
  | { path: 'refused'; why: string };

export async function tryStaticRead(
  workflow: Workflow,
  init: {
    tenant: string;
    runId: string;
    sampleId: string;
    workflowId?: string;
    inputs: Record<string, string>;
    url: string;
  },
  opts: RunStaticRead & {
    variables?: Record<string, string>;
    signal?: AbortSignal;
    onThrottle?: OnThrottle;
  },
): Promise<StaticAttempt> {
  if (!staticReadable(workflow)) return { path: 'browser' };
  const gate = gateFor(`${init.tenant}\u0000${init.runId}`, opts.recheckEvery ?? 50);
  if (gate.off) return { path: 'browser', why: gate.off };
  const got = await replayStatic(workflow, init, {
    policy: opts.policy,
    authenticated: opts.authenticated,
    ...(opts.variables ? { variables: opts.variables } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onThrottle ? { onThrottle: opts.onThrottle } : {}),
  });
  if (!got.ok)
    return got.refused ? { path: 'refused', why: got.reason } : { path: 'browser', why: got.reason };
  if (!gate.recheckNow()) return { path: 'static-html', state: got.state };
  const page = redactText(init.url, opts.variables);
  return {
    path: 'browser',
    why: 're-check: this page is read in the browser too',
    compare: (browserData) => gate.compare(page, got.state.data, browserData),
  };
}
