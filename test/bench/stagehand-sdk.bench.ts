/**
 * bench:stagehand-sdk — one Stagehand script (goto, act, act, observe, extract), run by the official
 * 3.7 SDK twice in the same process: in API mode against browserfn (STAGEHAND_API_URL /
 * BROWSERBASE_BASE_URL) and in LOCAL mode on the same embedded Chromium binary. Both use the same
 * scripted model server, which answers each side in its own schema. Wall time is measured around
 * each SDK call; prompt tokens per call are the SDK's own `stagehand.metrics` deltas (the model
 * server's usage reports, counted with o200k_base). browserfn runs without its action cache, so
 * repeated runs show the pipeline, not cache hits.
 */
import type { AddressInfo } from 'node:net';
import { Stagehand } from '@browserbasehq/stagehand';
import { serve } from '@hono/node-server';
import { z } from 'zod';
import { createApp } from '../../lib/api/app.ts';
import { launchDebuggableBrowser } from '../../lib/api/stagehand/browser.ts';
import { createStagehandService } from '../../lib/api/stagehand/index.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { chromiumArgs, embeddedExecutablePath } from '../../lib/browser/launch.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { type RecordedRequest, startScriptedModel } from '../support/llm-server.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const WARMUP = 1;
const [site, llm, dbg] = await Promise.all([
  startFixtureServer(),
  startScriptedModel(),
  launchDebuggableBrowser(),
]);

/** `[12] role: name` (ours) or `[0-12] role: name` (Stagehand's): the id as that side writes it. */
function idOf(text: string, role: string, name: string): string {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`\\[([\\d-]+)\\] ${role}: ${escaped}(?:$| )`, 'm').exec(text);
  if (!m) throw new Error(`no "${role}: ${name}" in the prompt`);
  return m[1]!;
}

/** Each side's schema, the same decision: fill the password, point at Sign in, read the heading. */
llm.setHandler((r: RecordedRequest) => {
  switch (r.schemaName) {
    case 'choose_action':
      return {
        json: {
          elementId: Number(idOf(r.text, 'textbox', 'Password')),
          method: 'fill',
          arguments: ['%pw%'],
          twoStep: false,
          reason: 'the password box',
        },
      };
    case 'act':
      return {
        json: {
          action: {
            elementId: idOf(r.text, 'textbox', 'Password'),
            description: 'the password box',
            method: 'fill',
            arguments: ['%pw%'],
          },
          twoStep: false,
        },
      };
    case 'list_elements':
      return {
        json: {
          elements: [
            {
              elementId: Number(idOf(r.text, 'button', 'Sign in')),
              description: 'Sign in',
              method: 'click',
              arguments: [],
            },
          ],
        },
      };
    case 'Observation':
      return {
        json: {
          elements: [
            {
              elementId: idOf(r.text, 'button', 'Sign in'),
              description: 'Sign in',
              method: 'click',
              arguments: [],
            },
          ],
        },
      };
    case 'extracted':
      return { json: { data: { heading: 'Sign in to Acme' }, done: true } };
    case 'Extraction':
      return { json: { heading: 'Sign in to Acme' } };
    case 'Metadata':
      return { json: { progress: 'heading read', completed: true } };
    default:
      return { status: 400 };
  }
});

