/**
 * Compiling a stored sample (issue 23 item 3, `POST /v1/workflows/compile` and
 * `browserfn workflow compile <run-id>/<sample-id>`): what the sample left in the stores — its result
 * record, and for an agent sample the action log and result.json it wrote as evidence — read back and
 * handed to the compilers. An extract-mode sample is re-read on its URL to derive the extractor; an
 * agent sample whose result has data is checked on its final page, opened fresh. Everything is read
 * through the tenant's own keys: another tenant's run is simply not found.
 */
import type { Page } from 'playwright-core';
import { policyFromEnv } from '../browser/guard-policy.ts';
import { sampleEvidenceKey } from '../store/keys.ts';
import type { EvidenceStore, Json, JsonObject, RunStore } from '../store/ports.ts';
import { CompileError, type CompileOptions, compileAgentSample, compileExtractSample } from './compile.ts';
import type { Workflow } from './schema.ts';

/** No such run / sample for this tenant. */
export class SampleNotFound extends Error {
  override name = 'SampleNotFound';
}

export interface StoredSampleSource {
  runStore: RunStore;
  evidence: EvidenceStore;
}

/** Opens a fresh page on `url` (guarded), runs `fn` on it and closes it. */
export type WithPage = <T>(url: string, fn: (page: Page) => Promise<T>) => Promise<T>;

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

async function readJson(evidence: EvidenceStore, key: string, what: string): Promise<unknown> {
  const bytes = await evidence.get(key);
  if (!bytes)
    throw new CompileError(`the sample has no ${what} in its evidence, so there is nothing to compile`);
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new CompileError(`the sample's ${what} is not JSON`);
  }
}

/** What the task asked, from the run's spec, else from the sample's checkpoint (a `/v1/agent` call). */
async function taskOf(
  src: StoredSampleSource,
  tenant: string,
  runId: string,
  sampleId: string,
): Promise<{
  mode: string;
  goal?: string;
  schema?: Record<string, unknown>;
  input: Record<string, string>;
  url?: string;
}> {
  const [run, sample] = await Promise.all([
    src.runStore.getRun(tenant, runId),
    src.runStore.getSample(tenant, runId, sampleId),
  ]);
  const spec = run?.spec ?? {};
  let goal = typeof spec.goal === 'string' ? spec.goal : undefined;
  let input = sample?.input ?? {};
  if (!goal) {
    const state = (await src.runStore.loadCheckpoint(tenant, runId, sampleId))?.state;
    const task = isObject(state?.task) ? state.task : undefined;
    if (typeof task?.goal === 'string') goal = task.goal;
    if (!sample && isObject(state?.input)) input = state.input as Record<string, string>;
  }
  return {
    mode: typeof spec.mode === 'string' ? spec.mode : 'agent',
    ...(goal ? { goal } : {}),
    ...(isObject(spec.outputSchema) ? { schema: spec.outputSchema as Record<string, unknown> } : {}),
    input,
    ...(sample ? { url: sample.url } : {}),
  };
}

const hasData = (data: Json | undefined) => isObject(data) && Object.keys(data).length > 0;

/**
 * The sample as a workflow. `SampleNotFound` when the tenant has no such sample (or it has not ended);
 * `CompileError` naming why when it cannot compile (it failed, it left no actions, …).
 */
export async function compileStoredSample(
  src: StoredSampleSource,
  ref: { tenant: string; runId: string; sampleId: string; name?: string },
  withPage: WithPage,
  given: CompileOptions = {},
): Promise<Workflow> {
  const { tenant, runId, sampleId } = ref;
  // Whether replay can read without a browser is checked under the operator's policy from the
  // environment unless the caller gives one (the strictest the process has).
  const opts: CompileOptions = { staticCheck: given.staticCheck ?? { policy: policyFromEnv() } };
  const result = await src.runStore.getResult(tenant, runId, sampleId);
  if (!result) {
    const sample = await src.runStore.getSample(tenant, runId, sampleId);
    if (sample)
      throw new CompileError(
        `sample ${sampleId} has not finished (${sample.status}); compile it once it is done`,
      );
    throw new SampleNotFound(`no sample "${sampleId}" in run "${runId}"`);
  }
  if (result.status !== 'done')
    throw new CompileError(
      `sample ${sampleId} did not succeed (status ${result.status}${result.reason ? `: ${result.reason}` : ''}); only a successful sample compiles`,
    );
  const task = await taskOf(src, tenant, runId, sampleId);
  // Named after its sample by default, so two samples compiled without an id are two workflows.
  const base = { runId, sampleId, input: task.input, name: ref.name ?? `compiled from ${runId}/${sampleId}` };
  if (task.mode === 'extract') {
    if (!task.url) throw new CompileError(`sample ${sampleId} has no URL to read the page again`);
    const sampleUrl = task.url;
    return withPage(sampleUrl, (page) =>
      compileExtractSample(
        page,
        {
          ...base,
          url: sampleUrl,
          instruction: task.goal ?? 'the data the task asked for',
          ...(task.schema ? { schema: task.schema } : {}),
          data: result.data,
          status: result.status,
        },
        opts,
      ),
    );
  }
  const key = (file: string) => sampleEvidenceKey(tenant, runId, sampleId, file);
  const actionLog = await readJson(src.evidence, key('action_log.json'), 'action log');
  const resultJson = await readJson(src.evidence, key('result.json'), 'result.json');
  if (Array.isArray(actionLog) && actionLog.length === 0)
    throw new CompileError(`sample ${sampleId} logged no actions, so there is nothing to replay`);
  const sample = { ...base, actionLog, result: resultJson, ...(task.goal ? { goal: task.goal } : {}) };
  // The data is pinned as an extractor checked on the page the sample ended on, opened fresh.
  const finalUrl = isObject(resultJson) && typeof resultJson.url === 'string' ? resultJson.url : task.url;
  if (!hasData(result.data) || !finalUrl) return compileAgentSample(sample);
  return withPage(finalUrl, (page) => compileAgentSample(sample, { page, ...opts }));
}
