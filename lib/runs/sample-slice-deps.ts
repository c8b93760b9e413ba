/**
 * What one slice of one sample is given: the run's stores (its evidence chained into the sample's
 * manifest part), the run's model, fresh guarded pages with the spec's auth profile loaded, the guard
 * check, the host pacing for a "too many requests" answer, and a log whose lines name the sample.
 */
import { readFile } from 'node:fs/promises';
import type { StorageState } from '../browser/context.ts';
import { assertNavigable } from '../browser/guard.ts';
import { openSession } from '../browser/session.ts';
import { keySegment } from '../store/keys.ts';
import { throttledThenPaced } from './host-pacing.ts';
import { logFor } from './json-log.ts';
import { manifestedEvidence } from './manifested-evidence.ts';
import type { RunDeps } from './run-deps.ts';
import type { SampleRef } from './slice-outcomes.ts';
import type { SliceDeps } from './slice-runner.ts';
import type { TaskSpec } from './task-spec.ts';

/** The spec's auth profile: a file on this machine (the CLI only) or a key in the tenant's store. */
async function authState(deps: RunDeps, tenant: string, spec: TaskSpec): Promise<StorageState | undefined> {
  const profile = spec.authProfile;
  if (!profile) return undefined;
  if (profile.file) {
    if (!deps.allowAuthFiles)
      throw new Error('authProfile.file is not allowed here: store the profile and name its key');
    return JSON.parse(await readFile(profile.file, 'utf8')) as StorageState;
  }
  const key = `${keySegment(tenant)}/${profile.key}`;
  if (profile.key!.split('/').some((p) => p === '..' || p === '.' || p === ''))
    throw new Error(`authProfile.key "${profile.key}" is not a plain key`);
  const raw = await deps.evidence.get(key);
  if (!raw) throw new Error(`authProfile.key "${profile.key}" not found in the evidence store`);
  return JSON.parse(Buffer.from(raw).toString('utf8')) as StorageState;
}

export async function sampleSliceDeps(
  deps: RunDeps,
  spec: TaskSpec,
  ids: SampleRef,
  deadline: number,
): Promise<SliceDeps> {
  const { tenant, runId, sampleId } = ids;
  const storageState = await authState(deps, tenant, spec);
  // A computer-use sample talks to its computer-use model only (its name may be no chat model's).
  const llm = spec.computerUse ? undefined : await deps.llmFor(spec.model);
  const summaryLlm = spec.summaryModel ? await deps.llmFor(spec.summaryModel) : undefined;
  return {
    runStore: deps.runStore,
    // Whatever the slice stores is chained into this sample's manifest part.
    evidence: manifestedEvidence(deps.evidence, tenant, runId, sampleId),
    ...(deps.runMemory ? { runMemory: deps.runMemory } : {}),
    ...(llm ? { llm } : {}),
    ...(summaryLlm ? { summaryLlm } : {}),
    ...(deps.workflows ? { workflows: deps.workflows } : {}),
    newPage: async () => {
      const session = await openSession({
        browser: await deps.browser(),
        policy: deps.policy,
        ...(storageState ? { storageState } : {}),
      });
      return { page: session.page, close: () => session.close() };
    },
    checkNavigation: (url) => assertNavigable(url, deps.policy),
    // The served-HTML read goes through the same guard; a signed-in run stays in the browser.
    ...(spec.mode === 'workflow'
      ? { staticRead: { policy: deps.policy, authenticated: !!storageState } }
      : {}),
    // Every line the sample's code logs names its run and sample.
    onThrottle: (url, retryAfter) =>
      throttledThenPaced(
        deps.log ? { ...deps, log: logFor(deps.log, { runId, sampleId }) } : deps,
        tenant,
        spec,
        url,
        retryAfter,
        deadline,
      ),
    ...(deps.log ? { log: logFor(deps.log, { tenant, runId, sampleId }) } : {}),
  };
}
