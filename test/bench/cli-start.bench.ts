/**
 * bench:cli-start — what one `browserfn` invocation costs before it does its work: CPU (user +
 * system of the CLI process, Chromium's own processes not counted) and wall time per command, run
 * from the TypeScript sources through tsx (BROWSERFN_FROM_SOURCE=1) and from the built dist/
 * (what bin/browserfn.js runs when dist/ is current). CLI-driven tests pay this on every call.
 *
 *   npm run build && npm run bench:cli-start        (BENCH_RUNS=5 for more runs; median shown)
 *
 * Each invocation must exit with the code the command gives (0, or 2 for a usage error): a figure
 * of a CLI that crashed at start would measure nothing.
 */
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, table } from './lib/report.ts';

const repo = process.cwd();
const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 3) || 3);
const dir = await mkdtemp(join(tmpdir(), 'bfn-cli-start-'));
// The CLI's own CPU, written to stderr as it exits (process.exit runs 'exit' listeners).
const hook = join(dir, 'cpu.mjs');
await writeFile(
  hook,
  "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\nBENCH_CPU_MS ' + (u.user + u.system) / 1000 + '\\n'); });\n",
);
const page = join(dir, 'page.html');
await writeFile(page, '<h1>Sign in</h1><label>Email <input name="email"></label><button>Sign in</button>');

const COMMANDS: { args: string[]; exit: number }[] = [
  { args: ['--help'], exit: 0 },
  { args: ['verify', '20261204-000000-abcdef'], exit: 2 },
  { args: ['workflow', 'validate', join(repo, 'examples/catalogue.workflow.json')], exit: 0 },
  { args: ['agent'], exit: 2 },
  { args: ['snapshot', page], exit: 0 },
  { args: ['act', page, 'click the Sign in button'], exit: 0 },
];

function once(args: string[], fromSource: boolean): Promise<{ code: number; cpu: number; wall: number }> {
  const env = { ...process.env, BROWSERFN_FROM_SOURCE: fromSource ? '1' : '0', BROWSERFN_MODEL: '' };
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', hook, join(repo, 'bin/browserfn.js'), ...args],
      { cwd: dir, env, timeout: 120_000 },
      (err, _stdout, stderr) => {
        const cpu = Number(/BENCH_CPU_MS (\S+)/.exec(stderr)?.[1] ?? Number.NaN);
        resolve({ code: err ? Number(err.code ?? 1) : 0, cpu, wall: performance.now() - started });
      },
    );
  });
}

const outcome = new BenchOutcome('bench:cli-start', 'invocations');
/** bin/browserfn.js's own rule: dist/ runs only when no source under lib/ or infra/ is newer. */
function builtIsCurrent(): boolean {
  let builtAt: number;
  try {
    builtAt = statSync(join(repo, 'dist/lib/cli/main.js')).mtimeMs;
  } catch {
    return false;
  }
  return ['lib', 'infra'].every((d) =>
    readdirSync(join(repo, d), { recursive: true, withFileTypes: true }).every(
      (e) =>
        !e.isFile() || !e.name.endsWith('.ts') || statSync(join(e.parentPath, e.name)).mtimeMs <= builtAt,
    ),
  );
}
if (!builtIsCurrent()) {
  console.log('bench:cli-start: dist/ is missing or older than the sources; run `npm run build` first');
  await outcome.gate(() => rm(dir, { recursive: true, force: true }));
}
const rows: (string | number)[][] = [
  ['command', 'source cpu ms', 'built cpu ms', 'source wall ms', 'built wall ms'],
];
for (const { args, exit } of COMMANDS) {
  const figures: Record<'source' | 'built', { cpu: number[]; wall: number[] }> = {
    source: { cpu: [], wall: [] },
    built: { cpu: [], wall: [] },
  };
  for (let i = 0; i < RUNS; i++)
    for (const mode of ['source', 'built'] as const) {
      const r = await once(args, mode === 'source');
      outcome.record(r.code === exit && Number.isFinite(r.cpu), `${mode} ${args.join(' ')}: exit ${r.code}`);
      figures[mode].cpu.push(r.cpu);
      figures[mode].wall.push(r.wall);
    }
  const median = (v: number[]) => Math.round(percentile(v, 50));
  rows.push([
    args.map((a) => (a.startsWith(dir) || a.startsWith(repo) ? a.split('/').pop()! : a)).join(' '),
    median(figures.source.cpu),
    median(figures.built.cpu),
    median(figures.source.wall),
    median(figures.built.wall),
  ]);
}
await outcome.gate(() => rm(dir, { recursive: true, force: true }));
await rm(dir, { recursive: true, force: true });
console.log(`median of ${RUNS} runs each; "built" runs dist/ only when it is current (npm run build)`);
console.log(table(rows));
