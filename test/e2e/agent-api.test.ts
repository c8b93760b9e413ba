import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerType } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { LocalEvidenceStore, sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { isDecision, perStep, reply, tempRoot } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

let browser: Browser;
let site: FixtureServer;
let llm: ScriptedModel;
let base: string;
let server: ServerType;
let evidence: LocalEvidenceStore;

beforeAll(async () => {
  [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
  const root = await tempRoot();
  evidence = new LocalEvidenceStore(join(root, 'evidence'));
  const runStore = new LocalRunStore(join(root, 'runs'));
  const app = createApp({
    keys: new Map([['key-a', 'tenant-a']]),
    policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
    browser: async () => browser,
    env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: llm.openaiBaseURL },
    agentStores: () => ({ runStore, evidence }),
  });
  ({ server, base } = await serveOnLoopback(app.fetch));
});
afterAll(async () => {
  server?.close();
  await closeGuardProxies();
  await browser?.close();
  await site?.close();
  await llm?.close();
});

const post = (body: unknown) =>
  fetch(`${base}/v1/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
    body: JSON.stringify(body),
  });

describe('POST /v1/agent', () => {
  it('runs the agent to its end and answers with status, data, steps, usage and the evidence', async () => {
    llm.setHandler(
      perStep((step, r) =>
        step === 1
          ? reply([
              { tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') },
              { tool: 'screenshot', label: 'after' },
            ])
          : reply([{ tool: 'done', data: { count: Number(/Count: (\d+)/.exec(r.text)![1]) } }]),
      ),
    );
    const res = await post({
      url: `${site.url}/agent/counter.html`,
      goal: 'Add one and report the count',
      requiredFields: ['count'],
      maxSteps: 4,
      runId: 'api-run',
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      runId: 'api-run',
      sampleId: 'main',
      status: 'done',
      data: { count: 1 },
      steps: 2,
      evidence: { prefix: 'tenant-a/run_api-run/' },
    });
    expect(body.usage.promptTokens).toBeGreaterThan(500);
    expect(body.usage.calls).toBe(2);
    const names = body.evidence.files.map((f: { key: string }) => f.key.split('/').pop());
    expect(names).toEqual(['01_after.png', '02_final.png', 'action_log.json', 'result.json']);
    for (const f of body.evidence.files)
      expect(sha256Hex(await readFile(evidence.pathOf(f.key)))).toBe(f.sha256);
    expect(llm.requests.filter(isDecision)).toHaveLength(2);
  });

  it('answers 400 naming the field, 403 for a blocked URL', async () => {
    const bad = await post({ url: `${site.url}/agent/counter.html`, goal: 'x', maxSteps: 0 });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/^maxSteps: /);
    const none = await post({ goal: 'x' });
    expect(none.status).toBe(400);
    expect((await none.json()).error.message).toMatch(/^url: /);
    const blocked = await post({ url: 'http://127.0.0.1:9/', goal: 'x' });
    expect(blocked.status).toBe(403);
    expect((await blocked.json()).error.kind).toBe('blocked');
  });
});
