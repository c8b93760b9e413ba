import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'csv-parse/sync';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentSliceRunner } from '../../lib/runs/agent-slice-binding.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import type { SliceRunner } from '../../lib/runs/slice-runner.ts';
import { parseTaskSpec, rateBucketKey } from '../../lib/runs/task-spec.ts';
import { storesFromEnv } from '../../lib/store/config.ts';
import { evidenceKey, runEvidencePrefix } from '../../lib/store/keys.ts';
import { manifestKey, verifyRun } from '../../lib/store/manifest-store.ts';
import type { EvidenceStore, RunStore } from '../../lib/store/ports.ts';
import { reportThrottle } from '../../lib/store/rate-gate.ts';
import { type AwsLocal, startAwsLocal } from '../support/aws-local.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { finishWith, headingIn, runDeps, tempStores, titleModel } from '../support/runs-env.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let files: Awaited<ReturnType<typeof tempStores>>;
let aws: AwsLocal;

// Emulators once per file: the same run, on local files and on DynamoDB + S3 through the AWS SDK.
beforeAll(async () => {
  [browser, site, llm, files, aws] = await Promise.all([
    startBrowser(),
    startFixtureServer(),
    startScriptedModel(),
    tempStores(),
    startAwsLocal(['dynamo', 's3']),
  ]);
  titleModel(llm);
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await files?.cleanup();
  await aws?.stop();
});

interface Stores {
  runStore: RunStore;
  evidence: EvidenceStore;
}

const BACKENDS: [string, () => Stores][] = [
  ['local files', () => files],
  [
    'DynamoDB + S3 (dynalite, s3rver)',
    () => {
      // As a Lambda configures them: from the environment.
      const fromEnv = storesFromEnv(aws.env);
      expect(fromEnv.describe.runs).toBe(`dynamodb:${aws.dynamo.table}`);
      return { runStore: fromEnv.runs, evidence: fromEnv.evidence };
    },
  ],
];

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

