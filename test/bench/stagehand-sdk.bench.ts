/**
 * bench:stagehand-sdk — one Stagehand script (goto, act ×2, observe ×2, extract), run by the official
 * 3.7 SDK twice in the same process: in API mode against a browserfn server (its own process, as in
 * real use; STAGEHAND_API_URL / BROWSERBASE_BASE_URL) and in LOCAL mode on the same embedded
 * Chromium binary. Both use the same scripted model server, which answers each side in its own
 * schema; it and the fixture site run in a third process (lib/sdk-world.ts), as a model provider and
 * a website would. Wall time is measured around each SDK call; prompt tokens per call are the SDK's
 * own `stagehand.metrics` deltas (the model server's usage reports, counted with o200k_base).
 * browserfn runs without its action cache, so repeated runs show the pipeline, not cache hits. Act
 * and observe each come twice: phrased so browserfn's matcher answers alone ("plain"), and phrased
 * so that it must ask the model ("model"). BENCH_RUNS (8) runs are measured after BENCH_WARMUP (1);
 * BENCH_SAMPLES=1 prints every sample.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Stagehand } from '@browserbasehq/stagehand';
import { z } from 'zod';
import { chromiumArgs, embeddedExecutablePath } from '../../lib/browser/launch.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 8);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);

/** Starts a helper process and reads the one line it prints when ready. */
async function child(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const proc = spawn(
    process.execPath,
    [...args, '--import', 'tsx', fileURLToPath(new URL(script, import.meta.url))],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env,
    },
  );
  const [line] = (await once(proc.stdout!, 'data')) as [Buffer];
  return { proc, line: line.toString().trim() };
}
const stop = async (proc: ReturnType<typeof spawn>) => {
  proc.stdin!.end();
  await once(proc, 'exit');
};

const world = await child('./lib/sdk-world.ts', [], process.env);
const { siteUrl, sitePort, openaiBaseURL } = JSON.parse(world.line) as {
  siteUrl: string;
  sitePort: number;
  openaiBaseURL: string;
};

