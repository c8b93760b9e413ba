/**
 * bench:run-load — one tenant's big run against another tenant's calls (issue 21, item 1). The Node
 * server runs in a child process under the common 1,024-file limit. Tenant alpha has a 10,000-sample
 * run and polls its status ten at a time plus its whole results; tenant beta reads its own small run.
 * Figures: beta's p50/p95 idle and under that load, alpha's answers by status, and the server's RSS
 * before and after alpha posts a 10,000-sample run through the API. Every beta call must answer 200
 * and no alpha read may be a 5xx, or the bench fails.
 *
 * BENCH_TREE runs another checkout's server (e.g. the code before the fix) with this same script;
 * BENCH_NODE_ARGS adds flags to the server's node (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import type { SampleRecord } from '../../lib/store/ports.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 10_000);
const RESULTS = Number(process.env.BENCH_RESULTS ?? 500);
const NOFILE = Number(process.env.BENCH_NOFILE ?? 1024);
const BETA_CALLS = Number(process.env.BENCH_BETA_CALLS ?? 60);
const STATUS_POLLERS = Number(process.env.BENCH_STATUS_POLLERS ?? 10);
const RESULTS_POLLERS = Number(process.env.BENCH_RESULTS_POLLERS ?? 1);
const tree = process.env.BENCH_TREE ?? process.cwd();
/** Extra flags for the server's node, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its time goes. */
const serverFlags = process.env.BENCH_NODE_ARGS ?? '';
const keys = { alpha: 'key-alpha', beta: 'key-beta' };
const outcome = new BenchOutcome('bench:run-load', 'calls');

