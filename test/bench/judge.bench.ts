/**
 * bench:judge — the judge on 40 planted runs (20 right, 20 wrong in five ways: data that contradicts
 * its screenshot, a missing field, a CAPTCHA wall, a step budget spent, a skipped part of the goal)
 * with a scripted model that answers every open key point truthfully: verdicts right out of 40, and
 * the judge's prompt tokens per run. Then a real 10-step agent run (the agent benchmark's invoice
 * task) judged from its evidence: judge tokens against the run's own agent tokens (target ≤ 40%).
 * Exits non-zero when any verdict is wrong or the agent run fails.
 */
import { runAgent } from '../../lib/agent/run-agent.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { judgeStoredSample, judgeTaskFromSpec } from '../../lib/judge/index.ts';
import { agentEnv, perStep } from '../support/agent-env.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { INVOICE_GOAL, INVOICE_PASSWORD, INVOICE_START, invoiceStep } from '../support/invoice-task.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { client } from '../support/ops-env.ts';
import {
  openPointsIn,
  type PlantedSample,
  plannedSample,
  plantSample,
  truthfulReply,
} from '../support/planted-runs.ts';
import { tempStores } from '../support/runs-env.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const [browser, site, llm, stores] = await Promise.all([
  startBrowser(),
  startFixtureServer(),
  startScriptedModel(),
  tempStores('bfn-bench-judge-'),
]);
const outcome = new BenchOutcome('bench:judge', 'verdicts and runs');
/** The figures, printed only after the ok count (and only when nothing failed). */
const report: string[] = [];
try {
  const page = (await openPage(browser)).page;
  const planted = Array.from({ length: RUNS }, (_, i) => plannedSample(i));
  for (const p of planted) await plantSample(stores, page, 'bench', 'planted', p);
  llm.setHandler((req) => {
    const p = planted.find((s) => req.text.includes(`/p/${s.sampleId}`));
    return p
      ? { json: truthfulReply(p, openPointsIn(req.text)) }
      : { status: 500, body: { error: { message: 'unknown sample' } } };
  });
  const rows: (string | number)[][] = [
    ['sample', 'kind', 'expected', 'verdict', 'blocked by', 'prompt tokens'],
  ];
  const promptTokens: number[] = [];
  const wrong: PlantedSample[] = [];
  for (const p of planted) {
    const task = judgeTaskFromSpec({ goal: p.goal, requiredFields: ['price'] });
    const v = await judgeStoredSample(stores, 'bench', 'planted', p.sampleId, task, client(llm, 'openai'));
    const right = v.verdict === p.expected && v.blockedBy === p.expectedBlocker;
    if (!right) wrong.push(p);
    outcome.record(right, `${p.sampleId} (${p.kind}): expected ${p.expected}, judged ${v.verdict}`);
    promptTokens.push(v.usage.promptTokens);
    rows.push([p.sampleId, p.kind, p.expected, v.verdict, v.blockedBy, v.usage.promptTokens]);
  }
  report.push(`verdicts right: ${RUNS - wrong.length} of ${RUNS}`);
  if (process.env.BENCH_VERBOSE) report.push(table(rows));
  report.push(
    `judge prompt tokens per planted run: p50 ${percentile(promptTokens, 50)}, max ${Math.max(...promptTokens)} (runs decided by rules alone: ${promptTokens.filter((t) => t === 0).length})`,
  );
  for (const p of wrong) report.push(`WRONG: ${p.sampleId} (${p.kind}) expected ${p.expected}`);

  // A real 10-step agent run, then the judge on what it left behind.
  llm.setHandler(perStep((step, r) => invoiceStep(r, step)));
  const env = await agentEnv({
    browser: () => browser,
    site,
    llm,
    flavour: 'openai',
    variables: { password: INVOICE_PASSWORD },
  });
  const state = await runAgent(
    {
      tenant: 'bench',
      runId: 'real',
      sampleId: 's',
      url: `${site.url}${INVOICE_START}`,
      task: { goal: INVOICE_GOAL, maxSteps: 12 },
    },
    env.deps,
  );
  const ran = state.status === 'done' && state.step === 10;
  outcome.record(
    ran,
    `the 10-step agent run ended ${state.status} after ${state.step} steps: ${state.reason}`,
  );
  if (ran) {
    llm.setHandler((req) => ({
      json: {
        keyPoints: openPointsIn(req.text).map((o) => ({
          index: o.index,
          met: 'yes',
          evidenceStep: 0,
          why: 'shown',
        })),
        blockedBy: 'none',
        impossibleTask: false,
        reasoning: 'the log and the screenshot show it',
      },
    }));
    const v = await judgeStoredSample(
      { runStore: env.runStore, evidence: env.evidence },
      'bench',
      'real',
      's',
      judgeTaskFromSpec({ goal: INVOICE_GOAL }),
      client(llm, 'openai'),
    );
    const share = v.usage.promptTokens / state.usage.promptTokens;
    report.push(
      table([
        ['10-step run', 'agent prompt tokens', 'judge prompt tokens', 'judge / agent', 'verdict'],
        ['invoices', state.usage.promptTokens, v.usage.promptTokens, `${round(share * 100)}%`, v.verdict],
      ]),
    );
    outcome.record(v.verdict === 'pass', `the real run was judged ${v.verdict}, not pass`);
  }
} finally {
  await closeGuardProxies();
  await browser.close();
  await site.close();
  await llm.close();
  await stores.cleanup();
}
await outcome.gate();
for (const part of report) console.log(part);
