import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { localRunsApi } from '../../lib/api/runs-local.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { LocalRunMemoryStore } from '../../lib/store/local-run-memory.ts';
import type { ResultRecord } from '../../lib/store/ports.ts';
import { startBrowser } from '../support/browser.ts';
import type { FixtureServer } from '../support/fixture-server.ts';
import { type RecordedRequest, type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { runDeps, tempStores } from '../support/runs-env.ts';
import { type ScenarioSite, startScenarioSite } from '../support/scenario-site.ts';
import { serveOnLoopback } from '../support/serve.ts';

/**
 * Scenarios as runs: a spec with `scenario` carries the steps out on every sample URL (the state
 * machine path, local stores); each sample's result is the scenario's, its verifications are the
 * evidence; what the first sample learned on the site (an app fact, how to clear a privacy wall no
 * rule knows) reaches the next samples through the run's memory: the wall is cleared with zero
 * tokens and the fact is in their prompt.
 */

let browser: Browser;
let site: ScenarioSite;
let llm: ScriptedModel;
let stores: Awaited<ReturnType<typeof tempStores>>;

beforeAll(async () => {
  [browser, site, llm, stores] = await Promise.all([
    startBrowser(),
    startScenarioSite(),
    startScriptedModel(),
    tempStores('bfn-scenario-runs-'),
  ]);
  llm.setHandler(notesModel);
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
  await stores?.cleanup();
});

const FACT = 'notes are added with the Add note button';
const isDecision = (r: RecordedRequest) => r.schemaName === 'scenario_decision';
const pageOf = (r: RecordedRequest) => /^Current page: (\S+)/m.exec(r.text)?.[1] ?? '';
const decide = (d: Record<string, unknown>) => ({
  json: { reasoning: 'scripted', noteToFutureSelf: '', experiences: [], commands: [], ...d },
});

/** A careful tester: clears the privacy wall when it sees one, adds the note, proves it; stuck when a check failed. */
function notesModel(r: RecordedRequest) {
  if (!isDecision(r)) return { status: 400 };
  const step = Number(/Current step (\d+) of/.exec(r.text)?.[1]);
  const proceed = /\[(\d+)\] button: Proceed to the site/.exec(r.text);
  const blocker = proceed
    ? {
        blockerDetected: {
          description: 'privacy wall',
          clearingCommands: [{ kind: 'action', action: 'click', id: Number(proceed[1]) }],
        },
      }
    : {};
  if (step === 1)
    return decide({
      status: 'complete',
      ...blocker,
      experiences: [FACT],
      commands: [
        { kind: 'action', action: 'fill', id: idInPrompt(r.text, 'textbox', 'New note'), value: 'Tea' },
        { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') },
      ],
    });
  if (/✗ verify/.test(r.text)) return decide({ status: 'stuck', reasoning: 'the note never appeared' });
  return decide({
    status: 'complete',
    ...blocker,
    commands: [
      { kind: 'verify', check: 'textContains', selector: '#notes', expected: 'Tea' },
      { kind: 'verify', check: 'textEquals', selector: '#count', expected: '1 note' },
    ],
  });
}

const STEPS = [
  'Add a note saying Tea',
  { do: 'Verify the note list shows Tea', expect: 'the counter says 1 note' },
];

const readJson = async (r: ResultRecord | undefined, file: string) => {
  const key = r?.evidence.find((e) => e.key.endsWith(`/${file}`))?.key;
  const raw = key ? await stores.evidence.get(key) : undefined;
  return raw ? JSON.parse(Buffer.from(raw).toString('utf8')) : undefined;
};

describe('scenario runs', () => {
  it('carries the steps out on every sample; the second sample clears the wall from memory with zero tokens and gets the fact', async () => {
    const spec = parseTaskSpec({ scenario: { steps: STEPS }, concurrency: 1 });
    expect(spec.mode).toBe('scenario');
    const tenant = 'sc';
    const samples = [
      { sampleId: 'a1', url: `${site.url}/notes?banner=privacy`, input: {} },
      { sampleId: 'a2', url: `${site.url}/notes?banner=privacy&second=1`, input: {} },
      { sampleId: 'a3', url: `${site.url}/notes?banner=privacy&broken=1`, input: {} },
    ];
    const input = await createRun(stores.runStore, stores.evidence, { tenant, spec, samples });
    const runMemory = new LocalRunMemoryStore(join(stores.dir, 'runs'));
    const mark = llm.requests.length;
    await startLocalRun(
      input,
      runHandlers(runDeps(stores, browser, site as unknown as FixtureServer, llm, { runMemory })),
    ).result;

    const results = await stores.runStore.listResults(tenant, input.runId);
    const by = Object.fromEntries(results.map((r) => [r.sampleId, r]));
    expect(by.a1).toMatchObject({ status: 'done', reason: 'scenario passed: 2 steps, 2 verifications' });
    expect(by.a1?.data).toEqual({
      scenario: 'passed',
      failedStep: null,
      stepsCompleted: 2,
      steps: 2,
      verificationsPassed: 2,
      verificationsFailed: 0,
    });
    expect(by.a2?.status).toBe('done');
    // The broken app: the note is never added, the check fails, the sample fails naming step 2.
    expect(by.a3?.status).toBe('failed');
    expect(by.a3?.reason).toMatch(
      /^scenario stuck: step 2 \("Verify the note list shows Tea"\): the note never appeared/,
    );
    expect(by.a3?.data).toMatchObject({ scenario: 'stuck', failedStep: 2, stepsCompleted: 1 });

    // Blockers: the model cleared the wall on the first sample; the others replayed it, zero tokens.
    expect(by.a1?.usage.blockers).toEqual({ memory: 0, rule: 0, model: 1 });
    expect(by.a2?.usage.blockers).toEqual({ memory: 1, rule: 0, model: 0 });
    expect(by.a3?.usage.blockers).toMatchObject({ memory: 1, model: 0 });
    const asked = llm.requests.slice(mark).filter(isDecision);
    const second = asked.filter((r) => pageOf(r).includes('second=1'));
    // One decision per step, and none of them saw the wall: nothing was asked about it.
    expect(second).toHaveLength(2);
    for (const r of second) expect(r.text).not.toContain('Proceed to the site');
    expect(
      asked.filter((r) => pageOf(r).includes('banner=privacy') && r.text.includes('Proceed to the site')),
    ).toHaveLength(1);
    // The app fact the first sample learned is in the next samples' prompts, never in its own first one.
    expect(second[0]!.text).toContain(`Learned about this site:\n- ${FACT}`);
    const first = asked.find((r) => pageOf(r).endsWith('banner=privacy'));
    expect(first?.text).not.toContain('Learned about this site');

    // Evidence: every step's verifications; the failed sample's end screenshot; the memory it got.
    const proved = await readJson(by.a1, 'scenario.json');
    expect(proved.steps[1].verifications.map((v: { check: string; ok: boolean }) => [v.check, v.ok])).toEqual(
      [
        ['textContains', true],
        ['textEquals', true],
      ],
    );
    const failed = await readJson(by.a3, 'scenario.json');
    expect(failed.status).toBe('stuck');
    expect(failed.steps[1].verifications[0]).toMatchObject({ check: 'textContains', ok: false });
    expect(by.a3?.evidence.some((e) => e.key.endsWith('/step_2_end.png'))).toBe(true);
    const memory = await readJson(by.a2, 'memory.json');
    expect(Object.values(memory.received)[0]).toMatchObject({
      experiences: [FACT],
      clearings: [{ description: 'privacy wall', commands: [{ action: 'click' }] }],
    });
  });
});

describe('POST /v1/scenarios as a run', () => {
  let server: ServerType;
  let base: string;
  beforeAll(async () => {
    const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
    const env = {
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: llm.openaiBaseURL,
      BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
    };
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy,
      browser: async () => browser,
      env,
      runs: localRunsApi({
        runStore: stores.runStore,
        evidence: stores.evidence,
        runMemory: new LocalRunMemoryStore(join(stores.dir, 'runs')),
        browser: async () => browser,
        policy,
        env,
      }),
    });
    ({ server, base } = await serveOnLoopback(app.fetch));
  });
  afterAll(() => server?.close());

  const call = (method: string, path: string, body?: unknown) =>
    fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('many URLs answer 202 with a run id; the run carries the scenario out on each; bad input names the field', async () => {
    const res = await call('POST', '/v1/scenarios', {
      urls: [`${site.url}/notes?banner=privacy&api=1`, `${site.url}/notes?banner=privacy&api=2`],
      steps: STEPS,
      concurrency: 1,
    });
    expect(res.status).toBe(202);
    const { runId, status } = (await res.json()) as { runId: string; status: string };
    expect(status).toBe('queued');
    let run: { status: string } = { status: 'queued' };
    for (let i = 0; i < 240 && !['done', 'failed'].includes(run.status); i++) {
      await new Promise((r) => setTimeout(r, 250));
      run = (await (await call('GET', `/v1/runs/${runId}`)).json()) as { status: string };
    }
    expect(run.status).toBe('done');
    const { results } = (await (await call('GET', `/v1/runs/${runId}/results`)).json()) as {
      results: ResultRecord[];
    };
    results.sort((x, y) => x.sampleId.localeCompare(y.sampleId));
    expect(results.map((r) => [r.status, (r.data as { scenario: string }).scenario])).toEqual([
      ['done', 'passed'],
      ['done', 'passed'],
    ]);
    expect(results.map((r) => (r.usage.blockers as { memory: number }).memory)).toEqual([0, 1]);

    // Secrets are never stored in a run's spec; one URL and many are not both given.
    const secret = await call('POST', '/v1/scenarios', {
      url: `${site.url}/notes`,
      async: true,
      steps: STEPS,
      variables: { pw: 'hunter2' },
    });
    expect(secret.status).toBe(400);
    expect(JSON.stringify(await secret.json())).toContain('variables');
    const both = await call('POST', '/v1/scenarios', {
      url: `${site.url}/notes`,
      urls: [`${site.url}/notes`],
      steps: STEPS,
    });
    expect(both.status).toBe(400);
    expect(JSON.stringify(await both.json())).toContain('urls');
  });
});

