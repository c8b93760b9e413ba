/**
 * bench:agent — what one agent step costs besides the model, on a 10-step fixture task (sign in,
 * page through invoices, save progress, screenshot, navigate, done) with a scripted model that
 * answers at once. Per step: overhead = step wall time − model time (observe, prompt, validation,
 * actions, evidence); per run: (wall − model time) / steps, which adds page opening, checkpoints
 * and the result. Prompt tokens are counted by the scripted server (o200k_base); the cacheable
 * prefix is the part of each request that is identical on every step (system + tool schema).
 */
import { runAgent } from '../../lib/agent/run-agent.ts';
import type { StepRecord } from '../../lib/agent/state.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { agentEnv, isDecision, perStep, replySchemaOf } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { INVOICE_GOAL, INVOICE_PASSWORD, invoiceStep } from '../support/invoice-task.ts';
import { type RecordedRequest, startScriptedModel } from '../support/llm-server.ts';
import type { Flavour } from '../support/ops-env.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';
import { TOKENIZER, tokens } from './lib/tokens.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
const PASSWORD = INVOICE_PASSWORD;
const task = (r: RecordedRequest, step: number) => invoiceStep(r, step);

interface Row {
  flavour: Flavour;
  stepOverhead: number[];
  runOverhead: number[];
  prompt: number[];
  prefixShare: number[];
  cachedShare: number[];
  steps: number[];
}

const prefixTokens = (r: RecordedRequest) => tokens(`${r.system}\n${JSON.stringify(replySchemaOf(r))}`);

async function bench(flavour: Flavour): Promise<Row> {
  const row: Row = {
    flavour,
    stepOverhead: [],
    runOverhead: [],
    prompt: [],
    prefixShare: [],
    cachedShare: [],
    steps: [],
  };
  llm.setHandler(perStep((step, r) => task(r, step)));
  for (let i = 0; i < RUNS + 1; i++) {
    const env = await agentEnv({
      browser: () => browser,
      site,
      llm,
      flavour,
      variables: { password: PASSWORD },
    });
    const records: StepRecord[] = [];
    env.deps.onStep = (s) => records.push(s);
    llm.requests.length = 0;
    const billedBefore = llm.served.promptTokens + llm.served.completionTokens;
    const t0 = performance.now();
    const state = await runAgent(
      {
        tenant: 'bench',
        runId: `run${i}`,
        sampleId: 's',
        url: `${site.url}/agent/login.html`,
        task: {
          goal: INVOICE_GOAL,
          maxSteps: 12,
        },
      },
      env.deps,
    );
    const wall = performance.now() - t0;
    const tracked = state.usage.promptTokens + state.usage.completionTokens;
    const billed = llm.served.promptTokens + llm.served.completionTokens - billedBefore;
    tokenCheck.tracked += tracked;
    tokenCheck.billed += billed;
    outcome.record(
      state.status === 'done' && state.step === 10 && tracked === billed,
      `${flavour} run ${i} ended ${state.status} after ${state.step} steps (${state.reason}); tokens tracked ${tracked}, billed ${billed}`,
    );
    if (i === 0) continue; // warm-up
    row.steps.push(state.step);
    row.runOverhead.push((wall - state.usage.ms) / state.step);
    for (const s of records) {
      if (process.env.BENCH_VERBOSE)
        console.log(s.step, s.actions.map((a) => a.tool).join('+'), {
          observe: s.observeMs,
          model: s.modelMs,
          act: s.actMs,
          total: s.ms,
        });
      row.stepOverhead.push(s.ms - s.modelMs);
      row.prompt.push(s.tokens.prompt);
      row.cachedShare.push(s.tokens.cached / s.tokens.prompt);
    }
    for (const r of llm.requests.filter(isDecision)) {
      const total = records.find((s) => s.step === Number(/^Step (\d+)/.exec(r.text)?.[1]))?.tokens.prompt;
      if (total) row.prefixShare.push(prefixTokens(r) / total);
    }
  }
  return row;
}

const rows: Row[] = [];
const outcome = new BenchOutcome('bench:agent', 'runs');
const tokenCheck = { tracked: 0, billed: 0 };
try {
  for (const flavour of ['openai', 'anthropic'] as const) rows.push(await bench(flavour));
} finally {
  await closeGuardProxies();
  await browser.close();
  await site.close();
  await llm.close();
}

await outcome.gate();
console.log(
  `tokens: tracked by the agent ${tokenCheck.tracked}, billed by the model server ${tokenCheck.billed}`,
);
const p = (xs: number[], q: number, digits = 1) => round(percentile(xs, q), digits);
const pct = (xs: number[], q: number) => `${round(percentile(xs, q) * 100, 0)}%`;
console.log(
  `bench:agent — 10-step fixture task, ${RUNS} runs per provider SDK after 1 warm-up; tokens: ${TOKENIZER}\n`,
);
console.log(
  table([
    [
      'sdk',
      'step overhead p50 ms',
      'p95',
      'run overhead/step p50',
      'prompt tok/step p50',
      'p95',
      'cacheable prefix p50',
      'min',
      'provider-cached p50',
    ],
    ...rows.map((r) => [
      r.flavour,
      p(r.stepOverhead, 50),
      p(r.stepOverhead, 95),
      p(r.runOverhead, 50),
      p(r.prompt, 50, 0),
      p(r.prompt, 95, 0),
      pct(r.prefixShare, 50),
      pct(r.prefixShare, 0),
      pct(r.cachedShare, 50),
    ]),
  ]),
);
console.log(
  '\ntargets: step overhead p50 ≤ 120 ms; prompt tokens/step p50 ≤ 3000; cacheable prefix ≥ 60% of each prompt',
);
console.log(
  '(provider-cached: what the scripted server reports as cache reads — Anthropic caches the marked system part; its OpenAI side reports none)',
);
