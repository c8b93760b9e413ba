import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { finishWith, headingIn } from '../support/runs-env.ts';

let site: FixtureServer;
let llm: ScriptedModel;
let dir: string;
/** When the model answered which page (by its heading). */
const answered: { title: string; at: number }[] = [];

const SLUGS = Array.from({ length: 10 }, (_, i) => `item-${String.fromCharCode(97 + i)}`);
const titleOf = (slug: string) => slug.replace(/-/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase());

beforeAll(async () => {
  [site, llm] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-runs-cli-'));
  // Slow enough that a kill lands mid-run.
  llm.setHandler((req) => {
    const title = headingIn(req) ?? '';
    answered.push({ title, at: Date.now() });
    return { delayMs: 250, reply: finishWith({ title }) };
  });
  await writeFile(
    join(dir, 'spec.json'),
    JSON.stringify({
      goal: 'the product name',
      mode: 'extract',
      outputSchema: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
      requiredFields: ['title'],
    }),
  );
  await writeFile(
    join(dir, 'samples.csv'),
    ['sample_id,url,note', ...SLUGS.map((s) => `${s},${site.url}/products/${s}.html,"n, ${s}"`)].join('\n'),
  );
});
afterAll(async () => {
  await site?.close();
  await llm?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  TMPDIR: process.env.TMPDIR,
  OPENAI_API_KEY: 'sk-test',
  OPENAI_BASE_URL: llm.openaiBaseURL,
  BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
});

interface Started {
  child: ChildProcess;
  stdout: () => string;
  exit: Promise<number | null>;
}

function start(args: string[]): Started {
  // Its own process group, so a kill takes its Chromium down with it, as a machine loss would.
  const child = spawn(process.execPath, ['bin/browserfn.js', ...args], { env: env(), detached: true });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stdout: () => out, exit };
}

