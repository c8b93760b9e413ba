/**
 * One workflow on one URL, to its end (`POST /v1/workflows/{id}/run`, `browserfn workflow run`): the
 * executor on a page the caller opened, then what a stored workflow learns from it — a confirmed heal
 * written as the next version (the old one kept), and the outcome counted towards "verified". The
 * answer is the same for the API and the CLI, with every secret value scrubbed out of it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { type GuardPolicy, policyFromEnv } from '../browser/guard-policy.ts';
import { redactText } from '../perception/redact.ts';
import type { Json, JsonObject } from '../store/ports.ts';
import type { WorkflowStore } from '../store/workflow-ports.ts';
import { runWorkflow } from './executor.ts';
import { applyHeals } from './heal.ts';
import type { Workflow } from './schema.ts';
import { afterHeal, replayStatic, runStaticFirst, type StaticGate, staticReadable } from './static-read.ts';
import type {
  HealRecord,
  NodeError,
  NodeResolvedBy,
  NodeResult,
  WorkflowDeps,
  WorkflowState,
} from './types.ts';

export interface NodeView {
  status: NodeResult['status'];
  resolvedBy: NodeResolvedBy;
  usage: { promptTokens: number; completionTokens: number; calls: number };
  ms: number;
  error?: NodeError;
}

export interface WorkflowRunAnswer {
  /** `failed`: the workflow ran and a node failed (`failedAt`, `reason`); the caller's request was fine. */
  status: 'done' | 'failed' | 'running';
  reason?: string;
  failedAt?: string;
  data: JsonObject;
  /** Per alias (`alias[i]` inside iterations). */
  results: Record<string, NodeView>;
  usage: WorkflowState['usage'];
  heals: HealRecord[];
  /** The version that ran. */
  version: number;
  /** The version a confirmed heal was saved as, when one was written. */
  healedVersion?: number;
  url: string;
  /** Which path read the page: its served HTML in Node, or the browser. */
  readBy?: 'static-html' | 'browser';
  /** Why a workflow marked readable without a browser was run in the browser for this page. */
  staticFallback?: string;
}

/** Pure: the run's state as the answer, secrets scrubbed from every string of it. */
export function runAnswer(
  state: WorkflowState,
  version: number,
  variables?: Record<string, string>,
): WorkflowRunAnswer {
  const results: Record<string, NodeView> = {};
  for (const [alias, r] of Object.entries(state.results))
    results[alias] = {
      status: r.status,
      resolvedBy: r.resolvedBy,
      usage: {
        promptTokens: r.usage.promptTokens,
        completionTokens: r.usage.completionTokens,
        calls: r.usage.calls,
      },
      ms: r.ms,
      ...(r.error ? { error: r.error } : {}),
    };
  const answer: WorkflowRunAnswer = {
    status: state.status,
    ...(state.reason ? { reason: state.reason } : {}),
    ...(state.failedAt ? { failedAt: state.failedAt } : {}),
    data: state.data,
    results,
    usage: state.usage,
    heals: state.heals,
    version,
    url: state.url,
  };
  if (!variables || Object.values(variables).every((v) => !v)) return answer;
  return JSON.parse(redactText(JSON.stringify(answer), variables)) as WorkflowRunAnswer;
}

/** Pure: what a success looked like — the data's shape (keys and types), not its values. */
export function outcomeSignature(data: Json): string {
  const shape = (v: Json): Json =>
    Array.isArray(v)
      ? ['array', v.length > 0 ? shape(v[0]!) : null]
      : v && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, shape(v[k]!)]),
          )
        : typeof v;
  return createHash('sha256')
    .update(JSON.stringify(shape(data)))
    .digest('hex')
    .slice(0, 16);
}

/** Pure: the note a healed version carries. */
export const healNote = (heals: readonly HealRecord[]) =>
  `healed ${heals
    .filter((h) => h.confirmed)
    .map((h) => `${h.alias} (${h.via}: ${h.reason})`)
    .join('; ')}`.slice(0, 1000);

export interface RunOneInput {
  tenant: string;
  workflow: Workflow;
  url: string;
  inputs?: JsonObject;
  deps: WorkflowDeps;
  /** The stored workflow this is: heals are written as its next version, outcomes counted. */
  stored?: { store: WorkflowStore; id: string };
  runId?: string;
  /**
   * Reading without a browser (static-read.ts): a workflow marked `staticRead` tries the page's
   * served HTML first, fetched under `policy`; `authenticated` (the run signs in) keeps it in the
   * browser. Absent: under the operator's policy from the environment (BROWSERFN_ALLOW_*), the
   * strictest the process has; `false`: the browser reads every page.
   */
  staticRead?: { policy: GuardPolicy; gate?: StaticGate; authenticated?: boolean } | false;
  /**
   * `runServedOnly` already tried the served HTML and missed, for this reason: the page is read in
   * the browser at once (not fetched twice), and the answer says why.
   */
  servedMiss?: string;
}

