/**
 * bench:cua — what a computer-use step costs besides the model: capture and scale the screenshot,
 * carry the action out, find the element under the point, record the step. A scripted model answers
 * at once with one click per turn on the canvas fixture (1288×711 viewport), through each provider's
 * SDK; overhead = step time − model time. Also the image bytes each request carried.
 * Exits non-zero when a run does not finish.
 */
import type { AgentDeps } from '../../lib/agent/deps.ts';
import { runAgent } from '../../lib/agent/run-agent.ts';
import type { StepRecord } from '../../lib/agent/state.ts';
import { mergePolicy } from '../../lib/browser/guard-policy.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { openSession } from '../../lib/browser/session.ts';
import { createComputerUseModel } from '../../lib/llm/computer-use/index.ts';
import type { ComputerUseProvider } from '../../lib/llm/computer-use/types.ts';
import { agentEnv } from '../support/agent-env.ts';
import { startBrowser } from '../support/browser.ts';
import { anthropicComputerReply, geminiComputerReply, openAiComputerReply } from '../support/cua-wire.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { type RecordedRequest, startScriptedModel } from '../support/llm-server.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const STEPS = Number(process.env.BENCH_STEPS ?? 20);
const VIEWPORT = { width: 1288, height: 711 };
const [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
const policy = mergePolicy(
  { allowPrivate: false, allowHosts: [] },
  { allowHosts: [`127.0.0.1:${site.port}`] },
);
const MODELS: Record<ComputerUseProvider, string> = {
  anthropic: 'claude-sonnet-4',
  openai: 'computer-use-preview',
  google: 'gemini-2.5-computer-use-preview-10-2025',
};

/** Base64 image bytes in a request body (the screenshots it carried). */
const imageBytes = (r: RecordedRequest) =>
  [
    ...JSON.stringify(r.body).matchAll(
      /"(?:data|image_url)":"(?:data:image\/\w+;base64,)?([A-Za-z0-9+/=]{200,})"/g,
    ),
  ].reduce((n, m) => n + Math.floor(((m[1]?.length ?? 0) * 3) / 4), 0);

function reply(provider: ComputerUseProvider, r: RecordedRequest, turn: number) {
  const x = 480 + (turn % 5) * 8;
  const last = turn >= STEPS;
  if (provider === 'anthropic')
    return last
      ? anthropicComputerReply(r, [], 'done')
      : anthropicComputerReply(r, [{ action: 'left_click', coordinate: [x, 330] }]);
  if (provider === 'openai')
    return last
      ? openAiComputerReply(r, [], 'done')
      : openAiComputerReply(r, [{ type: 'click', button: 'left', x, y: 330 }]);
  return last
    ? geminiComputerReply(r, [], 'done')
    : geminiComputerReply(r, [
        { name: 'click_at', args: { x: Math.round((x / VIEWPORT.width) * 1000), y: 464 } },
      ]);
}

const rows: (string | number)[][] = [
  ['provider', 'format', 'steps', 'overhead p50 ms', 'p90 ms', 'capture p50 ms', 'image KB/request p50'],
];
const outcome = new BenchOutcome('bench:cua', 'runs');
try {
  for (const provider of ['anthropic', 'openai', 'google'] as const)
    for (const format of ['png', 'jpeg'] as const) {
      const env = await agentEnv({ browser: () => browser, site, llm, flavour: 'openai' });
      let turn = 0;
      llm.setHandler((r) => reply(provider, r, turn++));
      const baseURL = provider === 'openai' ? llm.openaiBaseURL : llm.url;
      const deps: AgentDeps = {
        ...env.deps,
        computerUse: createComputerUseModel({ provider, model: MODELS[provider], baseURL, apiKey: 'k' }),
        newPage: async () => {
          const s = await openSession({ browser, policy, viewport: VIEWPORT });
          return { page: s.page, close: () => s.close() };
        },
      };
      const steps: StepRecord[] = [];
      deps.onStep = (s) => steps.push(s);
      const before = llm.requests.length;
      const state = await runAgent(
        {
          tenant: 'bench',
          runId: `cua-${provider}-${format}`,
          sampleId: 's',
          url: `${site.url}/cua/canvas.html`,
          task: {
            goal: 'click the canvas',
            maxSteps: STEPS + 2,
            computerUse: { model: `${provider}/${MODELS[provider]}`, format },
          },
        },
        deps,
      );
      outcome.record(
        state.status === 'done',
        `${provider}/${format}: ended ${state.status}: ${state.reason}`,
      );
      const acting = steps.filter((s) => s.actions.length > 0);
      const overhead = acting.map((s) => s.ms - s.modelMs);
      const bytes = llm.requests.slice(before).map(imageBytes);
      rows.push([
        provider,
        format,
        acting.length,
        round(percentile(overhead, 50)),
        round(percentile(overhead, 90)),
        round(
          percentile(
            acting.map((s) => s.observeMs),
            50,
          ),
        ),
        round(percentile(bytes, 50) / 1024),
      ]);
    }
} finally {
  await closeGuardProxies();
  await browser.close();
  await site.close();
  await llm.close();
}
await outcome.gate();
console.log(table(rows));
