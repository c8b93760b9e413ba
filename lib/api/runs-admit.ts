/**
 * Admitting a run start or resume: a place among the key's runs in progress (429 when it has its
 * most), and the launch, whose refusal (LaunchError) is answered as JSON with the run id.
 */
import type { Context } from 'hono';
import type { ExecutionInput } from '../runs/run-records.ts';
import type { RunsApiDeps } from './runs.ts';

type Env = { Variables: { tenant: string } };

/**
 * A place for one more run of the key (release it once the run is launched, or not), or the 429
 * when the key already has its most runs in progress. Starts not yet launched count as well: each
 * request counts itself before its first await, so requests sent together cannot all slip in.
 */
export async function reserveRun(
  c: Context<Env>,
  deps: RunsApiDeps,
  starting: Map<string, number>,
): Promise<{ release: () => void } | { refused: Response }> {
  const most = deps.limits?.runsPerTenant;
  if (!most || !deps.activeRuns) return { release: () => undefined };
  const tenant = c.get('tenant');
  const before = starting.get(tenant) ?? 0;
  starting.set(tenant, before + 1);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    const left = (starting.get(tenant) ?? 1) - 1;
    if (left > 0) starting.set(tenant, left);
    else starting.delete(tenant);
  };
  // A start launched meanwhile may be counted twice (here and as active): never once too few.
  if ((await deps.activeRuns(tenant)) + before < most) return { release };
  release();
  const refused = c.json(
    {
      error: {
        kind: 'limit',
        message: `this API key already has ${most} run${most === 1 ? '' : 's'} in progress, the most one key may have at once (BROWSERFN_MAX_RUNS_PER_KEY); start this one when one of them has finished or been cancelled`,
        retryable: true,
      },
    },
    429,
    { 'retry-after': '30' },
  );
  return { refused };
}

/**
 * A launch that did not start: `conflict` when an execution of the run already runs (409),
 * `unavailable` when the orchestrator refused to start one (503; the run is marked failed, and a
 * resume may try again).
 */
export class LaunchError extends Error {
  override name = 'LaunchError';
  constructor(
    readonly kind: 'conflict' | 'unavailable',
    message: string,
  ) {
    super(message);
  }
}

/** Launches the run; a LaunchError becomes its JSON answer (with the run id), anything else throws. */
export async function launchOrAnswer(c: Context<Env>, deps: RunsApiDeps, input: ExecutionInput) {
  try {
    await deps.launch(input);
    return undefined;
  } catch (err) {
    if (!(err instanceof LaunchError)) throw err;
    return c.json(
      { error: { kind: err.kind, message: err.message }, runId: input.runId },
      err.kind === 'conflict' ? 409 : 503,
    );
  }
}