const browserfn = await child(
  './lib/stagehand-server.ts',
  // BENCH_PROF=dir: a V8 CPU profile of the server, to see where its side of a call goes.
  process.env.BENCH_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROF}`] : [],
  {
    ...process.env,
    BENCH_KEYS: 'bench-key:bench',
    BENCH_ALLOW_HOSTS: `127.0.0.1:${sitePort}`,
    OPENAI_BASE_URL: openaiBaseURL,
  },
);
const base = browserfn.line;
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
  model: { modelName: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL: openaiBaseURL },
  localBrowserLaunchOptions: {
    executablePath: await embeddedExecutablePath(),
    headless: true,
    args: chromiumArgs(),
    viewport: { width: 1288, height: 711 },
  },
  ...quiet,
});
await Promise.all([remote.init(), local.init()]);

type Op = 'goto' | 'act (plain)' | 'act (model)' | 'observe (plain)' | 'observe (model)' | 'extract';
const OPS: Op[] = ['goto', 'act (plain)', 'act (model)', 'observe (plain)', 'observe (model)', 'extract'];
const MEASURED = OPS.filter((op) => op !== 'goto');
type Side = 'browserfn' | 'local';
/** The login form alone (8 elements), and the same form on a shop page of ordinary size (~320). */
const PAGES = [
  { name: 'login.html', path: '/login.html' },
  { name: 'store.html', path: '/store.html' },
];
type Samples = Record<Side, Record<Op, { ms: number[]; prompt: number[] }>>;
const emptySamples = (): Samples => ({
  browserfn: Object.fromEntries(OPS.map((o) => [o, { ms: [], prompt: [] }])) as never,
  local: Object.fromEntries(OPS.map((o) => [o, { ms: [], prompt: [] }])) as never,
});
const samplesByPage = new Map(PAGES.map((p) => [p.name, emptySamples()]));
let failures = 0;
let calls = 0;
const outcome = new BenchOutcome('bench:stagehand-sdk', 'calls');

/** What each call must have done for it to count as a success (both sides, same bar). */
const expected: Record<Op, (out: unknown) => boolean> = {
  goto: () => true,
  'act (plain)': (out) => (out as { success: boolean }).success,
  'act (model)': (out) => (out as { success: boolean }).success,
  'observe (plain)': (out) => {
    const found = out as { selector: string }[];
    return found.length === 1 && /button/.test(found[0]!.selector);
  },
  'observe (model)': (out) => {
    const found = out as { selector: string }[];
    return found.length === 1 && /input/.test(found[0]!.selector);
  },
  extract: (out) => (out as { heading?: string }).heading === 'Sign in to Acme',
};

async function script(side: Side, sh: Stagehand, path: string, samples: Samples, record: boolean) {
  const page = sh.context.pages()[0]!;
  const steps: [Op, () => Promise<unknown>][] = [
    ['goto', () => page.goto(`${siteUrl}${path}`)],
    ['act (plain)', () => sh.act('type "ada@acme.test" into the Email field')],
    [
      'act (model)',
      () => sh.act('put the secret %pw% where the password goes', { variables: { pw: 's3cret' } }),
    ],
    ['observe (plain)', () => sh.observe('the button that signs in')],
    ['observe (model)', () => sh.observe('something to tick so that I stay signed in')],
    ['extract', () => sh.extract('the page heading', z.object({ heading: z.string() }))],
  ];
  for (const [op, run] of steps) {
    const before = (await sh.metrics).totalPromptTokens;
    const t0 = performance.now();
    let ok = true;
    let out: unknown;
    try {
      out = await run();
      ok = expected[op](out);
    } catch (err) {
      ok = false;
      if (record) console.error(`${side} ${path} ${op} failed: ${(err as Error).message.split('\n')[0]}`);
    }
    const ms = performance.now() - t0;
    const prompt = (await sh.metrics).totalPromptTokens - before;
    if (!record) continue;
    calls++;
    outcome.record(ok, `${side} ${path} ${op}: ${ok ? '' : 'failed or wrong result'}`);
    if (!ok) {
      failures++;
      console.error(
        `${side} ${path} ${op}: wrong result`,
        process.env.BENCH_DEBUG ? JSON.stringify(out).slice(0, 300) : '',
      );
    }
    samples[side][op].ms.push(ms);
    samples[side][op].prompt.push(prompt);
  }
}

for (const p of PAGES)
  for (let i = 0; i < RUNS + WARMUP; i++) {
    // Alternate which side goes first, so neither always runs on a machine the other just warmed.
    const order: [Side, Stagehand][] = [
      ['browserfn', remote],
      ['local', local],
    ];
    if (i % 2) order.reverse();
    for (const [side, sh] of order) await script(side, sh, p.path, samplesByPage.get(p.name)!, i >= WARMUP);
  }

await Promise.all([remote.close(), local.close({ force: true })]);
await stop(browserfn.proc);
await stop(world.proc);

await outcome.gate();
const rowsOf = (samples: Samples) =>
  OPS.map((op) => {
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
type Row = ReturnType<typeof rowsOf>[number];
/** The bar, per call: at most half the local mode's wall time and half its prompt tokens. */
const meets = (r: Row) =>
  r.op === 'goto' ? '' : r.msRatio <= 0.5 && r.browserfnPrompt <= r.localPrompt / 2 ? 'yes' : 'NO';

console.log(
  `bench:stagehand-sdk — the same SDK script, API mode on a browserfn server vs LOCAL mode (p50 of ${RUNS} runs after ${WARMUP} warm-up; scripted model answers at once)`,
);
const pages = PAGES.map(({ name }) => {
  const samples = samplesByPage.get(name)!;
  const rows = rowsOf(samples);
  const sum = (side: Side, key: 'ms' | 'prompt') =>
    MEASURED.reduce((s, op) => s + percentile(samples[side][op][key], 50), 0);
  const msRatio = sum('browserfn', 'ms') / sum('local', 'ms');
  const tokRatio = sum('browserfn', 'prompt') / sum('local', 'prompt');
  const perCall = rows.filter((r) => meets(r) === 'yes').length;
  console.log(`\n${name}`);
  console.log(
    table([
      ['call', 'browserfn ms', 'local ms', 'ratio', 'browserfn prompt tok', 'local prompt tok', '≤ ½ both'],
      ...rows.map((r) => [
        r.op,
        r.browserfnMs,
        r.localMs,
        r.msRatio,
        r.browserfnPrompt,
        r.localPrompt,
        meets(r),
      ]),
    ]),
  );
  console.log(
    `act+observe+extract: wall time ${round(msRatio, 2)}× local, prompt tokens ${round(tokRatio, 2)}× local; ` +
      `${perCall}/${MEASURED.length} calls at ≤ ½ of local on both (target: all)`,
  );
  return { page: name, rows, msRatio, tokRatio, perCall };
});
// BENCH_SAMPLES=1: every sample in run order, to see the spread (and warm-up) behind each p50.
if (process.env.BENCH_SAMPLES)
  for (const [n, s] of samplesByPage)
    for (const op of MEASURED)
      console.log(
        n,
        op,
        s.browserfn[op].ms.map((x) => x.toFixed(1)).join(' '),
        '| local',
        s.local[op].ms.map((x) => x.toFixed(1)).join(' '),
      );
console.log(JSON.stringify({ bench: 'stagehand-sdk', runs: RUNS, pages, calls, failures }));
process.exit(failures ? 1 : 0);