const stateInit = (input: Pick<RunOneInput, 'tenant' | 'runId' | 'stored' | 'inputs' | 'url'>) => ({
  tenant: input.tenant,
  runId: input.runId ?? `wfrun_${randomUUID()}`,
  sampleId: 'main',
  ...(input.stored ? { workflowId: input.stored.id } : {}),
  inputs: input.inputs ?? {},
  url: input.url,
});

export interface ServedOnlyInput extends Omit<RunOneInput, 'deps' | 'staticRead' | 'servedMiss'> {
  /** The guard the fetch goes through (default: the operator's, from the environment). */
  policy?: GuardPolicy;
  variables?: Record<string, string>;
  signal?: AbortSignal;
  log?: WorkflowDeps['log'];
}

/**
 * A workflow marked readable from its served HTML, run with no page at all — so no browser context
 * is opened, and none launched, for it: `{ answer }`; `{ servedMiss }` when the served HTML did not
 * do (then open a page and `runWorkflowOnce` with it); `{}` for a workflow not so marked. Only for a
 * caller whose page would start signed out (no auth profile, no cookies): the fetch sends none.
 */
export async function runServedOnly(
  input: ServedOnlyInput,
): Promise<{ answer?: WorkflowRunAnswer; servedMiss?: string }> {
  const { workflow, stored } = input;
  if (!staticReadable(workflow)) return {};
  const got = await replayStatic(workflow, stateInit(input), {
    policy: input.policy ?? policyFromEnv(),
    ...(input.variables ? { variables: input.variables } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  });
  if (!got.ok) {
    input.log?.({ level: 'info', msg: 'read in the browser instead of the served HTML', why: got.reason });
    return { servedMiss: got.reason };
  }
  const answer: WorkflowRunAnswer = {
    ...runAnswer(got.state, workflow.version, input.variables),
    readBy: 'static-html',
  };
  if (stored)
    await stored.store.recordOutcome(input.tenant, stored.id, workflow.version, {
      ok: true,
      signature: outcomeSignature(got.state.data),
    });
  return { answer };
}

/** Writes `next` as the version after the latest (re-read on a race), its document numbered to match. */
async function saveHealed(
  store: WorkflowStore,
  tenant: string,
  id: string,
  next: Workflow,
  parent: number,
  note: string,
): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const latest = await store.getVersion(tenant, id);
    const version = (latest?.version ?? 0) + 1;
    const document = { ...next, version } as unknown as JsonObject;
    if ((await store.putVersion({ tenant, id, version, document, parent, note })) === 'written')
      return version;
  }
  throw new Error(`workflow ${id}: writers raced for the next version; the heal was not saved`);
}

async function holdsCookies(deps: RunOneInput['deps'], url: string): Promise<boolean> {
  try {
    return (await deps.page.context().cookies(url)).length > 0;
  } catch {
    return true; // cannot tell: the browser, which sends whatever it holds
  }
}

/**
 * Runs the workflow to its end (or until `deps.signal` aborts). A stored workflow that finished with
 * confirmed heals gets them as its next version; one that failed writes nothing back (a later
 * failure casts doubt on what the heal found).
 */
export async function runWorkflowOnce(input: RunOneInput): Promise<WorkflowRunAnswer> {
  const { workflow, stored } = input;
  const init = stateInit(input);
  const browser = () => runWorkflow(workflow, init, input.deps);
  const { deps } = input;
  const staticOpts =
    input.staticRead === false || !workflow.staticRead || input.servedMiss !== undefined
      ? undefined
      : (input.staticRead ?? { policy: policyFromEnv() });
  const outcome = staticOpts
    ? await runStaticFirst(workflow, init, {
        ...staticOpts,
        // Cookies the caller's context holds for the page (an auth profile, a session) would not go
        // with the fetch: such a page is read in the browser.
        authenticated: staticOpts.authenticated || (await holdsCookies(deps, input.url)),
        browser,
        ...(deps.variables ? { variables: deps.variables } : {}),
        ...(deps.signal ? { signal: deps.signal } : {}),
        ...(deps.log ? { log: deps.log } : {}),
      })
    : { state: await browser(), path: 'browser' as const };
  const { state } = outcome;
  const answer = runAnswer(state, workflow.version, deps.variables);
  if (staticOpts) {
    answer.readBy = outcome.path;
    if (outcome.fellBack) answer.staticFallback = outcome.fellBack;
  } else if (input.servedMiss !== undefined) {
    answer.readBy = 'browser';
    answer.staticFallback = input.servedMiss;
  }
  if (!stored || state.status === 'running') return answer;
  if (state.status === 'done') {
    const healed = applyHeals(workflow, state.heals);
    // Its extractors changed: checked again against the served HTML on the healed page.
    const next =
      healed && (await afterHeal(healed, deps.page, staticOpts ? { policy: staticOpts.policy } : undefined));
    if (next)
      answer.healedVersion = await saveHealed(
        stored.store,
        input.tenant,
        stored.id,
        next,
        workflow.version,
        healNote(state.heals),
      );
  }
  await stored.store.recordOutcome(input.tenant, stored.id, workflow.version, {
    ok: state.status === 'done',
    signature: outcomeSignature(state.data),
  });
  return answer;
}