const keys = new Map([['bench-key', 'bench']]);
const policy = { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] };
const env = { OPENAI_BASE_URL: llm.openaiBaseURL, BROWSERFN_MODEL_MAX_RETRIES: '0' };
const service = createStagehandService({ keys, policy, env, debuggableBrowser: async () => dbg });
const app = createApp({ keys, policy, env, stagehand: service });
const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
  const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
});
server.on('upgrade', (req, socket, head) => {
  if (!service.handleUpgrade(req, socket, head)) socket.destroy();
});
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${service.prefix}`;
process.env.STAGEHAND_API_URL = base;
process.env.BROWSERBASE_BASE_URL = base;

const quiet = { verbose: 0 as const, disablePino: true, logger: () => {} };
const remote = new Stagehand({
  env: 'BROWSERBASE',
  apiKey: 'bench-key',
  model: { modelName: 'openai/gpt-4.1-mini', apiKey: 'sk-test' },
  ...quiet,
});
const local = new Stagehand({
  env: 'LOCAL',
  // The provider/model form goes through the AI SDK's Responses API, which the scripted server
  // does not speak; the bare name uses the same chat-completions endpoint browserfn uses.
  model: { modelName: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL: llm.openaiBaseURL },
  localBrowserLaunchOptions: {
    executablePath: await embeddedExecutablePath(),
    headless: true,
    args: chromiumArgs(),
    viewport: { width: 1288, height: 711 },
  },
  ...quiet,
});
await Promise.all([remote.init(), local.init()]);

type Op = 'goto' | 'act (plain)' | 'act (model)' | 'observe' | 'extract';
const OPS: Op[] = ['goto', 'act (plain)', 'act (model)', 'observe', 'extract'];
type Side = 'browserfn' | 'local';
const samples: Record<Side, Record<Op, { ms: number[]; prompt: number[] }>> = {
  browserfn: Object.fromEntries(OPS.map((o) => [o, { ms: [], prompt: [] }])) as never,
  local: Object.fromEntries(OPS.map((o) => [o, { ms: [], prompt: [] }])) as never,
};
let failures = 0;
let calls = 0;

/** What each call must have done for it to count as a success (both sides, same bar). */
const expected: Record<Op, (out: unknown) => boolean> = {
  goto: () => true,
  'act (plain)': (out) => (out as { success: boolean }).success,
  'act (model)': (out) => (out as { success: boolean }).success,
  observe: (out) => {
    const found = out as { selector: string }[];
    return found.length === 1 && /button/.test(found[0]!.selector);
  },
  extract: (out) => (out as { heading?: string }).heading === 'Sign in to Acme',
};

async function script(side: Side, sh: Stagehand, record: boolean) {
  const page = sh.context.pages()[0]!;
  const steps: [Op, () => Promise<unknown>][] = [
    ['goto', () => page.goto(`${site.url}/login.html`)],
    ['act (plain)', () => sh.act('type "ada@acme.test" into the Email field')],
    [
      'act (model)',
      () => sh.act('put the secret %pw% where the password goes', { variables: { pw: 's3cret' } }),
    ],
    ['observe', () => sh.observe('the button that signs in')],
    ['extract', () => sh.extract('the page heading', z.object({ heading: z.string() }))],
  ];
  for (const [op, run] of steps) {
    const before = (await sh.metrics).totalPromptTokens;
    const t0 = performance.now();
    let ok = true;
    try {
      ok = expected[op](await run());
    } catch (err) {
      ok = false;
      if (record) console.error(`${side} ${op} failed: ${(err as Error).message.split('\n')[0]}`);
    }
    const ms = performance.now() - t0;
    const prompt = (await sh.metrics).totalPromptTokens - before;
    if (!record) continue;
    calls++;
    if (!ok) {
      failures++;
      console.error(`${side} ${op}: wrong result`);
    }
    samples[side][op].ms.push(ms);
    samples[side][op].prompt.push(prompt);
  }
}

for (let i = 0; i < RUNS + WARMUP; i++) {
  // Alternate which side goes first, so neither always runs on a machine the other just warmed.
  const order: [Side, Stagehand][] = [
    ['browserfn', remote],
    ['local', local],
  ];
  if (i % 2) order.reverse();
  for (const [side, sh] of order) await script(side, sh, i >= WARMUP);
}

await Promise.all([remote.close(), local.close({ force: true })]);
await service.close();
server.close();
await closeGuardProxies();
await dbg.browser.close();
await site.close();
await llm.close();

const rows = OPS.map((op) => {
  const b = samples.browserfn[op];
  const l = samples.local[op];
  const bms = percentile(b.ms, 50);
  const lms = percentile(l.ms, 50);
  return {
    op,
    browserfnMs: round(bms),
    localMs: round(lms),
    msRatio: round(bms / lms, 2),
    browserfnPrompt: round(percentile(b.prompt, 50), 0),
    localPrompt: round(percentile(l.prompt, 50), 0),
  };
});
console.log(
  `bench:stagehand-sdk — the same SDK script, API mode on browserfn vs LOCAL mode (p50 of ${RUNS} runs after ${WARMUP} warm-up; scripted model answers at once)\n`,
);
console.log(
  table([
    ['call', 'browserfn ms', 'local ms', 'ratio', 'browserfn prompt tok', 'local prompt tok'],
    ...rows.map((r) => [r.op, r.browserfnMs, r.localMs, r.msRatio, r.browserfnPrompt, r.localPrompt]),
  ]),
);
const sum = (side: Side, key: 'ms' | 'prompt') =>
  (['act (plain)', 'act (model)', 'observe', 'extract'] as Op[]).reduce(
    (s, op) => s + percentile(samples[side][op][key], 50),
    0,
  );
const msRatio = sum('browserfn', 'ms') / sum('local', 'ms');
const tokRatio = sum('browserfn', 'prompt') / sum('local', 'prompt');
console.log(
  `\nact+observe+extract: wall time ${round(msRatio, 2)}× local (target <= 0.5), ` +
    `prompt tokens ${round(tokRatio, 2)}× local (target <= 0.5); ${calls - failures}/${calls} calls succeeded`,
);
console.log(JSON.stringify({ bench: 'stagehand-sdk', runs: RUNS, rows, msRatio, tokRatio, calls, failures }));
process.exit(failures ? 1 : 0);
