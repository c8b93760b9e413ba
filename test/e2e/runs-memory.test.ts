import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { verifyWholeRun } from '../../lib/runs/verify-run.ts';
import { DynamoRunMemoryStore } from '../../lib/store/dynamo-run-memory.ts';
import { evidenceKey, sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalRunMemoryStore } from '../../lib/store/local-run-memory.ts';
import type { RunMemoryEntry, RunMemoryStore } from '../../lib/store/run-memory-ports.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { startBrowser } from '../support/browser.ts';
import { type DetailsSite, detailsModel, priceOf, startDetailsSite } from '../support/details-site.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { runDeps, tempStores } from '../support/runs-env.ts';

/**
 * Memory across the samples of a run: the first sample finds the price behind the "Details" tab by
 * trying tabs; what worked is kept in the run's memory (the store, not the process), and later samples
 * get it as a hint in their first steps and go straight there.
 */

let browser: Browser;
let site: DetailsSite;
let llm: ScriptedModel;
let aws: AwsLocal;
let stores: Awaited<ReturnType<typeof tempStores>>;

beforeAll(async () => {
  [browser, site, llm, aws, stores] = await Promise.all([
    startBrowser(),
    startDetailsSite(),
    startScriptedModel(),
    startAwsLocal(['dynamo']),
    tempStores('bfn-runs-memory-'),
  ]);
  llm.setHandler(detailsModel);
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await aws?.stop();
  await stores?.cleanup();
});

const entry = (sampleId: string, text: string): RunMemoryEntry => ({
  sampleId,
  lines: [{ domain: 'shop.test', kind: 'worked', text }],
  source: 'log',
  writtenAt: new Date().toISOString(),
});

describe('run memory stores', () => {
  it.each([
    ['local files', () => new LocalRunMemoryStore(join(stores.dir, 'mem'))],
    ['DynamoDB', () => new DynamoRunMemoryStore({ client: aws.dynamo.client, table: aws.dynamo.table })],
  ] as const)('%s: samples ending together all keep their lines, once each, per tenant and run', async (_, make) => {
    const store: RunMemoryStore = make();
    const ids = Array.from({ length: 12 }, (_, i) => `s${i}`);
    const written = await Promise.all(ids.map((id) => store.append('t1', 'r1', entry(id, `line of ${id}`))));
    expect(written.every(Boolean)).toBe(true);
    // A sample end retried after a crash writes nothing again.
    expect(await store.append('t1', 'r1', entry('s3', 'another line'))).toBe(false);
    // A fresh adapter (another process, a resumed run) reads the same lines.
    const again = await make().list('t1', 'r1');
    expect(again.map((e) => e.sampleId).sort()).toEqual([...ids].sort());
    expect(again.find((e) => e.sampleId === 's3')?.lines[0]?.text).toBe('line of s3');
    expect(await store.list('t2', 'r1')).toEqual([]);
    expect(await store.list('t1', 'r2')).toEqual([]);
  });
});

