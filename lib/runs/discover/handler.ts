/**
 * The Discover task of the run state machine: read the run's listing pages on one guarded page, store
 * the found URLs as the Map's item source and as the run's samples (`d000001`, …), and hand the Map the
 * small input it starts from — sample ids inline locally, an S3 key on AWS, never the URLs themselves.
 */
import { z } from 'zod';
import { assertNavigable } from '../../browser/guard.ts';
import { openSession } from '../../browser/session.ts';
import type { RunDeps } from '../run-deps.ts';
import { type ExecutionInput, executionInput, loadSpec, sampleRecords } from '../run-records.ts';
import { discover } from './discover.ts';
import { discoveredSamples, writeItemSource } from './item-source.ts';

const DiscoverEvent = z.object({
  tenant: z.string().min(1),
  runId: z.string().min(1),
  concurrency: z.number().int().min(1).optional(),
});

export function discoverHandler(deps: RunDeps) {
  return async function discoverState(event: unknown): Promise<ExecutionInput> {
    const parsed = DiscoverEvent.safeParse(event);
    if (!parsed.success) {
      const i = parsed.error.issues[0];
      throw new Error(`discover event ${i?.path.join('.') || '(root)'}: ${i?.message}`);
    }
    const { tenant, runId } = parsed.data;
    const run = await deps.runStore.getRun(tenant, runId);
    if (!run) throw new Error(`run ${runId} not found`);
    const spec = await loadSpec(deps.evidence, run);
    if (!spec.discovery) throw new Error(`run ${runId} has no discovery block in its task spec`);
    const concurrency = parsed.data.concurrency ?? spec.concurrency;
    const llm = spec.discovery.instruction ? await deps.llmFor(spec.model) : undefined;
    const session = await openSession({ browser: await deps.browser(), policy: deps.policy });
    let urls: string[];
    try {
      const found = await discover(spec.discovery, {
        page: session.page,
        checkNavigation: (url) => assertNavigable(url, deps.policy),
        ...(llm ? { llm } : {}),
        log: (e) => deps.log?.({ level: 'info', runId, ...e }),
      });
      urls = found.urls;
      deps.log?.({
        level: 'info',
        msg: 'discovery done',
        runId,
        urls: urls.length,
        listingPages: found.listingPages,
        truncated: found.truncated,
        ms: found.ms,
        tokens: found.tokens,
      });
    } finally {
      await session.close();
    }
    await writeItemSource(deps.evidence, tenant, runId, urls);
    const samples = discoveredSamples(urls).map((s) => ({ ...s, input: {} }));
    await deps.runStore.putSamples(sampleRecords(tenant, runId, samples, new Date().toISOString()));
    return executionInput(
      deps.evidence,
      tenant,
      runId,
      concurrency,
      samples.map((s) => s.sampleId),
      deps.items,
    );
  };
}
