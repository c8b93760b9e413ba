/**
 * bench:ops — what act / observe / extract cost besides the model: settle, snapshot, prompt
 * building, validation, execution. The model is the scripted local server answering at once, so
 * `total - model ms` is our overhead. Prompt tokens are counted by the server (o200k_base).
 */
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import type { Session } from '../../lib/browser/session.ts';
import { act } from '../../lib/ops/act.ts';
import { extract } from '../../lib/ops/extract.ts';
import { observe } from '../../lib/ops/observe.ts';
import { startBrowser } from '../support/browser.ts';
import { startFixtureServer } from '../support/fixture-server.ts';
import { startScriptedModel } from '../support/llm-server.ts';
import { client, fixtureSession, idInPrompt, opContext } from '../support/ops-env.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const [browser, site, llm] = await Promise.all([startBrowser(), startFixtureServer(), startScriptedModel()]);
const model = client(llm, 'openai');

interface Row {
  op: string;
  page: string;
  overhead: number[];
  prompt: number[];
}
const rows: Row[] = [];
const outcome = new BenchOutcome('bench:ops', 'calls');

async function measure(
  op: string,
  page: string,
  reply: Parameters<typeof llm.setHandler>[0],
  run: (s: Session) => Promise<{ ms: number; usage: { ms: number; promptTokens: number } }>,
) {
  llm.setHandler(reply);
  const session = await fixtureSession(browser, site, page);
  const row: Row = { op, page, overhead: [], prompt: [] };
  try {
    for (let i = 0; i < RUNS + 3; i++) {
      const t0 = performance.now();
      const res = await run(session).catch((err: unknown) => err as Error);
      const total = performance.now() - t0;
      // A call that threw or says it did not succeed is a failure, warm-ups included.
      const failed = res instanceof Error || (res as { success?: boolean }).success === false;
      outcome.record(!failed, `${op} on ${page}: ${res instanceof Error ? res.message : 'success: false'}`);
      if (res instanceof Error || i < 3) continue; // warm-up
      row.overhead.push(total - res.usage.ms);
      row.prompt.push(res.usage.promptTokens);
    }
  } finally {
    await session.close();
  }
  rows.push(row);
}

const fillEmail = (r: { text: string }) => ({
  json: {
    elementId: idInPrompt(r.text, 'textbox', 'Email'),
    method: 'fill',
    arguments: ['%email%'],
    twoStep: false,
    reason: 'x',
  },
});
await measure('act (llm)', '/login.html', fillEmail, (s) =>
  act(
    opContext(s, { llm: model, variables: { email: 'ada@example.com' } }),
    'put my address %email% in its place',
  ),
);
await measure(
  'act (llm)',
  '/products.html',
  (r) => ({
    json: {
      elementId: idInPrompt(r.text, 'combobox', 'Sort by'),
      method: 'select',
      arguments: ['Featured'],
      twoStep: false,
      reason: 'x',
    },
  }),
  (s) => act(opContext(s, { llm: model }), 'order the list the default way'),
);
await measure(
  'act (llm)',
  '/iframes.html',
  (r) => ({
    json: {
      elementId: idInPrompt(r.text, 'textbox', 'Search'),
      method: 'fill',
      arguments: ['shoes'],
      twoStep: false,
      reason: 'x',
    },
  }),
  (s) => act(opContext(s, { llm: model }), 'look up shoes in the embedded widget'),
);
await measure(
  'act (matcher)',
  '/login.html',
  () => ({ status: 500 }),
  (s) => act(opContext(s), 'check remember me'),
);
await measure(
  'observe',
  '/signup.html',
  (r) => ({
    json: {
      elements: [
        {
          elementId: idInPrompt(r.text, 'combobox', 'Country'),
          description: 'country',
          method: 'select',
          arguments: [],
        },
      ],
    },
  }),
  (s) => observe(opContext(s, { llm: model }), 'where do I choose my country'),
);
await measure(
  'extract',
  '/products.html',
  (r) => ({
    json: {
      data: { products: [{ name: 'Sun Hat', price: '$24.00', url: idInPrompt(r.text, 'link', 'Sun Hat') }] },
      done: true,
    },
  }),
  (s) =>
    extract(opContext(s, { llm: model }), 'all products with name, price and link', {
      type: 'object',
      properties: {
        products: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              price: { type: 'string' },
              url: { type: 'string', format: 'uri' },
            },
            required: ['name', 'price', 'url'],
          },
        },
      },
      required: ['products'],
    }),
);

await browser.close();
await closeGuardProxies();
await site.close();
await llm.close();

await outcome.gate();
const out = rows.map((r) => ({
  op: r.op,
  page: r.page,
  p50: round(percentile(r.overhead, 50)),
  p95: round(percentile(r.overhead, 95)),
  promptTokens: round(percentile(r.prompt, 50), 0),
}));
console.log(
  `bench:ops — overhead per call with a zero-latency scripted model (ms, ${RUNS} runs after 3 warm-ups)`,
);
console.log(
  'prompt tokens: counted by the scripted server with o200k_base (gpt-tokenizer), system + messages + schema\n',
);
console.log(
  table([
    ['op', 'page', 'p50 ms', 'p95 ms', 'prompt tokens'],
    ...out.map((o) => [o.op, o.page, o.p50, o.p95, o.promptTokens]),
  ]),
);
const act50 = percentile(
  rows.filter((r) => r.op === 'act (llm)').flatMap((r) => r.overhead),
  50,
);
console.log(`\nact overhead p50 across pages: ${round(act50)} ms (target <= 150)`);
console.log(
  `act prompt on login: ${out.find((o) => o.op === 'act (llm)' && o.page === '/login.html')?.promptTokens} tokens (target <= 1500); ` +
    `extract of products: ${out.find((o) => o.op === 'extract')?.promptTokens} tokens (target <= 3000)`,
);
console.log(JSON.stringify({ bench: 'ops', runs: RUNS, rows: out, actP50: round(act50) }));