async function storeRun(
  store: LocalRunStore,
  tenant: string,
  runId: string,
  samples: number,
  results: number,
) {
  const now = new Date().toISOString();
  await store.createRun({
    tenant,
    runId,
    status: 'done',
    spec: { goal: 'read' },
    sampleCount: samples,
    createdAt: now,
    updatedAt: now,
  });
  const list: SampleRecord[] = Array.from({ length: samples }, (_, i) => ({
    tenant,
    runId,
    sampleId: `s${String(i).padStart(5, '0')}`,
    url: `http://127.0.0.1:9/p${i}`,
    input: {},
    status: 'pending',
    attempts: 0,
    updatedAt: now,
  }));
  await store.putSamples(list);
  for (let i = 0; i < results; i++)
    await store.putResult({
      tenant,
      runId,
      sampleId: list[i]!.sampleId,
      status: 'done',
      reason: 'ok',
      data: { n: i },
      usage: { promptTokens: 10 },
      evidence: [],
      writtenAt: now,
    });
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function main() {
  const root = await mkdtemp(join(tmpdir(), 'bfn-bench-load-'));
  const store = new LocalRunStore(join(root, 'runs'));
  const setupStart = Date.now();
  await storeRun(store, 'alpha', 'big', SAMPLES, RESULTS);
  await storeRun(store, 'beta', 'small', 3, 3);
  console.error(`stored the runs in ${Date.now() - setupStart} ms`);

  const script = join(tree, 'test/support/scripts/serve-once.ts');
  const child: ChildProcess = spawn(
    'sh',
    ['-c', `ulimit -n ${NOFILE} && exec node ${serverFlags} --import tsx ${script}`],
    {
      cwd: tree,
      env: {
        ...process.env,
        BROWSERFN_API_KEYS: `${keys.alpha}:alpha,${keys.beta}:beta`,
        BROWSERFN_RUNS_DIR: join(root, 'runs'),
        BROWSERFN_EVIDENCE_DIR: join(root, 'evidence'),
        BROWSERFN_CACHE_DIR: join(root, 'cache'),
        BROWSERFN_RUN_MAX_SAMPLES: String(SAMPLES),
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await rm(root, { recursive: true, force: true });
  };
  const { url: base, pid } = JSON.parse(
    await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve)),
  ) as { url: string; pid: number };
  const get = (key: string, path: string) =>
    fetch(`${base}${path}`, {
      headers: { authorization: `Bearer ${key}` },
      // A server that stops answering must show as failed calls, not hang the bench.
      signal: AbortSignal.timeout(15_000),
    });

  /** Beta's calls one after another: latencies, and each one's outcome recorded. */
  const betaRound = async (label: string) => {
    const ms: number[] = [];
    for (let i = 0; i < BETA_CALLS; i++) {
      const t = performance.now();
      try {
        const res = await get(keys.beta, '/v1/runs/small');
        const body = (await res.json()) as { totals?: { samples: number } };
        ms.push(performance.now() - t);
        outcome.record(res.status === 200 && body.totals?.samples === 3, `${label}: beta got ${res.status}`);
      } catch (err) {
        outcome.record(false, `${label}: beta call failed: ${(err as Error).message}`);
      }
    }
    return ms;
  };

  await betaRound('warm-up');
  const idle = await betaRound('idle');

  let polling = true;
  const alpha = new Map<number | string, number>();
  const poller = async (path: string) => {
    while (polling) {
      try {
        const res = await get(keys.alpha, path);
        await res.arrayBuffer();
        alpha.set(res.status, (alpha.get(res.status) ?? 0) + 1);
      } catch {
        alpha.set('dropped', (alpha.get('dropped') ?? 0) + 1);
      }
    }
  };
  const load = [
    ...Array.from({ length: STATUS_POLLERS }, () => poller('/v1/runs/big')),
    ...Array.from({ length: RESULTS_POLLERS }, () => poller('/v1/runs/big/results')),
  ];
  const loaded = await betaRound('under load');
  polling = false;
  await Promise.all(load);
  for (const [status, n] of alpha)
    if (typeof status === 'string' || status >= 500)
      outcome.record(false, `alpha: ${n} reads answered ${status}`);

  // RSS around posting a 10,000-sample run through the API (its samples fail at the guard; cancelled).
  const rssBefore = await rssMb(pid);
  const samples = Array.from({ length: SAMPLES }, (_, i) => ({
    sample_id: `p${i}`,
    url: `http://127.0.0.1:9/p${i}`,
  }));
  const posted = await fetch(`${base}/v1/runs`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys.alpha}`, 'content-type': 'application/json' },
    body: JSON.stringify({ spec: { goal: 'read the heading' }, samples }),
  });
  const started = (await posted.json()) as { runId?: string };
  outcome.record(posted.status === 202, `posting the ${SAMPLES}-sample run answered ${posted.status}`);
  let rssPeak = await rssMb(pid);
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 250));
    rssPeak = Math.max(rssPeak, await rssMb(pid));
  }
  if (started.runId)
    await fetch(`${base}/v1/runs/${started.runId}/cancel`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.alpha}` },
    });

  // Also to stderr before the gate: a run that failed (the code before a fix) still shows its figures.
  const figures = {
    bench: 'run-load',
    samples: SAMPLES,
    nofile: NOFILE,
    betaIdleP50: round(percentile(idle, 50)),
    betaIdleP95: round(percentile(idle, 95)),
    betaLoadP50: round(percentile(loaded, 50)),
    betaLoadP95: round(percentile(loaded, 95)),
    alpha: Object.fromEntries(alpha),
    rssBeforeMb: round(rssBefore),
    rssAfterMb: round(rssPeak),
  };
  console.error(JSON.stringify(figures));
  await outcome.gate(stop);
  console.log(
    table([
      ['figure', 'value'],
      ['beta p50 / p95 idle (ms)', `${round(percentile(idle, 50))} / ${round(percentile(idle, 95))}`],
      [
        'beta p50 / p95 under load (ms)',
        `${round(percentile(loaded, 50))} / ${round(percentile(loaded, 95))}`,
      ],
      ['alpha reads by answer', [...alpha].map(([s, n]) => `${s}: ${n}`).join(', ')],
      ['server RSS before / 5 s after posting the run (MB)', `${round(rssBefore)} / ${round(rssPeak)}`],
    ]),
  );
  console.log(JSON.stringify(figures));
  await stop();
}

await main();
