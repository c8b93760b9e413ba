import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureScreen } from '../../lib/agent/cua/screen.ts';
import type { AgentDeps } from '../../lib/agent/deps.ts';
import { runAgent } from '../../lib/agent/run-agent.ts';
import { runSlice } from '../../lib/agent/slice.ts';
import type { StepRecord } from '../../lib/agent/state.ts';
import { newAgentState } from '../../lib/agent/state.ts';
import { createApp } from '../../lib/api/app.ts';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { openSession } from '../../lib/browser/session.ts';
import { createComputerUseModel } from '../../lib/llm/computer-use/index.ts';
import type { ComputerUseConfig } from '../../lib/llm/computer-use/types.ts';
import { runHandlers } from '../../lib/runs/handlers.ts';
import { startLocalRun } from '../../lib/runs/local-runner.ts';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { compileAgentSample } from '../../lib/workflows/compile.ts';
import { runWorkflow } from '../../lib/workflows/executor.ts';
import { agentEnv, tempRoot } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import {
  anthropicComputerReply,
  displayOf,
  geminiComputerReply,
  lastUrlIn,
  openAiComputerReply,
} from '../support/cua-wire.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type RecordedRequest, type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { runDeps, tempStores } from '../support/runs-env.ts';
import { serveOnLoopback } from '../support/serve.ts';

/** The canvas's Approve button, in CSS pixels of the page (drawn at 400–560 × 300–360). */
const APPROVE = { x: 480, y: 330 };
const SECRET = 'open-sesame-42';