describe.each(BACKENDS)('a run on the local state machine, stores on %s', (_name, storesOf) => {
  let stores: Stores;
  /** The run of the first test, which the tampering test then changes. */
  let merged: { tenant: string; runId: string; head: string } | undefined;
  beforeAll(() => {
    stores = storesOf();
  });

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
    const asked = llm.requests.length;
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
    expect(llm.requests.length - asked).toBe(2);
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
    const check = await verifyRun(stores.evidence, tenant, input.runId, run?.manifestHead);
    // Every sample's files plus combined.csv and results.json, each once in the chain.
    const written = results.reduce((n, r) => n + r.evidence.length, 0) + 2;
    expect(written).toBeGreaterThanOrEqual(6);
    expect(check).toEqual({ ok: true, entries: written, files: written, head: run?.manifestHead });
    expect(run?.manifestHead).toMatch(/^[0-9a-f]{64}$/);
    merged = { tenant, runId: input.runId, head: run!.manifestHead! };
  });

  it('tampering with the merged run is named: edit, delete, reorder, add, truncate', async () => {
    if (!merged) throw new Error('needs the run of the test before');
    const { tenant, runId, head } = merged;
    const { evidence } = stores;
    const verify = () => verifyRun(evidence, tenant, runId, head);
    const shot = `${runEvidencePrefix(tenant, runId)}samples/a-widget/01_page.jpg`;
    const original = (await evidence.get(shot))!;
    expect(original).toBeDefined();

    const edited = Buffer.from(original);
    edited[edited.length - 3] = (edited[edited.length - 3]! + 1) % 256;
    await evidence.put(shot, edited, 'image/jpeg');
    expect((await verify()).problem).toMatchObject({ kind: 'edited', where: 'file', key: shot });
    await evidence.put(shot, original, 'image/jpeg');
    expect((await verify()).ok).toBe(true);

    await evidence.delete(shot);
    expect((await verify()).problem).toMatchObject({ kind: 'removed', where: 'file', key: shot });
    await evidence.put(shot, original, 'image/jpeg');

    const manifest = Buffer.from((await evidence.get(manifestKey(tenant, runId)))!).toString('utf8');
    const lines = manifest.trimEnd().split('\n');
    const swapped = [lines[1]!, lines[0]!, ...lines.slice(2)];
    await evidence.put(manifestKey(tenant, runId), `${swapped.join('\n')}\n`);
    expect((await verify()).problem).toMatchObject({ kind: 'reordered', where: 'manifest', index: 0 });
    // The last entry dropped: every link still holds, only the head stored with the run tells.
    await evidence.put(manifestKey(tenant, runId), `${lines.slice(0, -1).join('\n')}\n`);
    expect((await verify()).problem).toMatchObject({ kind: 'head', where: 'manifest' });
    await evidence.put(manifestKey(tenant, runId), manifest);

    const extra = `${runEvidencePrefix(tenant, runId)}samples/a-widget/02_planted.jpg`;
    await evidence.put(extra, original, 'image/jpeg');
    expect((await verify()).problem).toMatchObject({ kind: 'added', where: 'file', key: extra });
    await evidence.delete(extra);
    expect(await verify()).toMatchObject({ ok: true, head });
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
      const asked = llm.requests.length;
      await startLocalRun(input, runHandlers(runDeps(stores, browser, site, llm))).result;
      const planRequests = llm.requests.slice(asked).filter((r) => r.schemaName === 'run_plan');
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
      const run = await stores.runStore.getRun(tenant, input.runId);
      expect(run?.status).toBe('done');
      // The planned spec is evidence too: in the manifest with the samples' files and the merged ones.
      const check = await verifyRun(stores.evidence, tenant, input.runId, run?.manifestHead);
      // Every file the run left (the agent's own state files included) is in the chain.
      const stored = (await stores.evidence.list(runEvidencePrefix(tenant, input.runId))).filter(
        (k) => !k.includes('/manifest'),
      );
      expect(stored.length).toBeGreaterThanOrEqual(results.reduce((n, r) => n + r.evidence.length, 3));
      expect(check).toMatchObject({ ok: true, files: stored.length });
    } finally {
      titleModel(llm);
    }
  });

  it('a site answering 429 pauses its host, the sample waits out Retry-After and is read; one that stays busy fails saying so', async () => {
    const tenant = 'acme';
    const tag = Math.random().toString(36).slice(2, 8);
    const host = `127.0.0.1:${site.port}`;
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant,
      spec: parseTaskSpec({ ...spec, rateLimits: { [host]: { ratePerSecond: 20, burst: 5 } } }),
      samples: [
        { sampleId: 'once', url: `${site.url}/busy/desk-lamp-${tag}?times=1`, input: {} },
        { sampleId: 'always', url: `${site.url}/busy/oak-chair-${tag}?times=99`, input: {} },
        { sampleId: 'down', url: `${site.url}/busy/fern-pot-${tag}?times=99&status=503`, input: {} },
      ],
    });
    const started = Date.now();
    await startLocalRun(input, runHandlers(runDeps(stores, browser, site, llm))).result;
    const results = await stores.runStore.listResults(tenant, input.runId);
    const byId = Object.fromEntries(results.map((r) => [r.sampleId, r]));
    expect(byId.once!.status).toBe('done');
    expect((byId.once!.data as { title: string }).title).toMatch(/^Desk Lamp/);
    expect(byId.always!.status).toBe('failed');
    expect(byId.always!.reason).toContain('HTTP 429 (too many requests)');
    // A 503 that says when to come back is treated alike, and its error page is not read as data either.
    expect(byId.down!.status).toBe('failed');
    expect(byId.down!.reason).toContain('HTTP 503 and asked us to come back later');
    expect(byId.down!.data).toBeNull();
    const asks = (slug: string) => site.hits.filter((h) => h.startsWith(`/busy/${slug}-${tag}`)).length;
    // Asked again only after the pause: once more for the first, three more for the second, then given up.
    expect(asks('desk-lamp')).toBe(2);
    expect(asks('oak-chair')).toBe(4);
    expect(asks('fern-pot')).toBe(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
  });

  it('a host paused by a 429 holds back the tenant’s samples of runs with no rate limit for it, not other tenants’', async () => {
    const host = `127.0.0.1:${site.port}`;
    const runOf = async (tenant: string) =>
      createRun(stores.runStore, stores.evidence, {
        tenant,
        spec: parseTaskSpec(spec),
        samples: [{ sampleId: 'pan', url: `${site.url}/products/iron-pan.html`, input: {} }],
      });
    const [paused, other] = await Promise.all([runOf('held'), runOf('free')]);
    // Another run of tenant "held" met a 429 on this host a moment ago, with Retry-After: 3.
    await reportThrottle(stores.runStore, rateBucketKey('held', host), '3');
    const timed = async (input: Awaited<ReturnType<typeof runOf>>) => {
      const started = Date.now();
      await startLocalRun(input, runHandlers(runDeps(stores, browser, site, llm))).result;
      const [result] = await stores.runStore.listResults(input.tenant, input.runId);
      return { ms: Date.now() - started, status: result?.status, data: result?.data };
    };
    const [held, free] = await Promise.all([timed(paused), timed(other)]);
    expect(held).toMatchObject({ status: 'done', data: { title: 'Iron Pan' } });
    expect(free).toMatchObject({ status: 'done', data: { title: 'Iron Pan' } });
    expect(held.ms).toBeGreaterThanOrEqual(2800);
    // The other tenant's run did not wait for that pause: its bucket for the host, the only pause
    // its samples consult, was never paused. (Its wall time says nothing on a busy machine.)
    expect(await stores.runStore.bucketPausedUntil(rateBucketKey('free', host))).toBe(0);
    expect(await stores.runStore.bucketPausedUntil(rateBucketKey('held', host))).toBeGreaterThan(0);
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
      // The times the rate gate granted a token for the host: what the pacing controls.
      const grants: number[] = [];
      const runStore = new Proxy(stores.runStore, {
        get(target, prop) {
          if (prop === 'takeToken')
            return async (...args: Parameters<RunStore['takeToken']>) => {
              const decision = await target.takeToken(...args);
              if (decision.granted && args[0] === rateBucketKey(tenant, host)) grants.push(args[2]);
              return decision;
            };
          const value = Reflect.get(target, prop, target);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const deps = runDeps({ ...stores, runStore }, browser, site, llm, {
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
      // Four workers at once, one host at 4 per second: one token per sample, granted at times
      // 250 ms apart (the times the gate was asked at; a bucket emptied by a grant refills only as
      // its clock moves on). How long a new context then takes to load its page is the machine's
      // business, so the page loads are checked only for order: each came after a grant for it.
      expect(grants).toHaveLength(4);
      const sortedGrants = [...grants].sort((a, b) => a - b);
      const gaps = sortedGrants.slice(1).map((t, i) => t - sortedGrants[i]!);
      expect(Math.min(...gaps)).toBeGreaterThanOrEqual(250);
      expect(hits).toHaveLength(4);
      hits.forEach((t, i) => {
        expect(t).toBeGreaterThanOrEqual(sortedGrants[i]!);
      });

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