describe('browserfn run with a scenario spec', () => {
  it("runs the steps on each sample of the CSV; the second clears the wall from the first one's memory", async () => {
    const dir = join(stores.dir, 'cli');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'spec.json'), JSON.stringify({ scenario: { steps: STEPS }, concurrency: 1 }));
    await writeFile(
      join(dir, 'samples.csv'),
      `sample_id,url\nc1,${site.url}/notes?banner=privacy&cli=1\nc2,${site.url}/notes?banner=privacy&cli=2\n`,
    );
    const child = spawn(
      process.execPath,
      [
        'bin/browserfn.js',
        'run',
        '--task',
        join(dir, 'spec.json'),
        '--input',
        join(dir, 'samples.csv'),
        '--out',
        dir,
      ],
      {
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: process.env.TMPDIR,
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: llm.openaiBaseURL,
          BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
        },
      },
    );
    let out = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      out += b.toString();
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    expect(code, out).toBe(0);
    const runId = /run (\S+) started/.exec(out)?.[1];
    const folder = join(dir, '.browserfn', 'runs', 'local', runId!, 'results');
    const results = await Promise.all(
      (await readdir(folder)).sort().map(async (n) => JSON.parse(await readFile(join(folder, n), 'utf8'))),
    );
    expect(results.map((r) => [r.sampleId, r.status, r.data.scenario, r.usage.blockers.memory])).toEqual([
      ['c1', 'done', 'passed', 0],
      ['c2', 'done', 'passed', 1],
    ]);
  }, 120_000);
});
