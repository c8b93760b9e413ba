import { parse } from 'csv-parse/sync';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { localRunsApi } from '../../lib/api/runs-local.ts';
import { JUDGE_FILE, judgeStoredSample, judgeTaskFromSpec } from '../../lib/judge/index.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { buildReport } from '../../lib/runs/report.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { verifyWholeRun } from '../../lib/runs/verify-run.ts';
import { evidenceKey, sampleEvidenceKey } from '../../lib/store/keys.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { client } from '../support/ops-env.ts';
import {
  openPointsIn,
  type PlantedSample,
  plannedSample,
  plantSample,
  truthfulReply,
} from '../support/planted-runs.ts';
import { finishWith, headingIn, runDeps, tempStores } from '../support/runs-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

const TENANT = 'acme';
const RUN = 'judged';

describe('the judge rules on finished samples from their evidence', () => {
  let browser: Browser;
  let page: Page;
  let llm: ScriptedModel;
  let stores: Awaited<ReturnType<typeof tempStores>>;
  const planted = new Map<string, PlantedSample>();
  // One sample of each kind: right, and wrong in five ways.
  const picks = [0, 1, 3, 5, 7, 9].map(plannedSample);

  beforeAll(async () => {
    browser = await startBrowser();
    page = (await openPage(browser)).page;
    stores = await tempStores('bfn-judge-');
    llm = await startScriptedModel({
      handler: (req) => {
        const p = [...planted.values()].find((s) => req.text.includes(`/p/${s.sampleId}`));
        if (!p) return { status: 500, body: { error: { message: 'no planted sample in this prompt' } } };
        return { json: truthfulReply(p, openPointsIn(req.text)) };
      },
    });
    for (const p of picks) {
      planted.set(p.sampleId, p);
      await plantSample(stores, page, TENANT, RUN, p);
    }
  });
  afterAll(async () => {
    await llm?.close();
    await browser?.close();
    await stores?.cleanup();
  });

  const taskOf = (p: PlantedSample) => judgeTaskFromSpec({ goal: p.goal, requiredFields: ['price'] });

  it.each(
    picks.map((p) => [p.kind, p] as const),
  )('rules %s samples as a careful reviewer would', async (_kind, p) => {
    const before = llm.requests.length;
    const verdict = await judgeStoredSample(
      stores,
      TENANT,
      RUN,
      p.sampleId,
      taskOf(p),
      client(llm, 'openai'),
    );
    expect(verdict.verdict).toBe(p.expected);
    expect(verdict.blockedBy).toBe(p.expectedBlocker);
    if (p.expected === 'fail') expect(verdict.firstFailureStep).toBeGreaterThan(0);
    else expect(verdict.firstFailureStep).toBeUndefined();
    // The verdict is stored beside the sample's evidence.
    const stored = await stores.evidence.get(sampleEvidenceKey(TENANT, RUN, p.sampleId, JUDGE_FILE));
    expect(JSON.parse(new TextDecoder().decode(stored!)).verdict).toBe(p.expected);
    // The model saw at most 3 screenshots, never the same page twice.
    const sent = llm.requests.slice(before);
    for (const r of sent) expect(r.images).toBeLessThanOrEqual(3);
    expect(verdict.screenshotsUsed.filter((f) => f.includes('product')).length).toBeLessThanOrEqual(1);
  });

  it('settles a missing required field by rule, and names it', async () => {
    const p = picks.find((s) => s.kind === 'missing-field')!;
    const verdict = await judgeStoredSample(
      stores,
      TENANT,
      RUN,
      p.sampleId,
      taskOf(p),
      client(llm, 'openai'),
    );
    const field = verdict.keyPoints.find((k) => k.point.includes('"price"'));
    expect(field).toMatchObject({ met: false, decidedBy: 'rule' });
    expect(verdict.reasoning).toContain('"price" is missing');
  });

  it('drops the near-duplicate screenshot and keeps the one that shows the cart', async () => {
    const p = picks.find((s) => s.kind === 'right')!;
    const verdict = await judgeStoredSample(
      stores,
      TENANT,
      RUN,
      p.sampleId,
      taskOf(p),
      client(llm, 'anthropic'),
    );
    expect(verdict.verdict).toBe('pass');
    expect(verdict.screenshotsUsed).toContain('03_cart.png');
    expect(verdict.screenshotsUsed).toHaveLength(2);
    expect(verdict.usage.promptTokens).toBeGreaterThan(0);
  });

  it('without a model, never passes what only the screenshots could show', async () => {
    const p = picks.find((s) => s.kind === 'right')!;
    const before = llm.requests.length;
    const verdict = await judgeStoredSample(stores, TENANT, RUN, p.sampleId, taskOf(p), undefined);
    expect(llm.requests.length).toBe(before);
    expect(verdict.verdict).toBe('uncertain');
    expect(verdict.keyPoints.filter((k) => k.met === null).length).toBeGreaterThan(0);
  });

  it('fails a CAPTCHA-blocked sample with zero model calls when rules already decide', async () => {
    const p = picks.find((s) => s.kind === 'captcha')!;
    const verdict = await judgeStoredSample(
      stores,
      TENANT,
      RUN,
      p.sampleId,
      { ...taskOf(p), goal: 'read the price' },
      undefined,
    );
    expect(verdict.verdict).toBe('fail');
    expect(verdict.blockedBy).toBe('captcha');
  });

  it('POST /v1/runs/{id}/judge rules on the key’s run, and nobody else’s', async () => {
    const spec = parseTaskSpec({ goal: picks[0]!.goal, requiredFields: ['price'] });
    const input = await createRun(stores.runStore, stores.evidence, {
      tenant: 'tenant-a',
      spec,
      samples: picks
        .slice(0, 2)
        .map((p) => ({ sampleId: p.sampleId, url: `https://shop.test/${p.sampleId}`, input: {} })),
    });
    for (const p of picks.slice(0, 2)) await plantSample(stores, page, 'tenant-a', input.runId, p);
    const app = createApp({
      keys: new Map([
        ['key-a', 'tenant-a'],
        ['key-b', 'tenant-b'],
      ]),
      policy: { allowPrivate: false, allowHosts: [] },
      env: {
        OPENAI_API_KEY: 'sk-judge',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
      runs: localRunsApi({
        runStore: stores.runStore,
        evidence: stores.evidence,
        browser: async () => browser,
        policy: { allowPrivate: false, allowHosts: [] },
      }),
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    const judge = (runId: string, body: unknown, key = 'key-a') =>
      fetch(`${base}/v1/runs/${runId}/judge`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      });
    try {
      const res = await judge(input.runId, {});
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        counts: Record<string, number>;
        samples: { sampleId: string; verdict: string }[];
      };
      expect(body.counts).toEqual({ pass: 1, fail: 1 });
      expect(Object.fromEntries(body.samples.map((x) => [x.sampleId, x.verdict]))).toEqual({
        [picks[0]!.sampleId]: 'pass',
        [picks[1]!.sampleId]: 'fail',
      });
      expect((await judge(input.runId, {}, 'key-b')).status).toBe(404);
      expect((await judge(input.runId, { sampleId: 'nope' })).status).toBe(404);
      const bad = await judge(input.runId, { sampleId: '../x' });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await bad.json())).toContain('sampleId');
    } finally {
      server.close();
    }
  });

  it('a run spec with judge: the Judge state rules on each sample, verdicts in combined.csv and the totals, the chain intact', async () => {
    const site = await startFixtureServer();
    const runStores = await tempStores('bfn-judged-run-');
    const before = llm.requests.length;
    llm.setHandler((req) =>
      req.schemaName === 'judge_verdict'
        ? {
            json: {
              keyPoints: openPointsIn(req.text).map((o) => ({
                index: o.index,
                met: 'yes',
                evidenceStep: 1,
                why: 'shown',
              })),
              blockedBy: 'none',
              impossibleTask: false,
              reasoning: 'the heading is on the page',
            },
          }
        : finishWith({ title: headingIn(req) ?? null }, req),
    );
    try {
      const spec = parseTaskSpec({
        goal: 'report the product name as title',
        requiredFields: ['title'],
        maxSteps: 3,
        judge: true,
      });
      const input = await createRun(runStores.runStore, runStores.evidence, {
        tenant: 'judged',
        spec,
        samples: [
          { sampleId: 'kettle', url: `${site.url}/products/steel-kettle.html`, input: {} },
          { sampleId: 'lamp', url: `${site.url}/products/red-lamp.html`, input: {} },
        ],
      });
      await startLocalRun(input, runHandlers(runDeps(runStores, browser, site, llm)), { retryPauseMs: 1 })
        .result;
      const judgeCalls = llm.requests.slice(before).filter((r) => r.schemaName === 'judge_verdict');
      expect(judgeCalls).toHaveLength(2);
      const csv = new TextDecoder().decode(
        await runStores.evidence.get(evidenceKey('judged', input.runId, 'combined.csv')),
      );
      const rows = parse(csv, { columns: true }) as Record<string, string>[];
      expect(rows.map((r) => [r.sample_id, r.status, r.verdict])).toEqual([
        ['kettle', 'done', 'pass'],
        ['lamp', 'done', 'pass'],
      ]);
      const run = await runStores.runStore.getRun('judged', input.runId);
      expect((run?.totals as { verdicts: Record<string, number> }).verdicts).toEqual({
        pass: 2,
        fail: 0,
        uncertain: 0,
      });
      const report = await buildReport(runStores.runStore, runStores.evidence, 'judged', input.runId);
      expect(report).toContain('data-verdict="pass"');
      const check = await verifyWholeRun(runStores.runStore, runStores.evidence, 'judged', input.runId);
      expect(check?.ok).toBe(true);
    } finally {
      await site.close();
      await runStores.cleanup();
    }
  });
});