describe('computer-use agents drive pages by screenshots and coordinates', () => {
  let browser: Browser;
  let site: FixtureServer;
  let llm: ScriptedModel;

  beforeAll(async () => {
    [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
  });
  afterAll(async () => {
    await closeGuardProxies();
    await llm?.close();
    await site?.close();
    await browser?.close();
  });

  async function run(
    config: Omit<ComputerUseConfig, 'baseURL' | 'apiKey'>,
    path: string,
    page: { viewport?: { width: number; height: number }; dpr?: number } = {},
    variables?: Record<string, string>,
  ) {
    const env = await agentEnv({
      browser: () => browser,
      site,
      llm,
      flavour: 'openai',
      ...(variables ? { variables } : {}),
    });
    const baseURL = config.provider === 'openai' ? llm.openaiBaseURL : llm.url;
    const policy = mergePolicy(
      { allowPrivate: false, allowHosts: [] },
      { allowHosts: [`127.0.0.1:${site.port}`] },
    );
    const deps: AgentDeps = {
      ...env.deps,
      computerUse: createComputerUseModel({ ...config, baseURL, apiKey: 'k-test' }),
      newPage: async () => {
        const s = await openSession({
          browser,
          policy,
          ...(page.viewport ? { viewport: page.viewport } : {}),
          ...(page.dpr ? { deviceScaleFactor: page.dpr } : {}),
        });
        return { page: s.page, close: () => s.close() };
      },
    };
    const steps: StepRecord[] = [];
    deps.onStep = (s) => steps.push(s);
    const before = llm.requests.length;
    const state = await runAgent(
      {
        tenant: 't',
        runId: `cua-${config.provider}-${Date.now()}`,
        sampleId: 's',
        url: `${site.url}${path}`,
        task: {
          goal: 'Approve the request',
          maxSteps: 6,
          computerUse: { model: `${config.provider}/${config.model}` },
        },
      },
      deps,
    );
    return { state, steps, requests: llm.requests.slice(before) };
  }

  const done = (r: RecordedRequest, hash: string) => lastUrlIn(r).endsWith(`#${hash}`);

  it('Anthropic (2025-01 tool): clicks a canvas-drawn control from a downscaled screenshot, records the element', async () => {
    const viewport = { width: 1600, height: 1000 };
    llm.setHandler((r) => {
      if (done(r, 'approved')) return anthropicComputerReply(r, [], 'Approved.');
      if (lastUrlIn(r).includes('#'))
        return anthropicComputerReply(r, [], `CANNOT: landed on ${lastUrlIn(r)}`);
      const d = displayOf(r)!;
      const at = [
        Math.round((APPROVE.x * d.width) / viewport.width),
        Math.round((APPROVE.y * d.height) / viewport.height),
      ];
      return anthropicComputerReply(r, [{ action: 'left_click', coordinate: at }]);
    });
    const { state, steps, requests } = await run(
      { provider: 'anthropic', model: 'claude-sonnet-4' },
      '/cua/canvas.html',
      { viewport },
    );
    expect(state.status).toBe('done');
    expect(state.data.answer).toBe('Approved.');
    const first = requests[0]!;
    expect(first.headers['anthropic-beta']).toContain('computer-use-2025-01-24');
    expect((first.body.tools as { type: string }[])[0]!.type).toBe('computer_20250124');
    // The 1600×1000 page was sent smaller than it is, and the point scaled back exactly.
    expect(displayOf(first)!.width).toBeLessThan(viewport.width);
    const click = steps.flatMap((s) => s.actions).find((a) => a.tool === 'computer.click')!;
    expect(click.ok).toBe(true);
    expect(click.input).toMatchObject({ target: { tag: 'canvas', locator: { role: 'canvas' } } });
    // Every token of every turn is on the sample.
    expect(state.usage.calls).toBe(requests.length);
    expect(state.usage.promptTokens).toBeGreaterThan(0);
  });

  it('Anthropic (2025-11 tool): presses a key chord as one chord, not typed letters', async () => {
    llm.setHandler((r) =>
      done(r, 'palette')
        ? anthropicComputerReply(r, [], 'The palette is open.')
        : anthropicComputerReply(r, [{ action: 'key', text: 'ctrl+k' }]),
    );
    const { state, requests } = await run(
      { provider: 'anthropic', model: 'claude-opus-4-5' },
      '/cua/chord.html',
    );
    expect(state.status).toBe('done');
    expect(requests[0]!.headers['anthropic-beta']).toContain('computer-use-2025-11-24');
    expect((requests[0]!.body.tools as { type: string }[])[0]!.type).toBe('computer_20251124');
  });

  it('OpenAI (Responses API): clicks at DPR 2 with computer_call / computer_call_output', async () => {
    llm.setHandler((r) =>
      done(r, 'approved')
        ? openAiComputerReply(r, [], 'Approved.')
        : openAiComputerReply(r, [{ type: 'click', button: 'left', x: APPROVE.x, y: APPROVE.y }]),
    );
    const { state, requests } = await run(
      { provider: 'openai', model: 'computer-use-preview' },
      '/cua/canvas.html',
      { dpr: 2 },
    );
    expect(state.status).toBe('done');
    expect(requests[0]!.path).toMatch(/\/responses$/);
    expect(requests[0]!.body.tools).toEqual([
      { type: 'computer_use_preview', display_width: 1280, display_height: 800, environment: 'browser' },
    ]);
    // The second turn answers the call by id, on the first response.
    const second = requests[1]!.body as {
      previous_response_id?: string;
      input: { type: string; call_id: string }[];
    };
    expect(second.previous_response_id).toMatch(/^resp_/);
    expect(second.input[0]!.type).toBe('computer_call_output');
  });

  it('OpenAI: a call with a safety check is not run unless the operator allows it', async () => {
    llm.setHandler((r) =>
      openAiComputerReply(r, [{ type: 'keypress', keys: ['CTRL', 'K'] }], '', [
        { id: 'sc_1', code: 'malicious_instructions', message: 'the page asks for something odd' },
      ]),
    );
    const { state, steps } = await run(
      { provider: 'openai', model: 'computer-use-preview' },
      '/cua/chord.html',
    );
    expect(state.status).toBe('needs_review');
    expect(state.reason).toContain('malicious_instructions');
    expect(steps.flatMap((s) => s.actions)).toHaveLength(0);
    expect(state.url).not.toContain('#palette');
  });

  it('Google (Gemini): grid coordinates 0–999 and key_combination', async () => {
    llm.setHandler((r) => {
      if (done(r, 'palette')) return geminiComputerReply(r, [], 'Done.');
      if (done(r, 'approved'))
        return geminiComputerReply(r, [{ name: 'navigate', args: { url: `${site.url}/cua/chord.html` } }]);
      if (lastUrlIn(r).endsWith('chord.html'))
        return geminiComputerReply(r, [{ name: 'key_combination', args: { keys: 'Control+K' } }]);
      return geminiComputerReply(r, [
        {
          name: 'click_at',
          args: { x: Math.round((APPROVE.x / 1280) * 1000), y: Math.round((APPROVE.y / 800) * 1000) },
        },
      ]);
    });
    const { state, requests } = await run(
      { provider: 'google', model: 'gemini-2.5-computer-use-preview-10-2025' },
      '/cua/canvas.html',
    );
    expect(state.status).toBe('done');
    expect(requests[0]!.path).toContain('gemini-2.5-computer-use-preview-10-2025:generateContent');
    expect(JSON.stringify(requests[0]!.body.tools)).toContain('ENVIRONMENT_BROWSER');
    expect(requests.map((r) => lastUrlIn(r)).some((u) => u.endsWith('#approved'))).toBe(true);
  });

  it('types a secret by its placeholder; the value never reaches the model', async () => {
    llm.setHandler((r) => {
      if (done(r, 'unlocked')) return anthropicComputerReply(r, [], 'Unlocked.');
      if (lastUrlIn(r).includes('#')) return anthropicComputerReply(r, [], `CANNOT: ${lastUrlIn(r)}`);
      const asked = JSON.stringify(r.body).includes('passphrase%');
      return asked
        ? anthropicComputerReply(r, [
            { action: 'left_click', coordinate: [190, 135] },
            { action: 'type', text: '%passphrase%' },
            { action: 'key', text: 'Return' },
          ])
        : anthropicComputerReply(r, [], 'CANNOT: no placeholder offered');
    });
    const { state, steps, requests } = await run(
      { provider: 'anthropic', model: 'claude-sonnet-4' },
      '/cua/login.html',
      {},
      { passphrase: SECRET },
    );
    expect(state.status).toBe('done');
    for (const r of requests) expect(JSON.stringify(r.body)).not.toContain(SECRET);

    // The run compiles into a workflow by the elements its clicks landed on, and replays with no model.
    const workflow = await compileAgentSample({
      actionLog: steps,
      result: { status: 'done', data: {}, url: state.url },
    });
    expect(workflow.nodes.map((n) => n.type)).toEqual([
      'browser_action',
      'browser_action',
      'browser_action',
      'browser_action',
    ]);
    expect(JSON.stringify(workflow)).not.toContain(SECRET);
    const policy = mergePolicy(
      { allowPrivate: false, allowHosts: [] },
      { allowHosts: [`127.0.0.1:${site.port}`] },
    );
    const replay = await openSession({ browser, policy });
    try {
      const before = llm.requests.length;
      const done = await runWorkflow(
        workflow,
        { tenant: 't', runId: 'replay', sampleId: 's', url: `${site.url}/cua/login.html`, inputs: {} },
        { page: replay.page, checkNavigation: replay.checkNavigation, variables: { passphrase: SECRET } },
      );
      expect(done.status, done.reason).toBe('done');
      expect(llm.requests.length).toBe(before);
      expect(replay.page.url()).toMatch(/#unlocked$/);
    } finally {
      await replay.close();
    }
  });

  it('paints a secret-holding field black in the screenshot the model gets', async () => {
    const s = await openSession({
      browser,
      policy: mergePolicy(
        { allowPrivate: false, allowHosts: [] },
        { allowHosts: [`127.0.0.1:${site.port}`] },
      ),
    });
    try {
      await s.page.goto(`${site.url}/cua/login.html`);
      await s.page.fill('#pw', SECRET);
      const shot = await captureScreen(s.page, 'anthropic', { secrets: { passphrase: SECRET } });
      const img = PNG.sync.read(Buffer.from(shot.data, 'base64'));
      const box = (await s.page.locator('#pw').boundingBox())!;
      // Sample a row through the middle of the field, where the typed text would be.
      const y = Math.round(box.y + box.height / 2);
      let dark = 0;
      for (let x = Math.round(box.x + 4); x < box.x + box.width - 4; x++) {
        const i = (y * img.width + x) * 4;
        if ((img.data[i] ?? 255) < 16 && (img.data[i + 1] ?? 255) < 16 && (img.data[i + 2] ?? 255) < 16)
          dark++;
      }
      expect(dark).toBeGreaterThan((box.width - 8) * 0.95);
      // And the field is back as it was for the page.
      expect(await s.page.$eval('#pw', (el) => (el as HTMLElement).style.cssText)).toBe('');
    } finally {
      await s.close();
    }
  });

  it('runs through POST /v1/agent with mode "cua", and names a model that has no computer use', async () => {
    const root = await tempRoot();
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: { ANTHROPIC_API_KEY: 'sk-ant', ANTHROPIC_BASE_URL: llm.url },
      agentStores: () => ({
        runStore: new LocalRunStore(join(root, 'runs')),
        evidence: new LocalEvidenceStore(join(root, 'ev')),
      }),
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    try {
      llm.setHandler((r) =>
        done(r, 'palette')
          ? anthropicComputerReply(r, [], 'Opened.')
          : anthropicComputerReply(r, [{ action: 'key', text: 'ctrl+k' }]),
      );
      const post = (body: unknown) =>
        fetch(`${base}/v1/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
          body: JSON.stringify(body),
        });
      const ok = await post({
        url: `${site.url}/cua/chord.html`,
        goal: 'open the palette',
        mode: 'cua',
        model: 'anthropic/claude-sonnet-4',
      });
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as {
        status: string;
        data: { answer: string };
        usage: { calls: number };
      };
      expect(body).toMatchObject({ status: 'done', data: { answer: 'Opened.' } });
      expect(body.usage.calls).toBe(2);
      const bad = await post({
        url: `${site.url}/cua/chord.html`,
        goal: 'x',
        mode: 'cua',
        model: 'mistral/large',
      });
      expect(bad.status).toBe(400);
      expect(JSON.stringify(await bad.json())).toMatch(/model: .*anthropic, openai, google/);
    } finally {
      server.close();
    }
  });

  it('runs a run spec in mode "cua" through the run state machine, the provider chosen by the model name', async () => {
    const stores = await tempStores('bfn-cua-run-');
    const saved = { url: process.env.GOOGLE_GEMINI_BASE_URL, key: process.env.GEMINI_API_KEY };
    process.env.GOOGLE_GEMINI_BASE_URL = llm.url;
    process.env.GEMINI_API_KEY = 'g-run';
    try {
      llm.setHandler((r) =>
        done(r, 'approved')
          ? geminiComputerReply(r, [], 'Approved.')
          : geminiComputerReply(r, [
              {
                name: 'click_at',
                args: { x: Math.round((APPROVE.x / 1280) * 1000), y: Math.round((APPROVE.y / 800) * 1000) },
              },
            ]),
      );
      const spec = parseTaskSpec({
        goal: 'approve the request',
        maxSteps: 4,
        mode: 'cua',
        model: 'google/gemini-2.5-computer-use-preview-10-2025',
      });
      expect(spec.computerUse).toEqual({ model: 'google/gemini-2.5-computer-use-preview-10-2025' });
      const input = await createRun(stores.runStore, stores.evidence, {
        tenant: 'cua',
        spec,
        samples: [{ sampleId: 'one', url: `${site.url}/cua/canvas.html`, input: {} }],
      });
      // The run's chat-model factory is the real one: a google/… name is no chat model, and must not be asked for.
      const handlers = runHandlers(
        runDeps(stores, browser, site, llm, {
          llmFor: async (m) => {
            if (m) throw new Error(`chat model asked for: ${m}`);
            return undefined;
          },
        }),
      );
      await startLocalRun(input, handlers, { retryPauseMs: 1 }).result;
      const [result] = await stores.runStore.listResults('cua', input.runId);
      expect(result).toMatchObject({ status: 'done', data: { answer: 'Approved.' } });
      expect(Number(result!.usage.promptTokens)).toBeGreaterThan(0);
      expect(() => parseTaskSpec({ goal: 'x', mode: 'cua' })).toThrow(
        /task spec model: mode "cua" needs a computer-use model/,
      );
    } finally {
      if (saved.url === undefined) delete process.env.GOOGLE_GEMINI_BASE_URL;
      else process.env.GOOGLE_GEMINI_BASE_URL = saved.url;
      if (saved.key === undefined) delete process.env.GEMINI_API_KEY;
      else process.env.GEMINI_API_KEY = saved.key;
      await stores.cleanup();
    }
  });

  it('continues across slices from plain JSON, each on a fresh page, the conversation kept by reference', async () => {
    let turns = 0;
    llm.setHandler((r) => {
      turns++;
      if (done(r, 'palette')) return anthropicComputerReply(r, [], 'Opened.');
      // First turn: look around; second: the chord; a slice boundary after each turn.
      return turns === 1
        ? anthropicComputerReply(r, [{ action: 'mouse_move', coordinate: [100, 100] }])
        : anthropicComputerReply(r, [{ action: 'key', text: 'ctrl+k' }]);
    });
    const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
    const deps: AgentDeps = {
      ...env.deps,
      computerUse: createComputerUseModel({
        provider: 'anthropic',
        model: 'claude-sonnet-4',
        baseURL: llm.url,
        apiKey: 'k',
      }),
    };
    let state = newAgentState({
      tenant: 't',
      runId: 'cua-slices',
      sampleId: 's',
      url: `${site.url}/cua/chord.html`,
      task: { goal: 'open the palette', maxSteps: 6, computerUse: { model: 'anthropic/claude-sonnet-4' } },
    });
    let slices = 0;
    while (state.status === 'running' && slices < 6) {
      state = JSON.parse(
        JSON.stringify(await runSlice(state, deps, { deadline: Date.now() + 60_000, maxSteps: 1 })),
      );
      slices++;
    }
    expect(state.status).toBe('done');
    expect(slices).toBe(3);
    expect(state.cua?.conversationKey).toMatch(/cua_conversation\.json$/);
    // The state stays small: the conversation (with its screenshots) lives in the evidence.
    expect(JSON.stringify(state).length).toBeLessThan(20_000);
    const results = await env.runStore.listResults('t', 'cua-slices');
    expect(results).toHaveLength(1);
  });
});
