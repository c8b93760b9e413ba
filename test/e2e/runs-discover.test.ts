import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { closeSharedBrowser } from '../../lib/browser/session.ts';
import { readItemSource } from '../../lib/runs/discover/item-source.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { evidenceKey } from '../../lib/store/keys.ts';
import { verifyRun } from '../../lib/store/manifest-store.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { runDeps, tempStores, titleModel } from '../support/runs-env.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let stores: Awaited<ReturnType<typeof tempStores>>;

beforeAll(async () => {
  [browser, site, llm, stores] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    tempStores(),
  ]);
  titleModel(llm);
});
afterAll(async () => {
  await closeSharedBrowser();
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await stores?.cleanup();
});

describe('a run that discovers its samples', () => {
  it('Discover reads the paginated listing, the Map fans out over the found URLs, Merge totals them', async () => {
    const tenant = 'acme';
    const spec = parseTaskSpec({
      goal: 'the product name shown as the page title',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      requiredFields: ['title'],
      concurrency: 3,
      // 3 pages of 4 items; each page repeats the previous page's last item: 12 distinct products.
      discovery: { listings: [`${site.url}/listing.html?pages=3&per=4`], include: '*/products/item-*' },
    });
    const input = await createRun(stores.runStore, stores.evidence, { tenant, spec, samples: [] });
    // The execution input names no samples yet, only that they are to be discovered.
    expect(input).toEqual({ tenant, runId: input.runId, concurrency: 3, discovery: true });

    const log: Record<string, unknown>[] = [];
    const handlers = runHandlers(runDeps(stores, browser, site, llm, { log: (e) => log.push(e) }));
    const out = (await startLocalRun(input, handlers, { retryPauseMs: 1 }).result) as {
      counts: Record<string, number>;
    };
    expect(out.counts).toMatchObject({ done: 12, failed: 0 });

    const samples = await stores.runStore.listSamples(tenant, input.runId);
    expect(samples).toHaveLength(12);
    expect(samples[0]).toMatchObject({ sampleId: 'd000001', url: `${site.url}/products/item-1.html` });
    expect(samples[11]).toMatchObject({ sampleId: 'd000012', url: `${site.url}/products/item-12.html` });
    // The item source in the evidence store lists the same URLs (the Distributed Map's ItemReader on AWS).
    expect((await readItemSource(stores.evidence, tenant, input.runId)).map((s) => s.url)).toEqual(
      samples.map((s) => s.url),
    );

    const results = await stores.runStore.listResults(tenant, input.runId);
    expect(results).toHaveLength(12);
    expect(results.find((r) => r.sampleId === 'd000007')?.data).toEqual({ title: 'Item 7' });
    expect(llm.requests).toHaveLength(12);

    const csv = await stores.evidence.get(evidenceKey(tenant, input.runId, 'combined.csv'));
    const rows = parse(Buffer.from(csv!).toString('utf8'), { columns: true }) as Record<string, string>[];
    expect(rows).toHaveLength(12);
    expect(rows.map((r) => r.title)).toEqual(Array.from({ length: 12 }, (_, i) => `Item ${i + 1}`));
    expect(rows.every((r) => r.status === 'done')).toBe(true);
    expect(log.find((e) => e.msg === 'discovery done')).toMatchObject({ runId: input.runId, urls: 12 });
    // The discovered URL list is sealed in the manifest with everything else.
    const run = await stores.runStore.getRun(tenant, input.runId);
    expect(await verifyRun(stores.evidence, tenant, input.runId, run?.manifestHead)).toMatchObject({
      ok: true,
    });
  });

  it('browserfn run --task with a discovery block needs no --input: the listing gives the samples', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bfn-cli-disc-'));
    Object.assign(process.env, {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: llm.openaiBaseURL,
      BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
    });
    try {
      const task = join(dir, 'spec.json');
      await writeFile(
        task,
        JSON.stringify({
          goal: 'the product name shown as the page title',
          outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
          discovery: {
            listings: [`${site.url}/listing.html?pages=2&per=3`],
            linkSelector: 'a.item',
            maxUrls: 5,
          },
        }),
      );
      const { runCommand } = await import('../../lib/cli/run.ts');
      const lines: string[] = [];
      const code = await runCommand(['--task', task, '--out', dir], (l) => lines.push(l));
      expect(code).toBe(0);
      expect(lines.some((l) => / done: 5 done$/.test(l))).toBe(true);
      const csvPath = lines.find((l) => l.startsWith('combined.csv: '))!.slice('combined.csv: '.length);
      const rows = parse(await readFile(csvPath, 'utf8'), { columns: true }) as Record<string, string>[];
      // 2 pages of 3 (6 distinct items), capped at 5.
      expect(rows.map((r) => [r.sample_id, r.title])).toEqual([
        ['d000001', 'Item 1'],
        ['d000002', 'Item 2'],
        ['d000003', 'Item 3'],
        ['d000004', 'Item 4'],
        ['d000005', 'Item 5'],
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
