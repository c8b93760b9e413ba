import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { verifyManifest } from '../../lib/runs/manifest-binding.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import type { SliceRunner } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { evidenceKey } from '../../lib/store/keys.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { finishWith, headingIn, runDeps, tempStores, titleModel } from '../support/runs-env.ts';

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
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await stores?.cleanup();
});

const spec = parseTaskSpec({
  goal: 'the product name shown as the page title',
  mode: 'extract',
  outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
  requiredFields: ['title'],
  concurrency: 2,
});

/** The real one-step agent, except that one sample's worker dies (as a killed Lambda would). */
const crashOn = (sampleId: string): SliceRunner => ({
  newState: agentSliceRunner.newState,
  runSlice: (state, deps, opts) =>
    state.sampleId === sampleId
      ? Promise.reject(new Error('worker lost: browser process exited'))
      : agentSliceRunner.runSlice(state, deps, opts),
});

describe('a run on the local state machine', () => {
  it('two samples done, one failed by a crash, merge correct, evidence verifies', async () => {
    const tenant = 'acme';
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      spec,
      samples: [
        { sampleId: 'b-lamp', url: `${site.url}/products/red-lamp.html`, input: { sku: 'L-1' } },
        { sampleId: 'a-widget', url: `${site.url}/products/blue-widget.html`, input: { sku: 'W-1' } },
        { sampleId: 'c-crash', url: `${site.url}/products/green-chair.html`, input: { sku: 'C-1' } },
      ],
    });
    expect(input.items).toEqual(['b-lamp', 'a-widget', 'c-crash']);
    const slices: string[] = [];
    const handlers = runHandlers(
      runDeps(stores, browser, site, llm, {
        slices: crashOn('c-crash'),
        onSlice: (e) => slices.push(`${e.sampleId}:${e.status}`),
      }),
    );
    const out = (await startLocalRun(input, handlers, { retryPauseMs: 1 }).result) as {
      counts: Record<string, number>;
    };
    expect(out.counts).toMatchObject({ done: 2, failed: 1, pending: 0, running: 0 });

    const results = await stores.runStore.listResults(tenant, input.runId);
    expect(results.map((r) => [r.sampleId, r.status])).toEqual([
      ['a-widget', 'done'],
      ['b-lamp', 'done'],
      ['c-crash', 'failed'],
    ]);
    expect(results[0]!.data).toEqual({ title: 'Blue Widget' });
    expect(results[1]!.data).toEqual({ title: 'Red Lamp' });
    expect(results[2]!.reason).toMatch(/^crashed: Error: worker lost: browser process exited/);
    // The crash went through Catch → Record crash, not through the run: both other samples finished.
    expect(slices.sort()).toEqual(['a-widget:done', 'b-lamp:done', 'c-crash:failed']);

    const run = await stores.runStore.getRun(tenant, input.runId);
    expect(run?.status).toBe('done');
    const totals = run?.totals as { counts: Record<string, number>; promptTokens: number; samples: number };
    expect(totals.samples).toBe(3);
    expect(totals.counts.done).toBe(2);
    // Two extract calls reached the model; the crashed sample never asked it.
    expect(llm.requests).toHaveLength(2);
    expect(totals.promptTokens).toBe(results.reduce((n, r) => n + Number(r.usage.promptTokens ?? 0), 0));
    expect(totals.promptTokens).toBeGreaterThan(0);

    const csv = await stores.evidence.get(evidenceKey(tenant, input.runId, 'combined.csv'));
    const rows = parse(Buffer.from(csv!).toString('utf8'), { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.sample_id, r.status, r.title])).toEqual([
      ['a-widget', 'done', 'Blue Widget'],
      ['b-lamp', 'done', 'Red Lamp'],
      ['c-crash', 'failed', ''],
    ]);
    expect(Number(rows[0]!.prompt_tokens)).toBeGreaterThan(0);

    // Each finished sample left a screenshot and an action log, all sealed in the manifest.
    const shot = results[0]!.evidence.find((e) => e.key.endsWith('01_page.jpg'));
    expect(shot?.key.startsWith('acme/')).toBe(true);
    expect(
      Buffer.from((await stores.evidence.get(shot!.key))!)
        .subarray(0, 3)
        .toString('hex'),
    ).toBe('ffd8ff');
    const check = await verifyManifest(stores.evidence, tenant, input.runId, run?.manifestHead);
    // Every sample's files plus combined.csv and results.json.
    const files = results.reduce((n, r) => n + r.evidence.length, 0) + 2;
    expect(files).toBeGreaterThanOrEqual(6);
    expect(check).toEqual({ ok: true, entries: files });
  });

  it('a Lambda service error is retried: the sample continues and ends done, with one result', async () => {
    const tenant = 'acme';
    let calls = 0;
    const flaky: SliceRunner = {
      newState: agentSliceRunner.newState,
      runSlice: (state, deps, opts) => {
        calls++;
        if (calls === 1) {
          const err = new Error('Rate exceeded');
          err.name = 'Lambda.TooManyRequestsException';
          return Promise.reject(err);
        }
        return agentSliceRunner.runSlice(state, deps, opts);
      },
    };
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      spec,
      samples: [{ sampleId: 'only', url: `${site.url}/products/blue-widget.html`, input: {} }],
    });
    const handlers = runHandlers(runDeps(stores, browser, site, llm, { slices: flaky }));
    await startLocalRun(input, handlers, { retryPauseMs: 1 }).result;
    expect(calls).toBe(2);
    const results = await stores.runStore.listResults(tenant, input.runId);
    expect(results.map((r) => [r.sampleId, r.status])).toEqual([['only', 'done']]);
    expect((await stores.runStore.getSample(tenant, input.runId, 'only'))?.attempts).toBe(2);
  });

  it('--prompt: the Plan state makes the spec and samples in one model call, then the run goes on', async () => {
    const tenant = 'planner';
    llm.setHandler((req) =>
      req.schemaName === 'run_plan'
        ? {
            json: {
              goal: 'read the product name',
              fields: [{ name: 'title', type: 'string', description: 'product name' }],
              requiredFields: ['title'],
              keywords: ['product'],
              maxSteps: 3,
              expectedItems: null,
              samples: [
                { sample_id: 'kettle', url: `${site.url}/products/steel-kettle.html` },
                { sample_id: 'mug', url: `${site.url}/products/tall-mug.html` },
              ],
            },
          }
        : finishWith({ title: headingIn(req) ?? null }, req),
    );
    try {
      const input = await createRun(stores.runStore, stores.evidence, {
        tenant,
        prompt: 'Get the product names of the steel kettle and the tall mug pages',
        concurrency: 2,
      });
      expect(input).toMatchObject({ prompt: expect.any(String) });
      expect(input.items).toBeUndefined();
      await startLocalRun(input, runHandlers(runDeps(stores, browser, site, llm))).result;
      const planRequests = llm.requests.filter((r) => r.schemaName === 'run_plan');
      expect(planRequests).toHaveLength(1);
      expect(planRequests[0]!.text).toContain('steel kettle and the tall mug');
      const generated = JSON.parse(
        Buffer.from(
          (await stores.evidence.get(evidenceKey(tenant, input.runId, 'generated_task_spec.json')))!,
        ).toString(),
      );
      expect(generated.spec).toMatchObject({ goal: 'read the product name', maxSteps: 3, concurrency: 2 });
      const results = await stores.runStore.listResults(tenant, input.runId);
      expect(results.map((r) => [r.sampleId, r.status, r.data])).toEqual([
        ['kettle', 'done', { title: 'Steel Kettle' }],
        ['mug', 'done', { title: 'Tall Mug' }],
      ]);
      expect((await stores.runStore.getRun(tenant, input.runId))?.status).toBe('done');
    } finally {
      titleModel(llm);
    }
  });

  it('auth profile from the store signs every sample in, in its own context; rate limit paces the host', async () => {
    const tenant = 'acme';
    // A page that greets the user its cookie names, and notes when each page load came in.
    const hits: number[] = [];
    const echo = http.createServer((req, res) => {
      hits.push(Date.now());
      const user = /(?:^|; )user=(\w+)/.exec(req.headers.cookie ?? '')?.[1] ?? 'guest';
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Account</title><h1>Welcome ${user}</h1>`);
    });
    await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
    const host = `127.0.0.1:${(echo.address() as AddressInfo).port}`;
    try {
      await stores.evidence.put(
        `${tenant}/profiles/ada.json`,
        JSON.stringify({
          cookies: [
            {
              name: 'user',
              value: 'ada',
              domain: '127.0.0.1',
              path: '/',
              expires: -1,
              httpOnly: false,
              secure: false,
              sameSite: 'Lax',
            },
          ],
          origins: [],
        }),
      );
      const deps = runDeps(stores, browser, site, llm, {
        policy: { allowPrivate: false, allowHosts: [host] },
      });
      const signedIn = await createRun(stores.runStore, stores.evidence, {
        tenant,
        spec: parseTaskSpec({
          ...spec,
          concurrency: 4,
          authProfile: { key: 'profiles/ada.json' },
          rateLimits: { [host]: { ratePerSecond: 4 } },
        }),
        samples: [1, 2, 3, 4].map((i) => ({
          sampleId: `acct${i}`,
          url: `http://${host}/account/${i}`,
          input: {},
        })),
      });
      await startLocalRun(signedIn, runHandlers(deps)).result;
      const results = await stores.runStore.listResults(tenant, signedIn.runId);
      expect(results.map((r) => r.data)).toEqual([1, 2, 3, 4].map(() => ({ title: 'Welcome ada' })));
      // Four workers at once, one host at 4 per second: the loads came in paced, not together.
      const gaps = hits.slice(1).map((t, i) => t - hits[i]!);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
      expect(hits.at(-1)! - hits[0]!).toBeGreaterThanOrEqual(600);

      // A run without the profile shares nothing with the one before: its contexts start signed out.
      const guest = await createRun(stores.runStore, stores.evidence, {
        tenant,
        spec,
        samples: [{ sampleId: 'guest', url: `http://${host}/account/5`, input: {} }],
      });
      await startLocalRun(guest, runHandlers(deps)).result;
      expect((await stores.runStore.getResult(tenant, guest.runId, 'guest'))?.data).toEqual({
        title: 'Welcome guest',
      });
    } finally {
      echo.close();
    }
  });
});
