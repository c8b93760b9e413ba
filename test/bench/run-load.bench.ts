/**
 * bench:run-load — one tenant's big run against another tenant's calls (issue 21, item 1). The Node
 * server runs in a child process under the common 1,024-file limit. Tenant alpha has a 10,000-sample
 * run and polls its status ten at a time plus its whole results, from a process of its own (another
 * client, as a real tenant is); tenant beta reads its own small run from this one. Beta's calls are
 * timed in blocks, idle and under that load in turn, so a machine whose other work comes and goes
 * weighs on both figures alike. Figures: beta's p50/p95 idle and under load, alpha's answers by
 * status, and the server's RSS before and after alpha posts a 10,000-sample run through the API.
 * Every beta call must answer 200 and no alpha read may be a 5xx or dropped, or the bench fails.
 *
 * BENCH_TREE runs another checkout's server (e.g. the code before the fix) with this same script;
 * BENCH_NODE_ARGS adds flags to the server's node (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`);
 * BENCH_POST=0 leaves out posting the big run (a profile of the polling alone).
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
/** Beta's calls per block; blocks idle and under load take turns. */
const BETA_CALLS = Number(process.env.BENCH_BETA_CALLS ?? 20);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 5);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 3000);
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

/** The server's CPU time so far (ms): user + system, from /proc. */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) ", in clock ticks.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
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
  let load: ChildProcess | undefined;
  const stop = async () => {
    if (load && load.exitCode === null) load.kill('SIGTERM');
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

  // The server warms its browser as it starts: let that settle before anything is timed.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  await betaRound('warm-up');

  load = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(import.meta.dirname, 'lib/poll-load.ts'),
      JSON.stringify({
        base,
        key: keys.alpha,
        paths: [
          ...Array.from({ length: STATUS_POLLERS }, () => '/v1/runs/big'),
          ...Array.from({ length: RESULTS_POLLERS }, () => '/v1/runs/big/results'),
        ],
      }),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const loadLines = createInterface({ input: load.stdout! })[Symbol.asyncIterator]();
  const alpha = new Map<string, number>();
  const idle: number[] = [];
  const loaded: number[] = [];
  /** The server's CPU use under load: ms of CPU per s of wall time, summed over the load blocks. */
  const busy = { cpu: 0, wall: 0 };
  for (let block = 0; block < BLOCKS; block++) {
    idle.push(...(await betaRound('idle')));
    load.stdin!.write('start\n');
    // The pollers' first reads are under way before beta's first timed call.
    await new Promise((r) => setTimeout(r, 300));
    const [cpu0, wall0] = [await cpuMs(pid), performance.now()];
    loaded.push(...(await betaRound('under load')));
    busy.cpu += (await cpuMs(pid)) - cpu0;
    busy.wall += performance.now() - wall0;
    load.stdin!.write('stop\n');
    const counts = JSON.parse(String((await loadLines.next()).value)) as Record<string, number>;
    for (const [status, n] of Object.entries(counts)) alpha.set(status, (alpha.get(status) ?? 0) + n);
  }
  load.stdin!.end();
  for (const [status, n] of alpha)
    if (status === 'dropped' || Number(status) >= 500)
      outcome.record(false, `alpha: ${n} reads answered ${status}`);

  // RSS around posting a 10,000-sample run through the API (its samples fail at the guard; cancelled).
  const rssBefore = await rssMb(pid);
  if (process.env.BENCH_POST === '0') {
    await outcome.gate(stop);
    console.log(JSON.stringify(figuresOf(idle, loaded, alpha, busy, rssBefore, rssBefore)));
    await stop();
    return;
  }
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

  const figures = figuresOf(idle, loaded, alpha, busy, rssBefore, rssPeak);
  // Also to stderr before the gate: a run that failed (the code before a fix) still shows its figures.
  console.error(JSON.stringify(figures));
  await outcome.gate(stop);
  console.log(
    table([
      ['figure', 'value'],
      ['beta p50 / p95 idle (ms)', `${figures.betaIdleP50} / ${figures.betaIdleP95}`],
      ['beta p50 / p95 under load (ms)', `${figures.betaLoadP50} / ${figures.betaLoadP95}`],
      ['beta p95 under load / idle (target ≤ 2)', figures.p95Ratio],
      ['alpha reads by answer', [...alpha].map(([s, n]) => `${s}: ${n}`).join(', ')],
      ['server CPU under load (% of one core)', figures.serverCpuUnderLoadPct],
      [
        'server RSS before / 5 s after posting the run (MB)',
        `${figures.rssBeforeMb} / ${figures.rssAfterMb}`,
      ],
    ]),
  );
  console.log(JSON.stringify(figures));
  await stop();
}

function figuresOf(
  idle: number[],
  loaded: number[],
  alpha: Map<string, number>,
  busy: { cpu: number; wall: number },
  rssBefore: number,
  rssAfter: number,
) {
  return {
    bench: 'run-load',
    samples: SAMPLES,
    nofile: NOFILE,
    betaIdleP50: round(percentile(idle, 50)),
    betaIdleP95: round(percentile(idle, 95)),
    betaLoadP50: round(percentile(loaded, 50)),
    betaLoadP95: round(percentile(loaded, 95)),
    p95Ratio: round(percentile(loaded, 95) / percentile(idle, 95)),
    alpha: Object.fromEntries(alpha),
    serverCpuUnderLoadPct: round((100 * busy.cpu) / busy.wall),
    rssBeforeMb: round(rssBefore),
    rssAfterMb: round(rssAfter),
  };
}

await main();