describe('a run that learns', () => {
  it('sample 3 starts with sample 1\'s hint, clicks "Details" at once and needs fewer steps; memory is evidence', async () => {
    const runMemory = new LocalRunMemoryStore(join(stores.dir, 'runs'));
    const spec = parseTaskSpec({
      goal: 'report the price of the item as price',
      outputSchema: { type: 'object', properties: { price: { type: 'number' } }, required: ['price'] },
      requiredFields: ['price'],
      maxSteps: 8,
      concurrency: 1,
    });
    const tenant = 'learns';
    const samples = [1, 2, 3, 4].map((n) => ({ sampleId: `item${n}`, url: `${site.url}/p/${n}`, input: {} }));
    const input = await createRun(stores.runStore, stores.evidence, { tenant, spec, samples });
    const deps = runDeps(stores, browser, site as never, llm, {
      runMemory,
      policy: mergePolicy(
        { allowPrivate: false, allowHosts: [] },
        { allowHosts: [`127.0.0.1:${site.port}`] },
      ),
    });
    await startLocalRun(input, runHandlers(deps)).result;

    const results = await stores.runStore.listResults(tenant, input.runId);
    const byId = Object.fromEntries(results.map((r) => [r.sampleId, r]));
    for (const n of [1, 2, 3, 4]) {
      expect(byId[`item${n}`]?.status).toBe('done');
      expect(byId[`item${n}`]?.data).toEqual({ price: priceOf(n) });
    }
    const steps = (id: string) => Number(byId[id]?.usage.steps);
    // Sample 1 tried Overview, Reviews, Shipping, then Details, then reported: five steps.
    expect(steps('item1')).toBe(5);
    expect(steps('item3')).toBeLessThan(steps('item1'));
    expect(steps('item3')).toBe(2);

    // What the model was shown: sample 3's first step carried a hint naming the Details tab.
    const decisions = llm.requests.filter((r) => r.schemaName === 'next_actions');
    const firstOf3 = decisions.find((r) => r.text.includes('/p/3') && /^Step 1 of/m.test(r.text));
    expect(firstOf3?.text).toMatch(
      /Hints from earlier samples[^\n]*\n- worked \(\d samples?\): [^\n]*click tab "Details"/,
    );
    const firstOf1 = decisions.find((r) => r.text.includes('/p/1') && /^Step 1 of/m.test(r.text));
    expect(firstOf1?.text).not.toContain('Hints from earlier samples');
    // The log said enough: no model call was spent on distilling.
    expect(llm.requests.filter((r) => r.schemaName === 'run_memory')).toHaveLength(0);

    // The memory lives in the store, and each sample's memory.json is evidence in the verified chain.
    const stored = await new LocalRunMemoryStore(join(stores.dir, 'runs')).list(tenant, input.runId);
    expect(stored.map((e) => e.sampleId)).toContain('item1');
    const mem3 = JSON.parse(
      await readFile(
        join(stores.dir, 'evidence', sampleEvidenceKey(tenant, input.runId, 'item3', 'memory.json')),
        'utf8',
      ),
    ) as { received: string[]; shared: { text: string }[]; source: string };
    expect(mem3.received[0]).toContain('click tab "Details"');
    expect(mem3.source).toBe('log');
    expect(byId.item3?.evidence.map((e) => e.key)).toContain(
      sampleEvidenceKey(tenant, input.runId, 'item3', 'memory.json'),
    );
    const verified = await verifyWholeRun(stores.runStore, stores.evidence, tenant, input.runId);
    expect(verified?.ok).toBe(true);
  }, 120_000);
});

describe('the planner', () => {
  it('gives a prompt that names a listing a discovery block, and its system prompt reaches every agent', async () => {
    const advice = 'Prices on this shop are under the Details tab.';
    llm.setHandler((req) =>
      req.schemaName === 'run_plan'
        ? {
            json: {
              goal: 'report the price of the item as price',
              fields: [{ name: 'price', type: 'number', description: 'price in dollars' }],
              requiredFields: ['price'],
              keywords: ['price'],
              maxSteps: 6,
              expectedItems: null,
              samples: [],
              systemPrompt: advice,
              needsDiscovery: true,
              listingUrls: [`${site.url}/list/2`],
              itemLinkPattern: `${site.url}/p/*`,
            },
          }
        : detailsModel(req),
    );
    const tenant = 'planned';
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      prompt: `Get the price of every item listed on ${site.url}/list/2`,
      concurrency: 1,
    });
    const asked = llm.requests.length;
    const deps = runDeps(stores, browser, site as never, llm, {
      policy: mergePolicy(
        { allowPrivate: false, allowHosts: [] },
        { allowHosts: [`127.0.0.1:${site.port}`] },
      ),
    });
    await startLocalRun(input, runHandlers(deps)).result;
    const generated = JSON.parse(
      Buffer.from(
        (await stores.evidence.get(evidenceKey(tenant, input.runId, 'generated_task_spec.json')))!,
      ).toString(),
    );
    expect(generated.spec.discovery).toEqual({
      listings: [`${site.url}/list/2`],
      include: `${site.url}/p/*`,
    });
    expect(generated.spec.systemPrompt).toBe(advice);
    // Discovery turned the listing's links into the samples; each agent had the advice in its system part.
    const results = await stores.runStore.listResults(tenant, input.runId);
    expect(results.map((r) => r.status)).toEqual(['done', 'done']);
    expect(results.map((r) => (r.data as { price: number }).price).sort((a, b) => a - b)).toEqual(
      [priceOf(1), priceOf(2)].sort((a, b) => a - b),
    );
    const decisions = llm.requests.slice(asked).filter((r) => r.schemaName === 'next_actions');
    expect(decisions.length).toBeGreaterThanOrEqual(2);
    for (const d of decisions) expect(d.system).toContain(`Instructions for this task:\n${advice}`);
  }, 120_000);
});