/** Polls `fn` until it answers; fails at once, with what the CLI printed, if the CLI `p` exits first. */
async function until<T>(fn: () => Promise<T | undefined>, p?: Started, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  let exited = false;
  void p?.exit.then(() => {
    exited = true;
  });
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (exited) throw new Error(`the CLI exited before it got there:\n${p!.stdout()}`);
    if (Date.now() > end) throw new Error(`timed out waiting; the CLI printed:\n${p?.stdout() ?? ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const resultsDir = (runId: string) => join(dir, '.browserfn', 'runs', 'local', runId, 'results');
async function results(runId: string): Promise<Map<string, string>> {
  const names = await readdir(resultsDir(runId)).catch(() => [] as string[]);
  const out = new Map<string, string>();
  for (const n of names.filter((n) => n.endsWith('.json')))
    out.set(n, await readFile(join(resultsDir(runId), n), 'utf8'));
  return out;
}

/**
 * Runs the CLI until `atLeast` results exist, then SIGKILLs it and its browser — also when the wait
 * fails, so no run is left asking the model during the next test.
 */
async function runAndKill(args: string[], atLeast: number, runId?: string): Promise<string> {
  const p = start(args);
  try {
    const id = runId ?? (await until(async () => /run (\S+) started/.exec(p.stdout())?.[1], p));
    await until(async () => ((await results(id)).size >= atLeast ? true : undefined), p);
    return id;
  } finally {
    try {
      process.kill(-p.child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await p.exit;
  }
}

describe('browserfn run: SIGKILL, then resume; verify', () => {
  it('killed three times mid-run and resumed: every sample has exactly one result, nothing redone, hashes verify', async () => {
    const out = ['--out', dir, '--concurrency', '2'];
    const first = ['run', '--task', join(dir, 'spec.json'), '--input', join(dir, 'samples.csv'), ...out];
    const runId = await runAndKill(first, 3);
    // What had been written at each kill, and when the kill happened.
    const kills: { at: number; written: Map<string, string> }[] = [
      { at: Date.now(), written: await results(runId) },
    ];
    for (let i = 0; i < 2; i++) {
      const before = kills.at(-1)!.written.size;
      expect(before).toBeLessThan(SLUGS.length);
      await runAndKill(['run', '--resume', runId, ...out], before + 2, runId);
      kills.push({ at: Date.now(), written: await results(runId) });
    }
    expect(kills.at(-1)!.written.size).toBeLessThan(SLUGS.length);

    const last = start(['run', '--resume', runId, ...out]);
    expect(await last.exit).toBe(0);
    expect(last.stdout()).toContain(`run ${runId} done: ${SLUGS.length} done`);

    const final = await results(runId);
    expect([...final.keys()].sort()).toEqual(SLUGS.map((s) => `${s}.json`));
    for (const kill of kills) {
      // Results written before a kill were kept as they were, not written again…
      for (const [name, body] of kill.written) expect(final.get(name)).toBe(body);
      // …and their pages were not worked on again afterwards.
      const asked = answered.filter((a) => a.at > kill.at + 300).map((a) => a.title);
      for (const body of kill.written.values())
        expect(asked).not.toContain((JSON.parse(body) as { data: { title: string } }).data.title);
    }

    const csv = await readFile(join(dir, 'evidence', 'local', `run_${runId}`, 'combined.csv'), 'utf8');
    const rows = parse(csv, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => [r.sample_id, r.status, r.title])).toEqual(
      SLUGS.map((s) => [s, 'done', titleOf(s)]),
    );

    const verify = start(['verify', runId, '--out', dir]);
    expect(await verify.exit, verify.stdout()).toBe(0);
    const files =
      [...final.values()].reduce(
        (n, b) => n + (JSON.parse(b) as { evidence: unknown[] }).evidence.length,
        0,
      ) + 2;
    expect(verify.stdout()).toMatch(new RegExp(`^ok: ${files} evidence files match`));

    const report = start(['report', runId, '--out', dir]);
    expect(await report.exit).toBe(0);
    const html = await readFile(report.stdout().trim(), 'utf8');
    expect(html.match(/<tr class="sample"/g)).toHaveLength(SLUGS.length);
    expect(html.match(/<img alt="01_page\.jpg" src="data:image\/jpeg;base64,/g)).toHaveLength(SLUGS.length);

    // Change one screenshot by a byte: verify names it and fails.
    const shot = join(dir, 'evidence', 'local', `run_${runId}`, 'samples', 'item-c', '01_page.jpg');
    const bytes = await readFile(shot);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3]! + 1) % 256;
    await writeFile(shot, bytes);
    const tampered = start(['verify', runId, '--out', dir]);
    expect(await tampered.exit).toBe(1);
    expect(tampered.stdout()).toMatch(
      /^TAMPERED: entry \d+ \(local\/run_[^/]+\/samples\/item-c\/01_page\.jpg\): file edited/,
    );
  }, 480_000);

  it('a dead link fails with its reason on its line, without asking the model; the run exits 1', async () => {
    await writeFile(
      join(dir, 'one-bad.csv'),
      ['sample_id,url', `good,${site.url}/products/good.html`, `gone,${site.url}/no-such-page`].join('\n'),
    );
    const asked = answered.length;
    const p = start([
      'run',
      '--task',
      join(dir, 'spec.json'),
      '--input',
      join(dir, 'one-bad.csv'),
      '--out',
      join(dir, 'one-bad'),
    ]);
    expect(await p.exit).toBe(1);
    const out = p.stdout();
    expect(out).toMatch(/^good: done — /m);
    expect(out).toMatch(
      /^gone: failed \(could not open http:\/\/[^ ]+\/no-such-page: the page answered HTTP 404 \(not found\)\) — /m,
    );
    expect(out).toMatch(/done: 1 done, 1 failed/);
    // Only the good page was shown to the model: an error page is not read as data.
    expect(answered.slice(asked).map((a) => a.title)).toEqual(['Good']);
  });

  it('bad input: one line naming the problem, exit 2, no run started', async () => {
    await writeFile(join(dir, 'bad.csv'), 'sample_id,url\nok,http://127.0.0.1/\nbad,file:///etc/passwd\n');
    const cases: [string[], RegExp][] = [
      [
        ['run', '--input', join(dir, 'samples.csv')],
        /give --task spec\.json, --prompt "…" or --resume RUN_ID/,
      ],
      [
        ['run', '--task', join(dir, 'spec.json'), '--input', join(dir, 'bad.csv')],
        /bad\.csv line 3, column 2 \(url\)/,
      ],
      [
        [
          'run',
          '--task',
          join(dir, 'spec.json'),
          '--input',
          join(dir, 'samples.csv'),
          '--url',
          'http://a.test/',
        ],
        /not both/,
      ],
      [['run', '--resume', 'no-such-run', '--out', join(dir, 'empty')], /--resume: no run "no-such-run"/],
      [['run', '--task', join(dir, 'nope.json'), '--url', 'http://a.test/'], /--task: cannot read/],
    ];
    const runs = await Promise.all(
      cases.map(async ([args]) => {
        const p = start([...args, ...(args.includes('--out') ? [] : ['--out', join(dir, 'bad-input')])]);
        return { code: await p.exit, out: p.stdout() };
      }),
    );
    runs.forEach(({ code, out }, i) => {
      expect(code).toBe(2);
      expect(out.split('\n')[0]).toMatch(cases[i]![1]);
    });
    expect(await readdir(join(dir, 'bad-input')).catch(() => [])).toEqual([]);
  });

  // Retried once: twice in CI (never here, in 30+ runs under load) this run sat at "running 2" for
  // 45 s. The first failure's diagnosis is printed either way, so a retry cannot hide a pattern.
  it('on a terminal the progress is a live bar with counts, pages/min, tokens, cost and ETA', {
    retry: 1,
  }, async () => {
    await writeFile(
      join(dir, 'two.csv'),
      ['sample_id,url', ...['tty-a', 'tty-b'].map((s) => `${s},${site.url}/products/${s}.html`)].join('\n'),
    );
    const args = [
      'run',
      '--task',
      join(dir, 'spec.json'),
      '--input',
      join(dir, 'two.csv'),
      '--out',
      join(dir, 'tty'),
    ];
    // `script` gives the CLI a pseudo-terminal, as a user's shell would.
    const command = [process.execPath, 'bin/browserfn.js', ...args].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      env: { ...env(), TERM: 'xterm' },
      detached: true,
    });
    let out = '';
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
    });
    // A run of two pages takes seconds: past this, end it and fail with what the terminal showed,
    // which pages were requested and what the model was asked, to tell where it stood.
    let seen = '';
    const stuck = setTimeout(() => {
      seen =
        `\npages requested: ${site.hits.filter((h) => h.includes('tty-')).join(', ') || 'none'}` +
        `\nmodel asked about: ${
          answered
            .map((a) => a.title)
            .filter((t) => /tty/i.test(t))
            .join(', ') || 'nothing'
        }`;
      process.kill(-child.pid!, 'SIGKILL');
    }, 100_000);
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    clearTimeout(stuck);
    const diagnosis = `the CLI on a terminal printed:\n${out}${seen}`;
    if (code !== 0) console.error(`[runs-cli tty] exit ${code}: ${diagnosis}`);
    expect(code, diagnosis).toBe(0);
    expect(out).toMatch(
      /█+░*\s+\d\/2 \| done \d failed 0 running \d \| [\d.]+ pages\/min \| \d+ tokens \| USD [\d.]+ \| ETA/,
    );
    expect(out).toMatch(/█{10,} 2\/2 \| done 2 failed 0/);
    // The plain per-sample lines are for logs, not for a terminal.
    expect(out).not.toMatch(/tty-a: done — /);
  });
});
