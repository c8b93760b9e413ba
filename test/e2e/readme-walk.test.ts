/**
 * Issue 28 item 2 + targets: every command line of the README's blocks marked `<!-- walk -->` runs as
 * written, offline and with no model key, against the server `npm start` runs (started here, once, on
 * a free loopback port). The only rewrites: the port (the README says 8787), the key the server
 * printed for `<key>`, the run id the `run` line printed for `<run-id>`, and `npx browserfn` as the
 * same bin/browserfn.js npx would start. examples/ is copied with the same port rewrite.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = process.cwd();
const bin = join(repo, 'bin/browserfn.js');
const SECRET = 'walk-S3cret-9f2c';
/** No model and no provider key: everything walked must work without one. */
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir() };

let dir: string;
let server: ChildProcess;
let port = 0;
let key = '';
let banner = '';
let serverLog = '';

/** The command lines of the README's walk blocks (a trailing `\` joins lines; `#` comments dropped). */
function walkLines(readme: string): string[] {
  const lines: string[] = [];
  for (const m of readme.matchAll(/<!-- walk -->\n```sh\n([\s\S]*?)```/g))
    for (const line of m[1]!.replace(/\\\n\s*/g, ' ').split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command) lines.push(command);
    }
  return lines;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-walk-'));
  await cp(join(repo, 'examples'), join(dir, 'examples'), { recursive: true });
  server = spawn(process.execPath, [bin, 'serve'], { cwd: dir, env: { ...env, PORT: '0' } });
  server.stderr!.on('data', (d) => {
    serverLog += String(d);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`server exited with ${code}: ${serverLog}`)));
    server.stdout!.on('data', (d) => {
      banner += String(d);
      const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(banner);
      const made = /key for this run: (\S+)/.exec(banner);
      if (listening && made && banner.includes('Stagehand scripts:')) {
        port = Number(listening[1]);
        key = made[1]!;
        resolve();
      }
    });
  });
  for (const file of await readdir(join(dir, 'examples'))) {
    const path = join(dir, 'examples', file);
    await writeFile(path, (await readFile(path, 'utf8')).replaceAll('127.0.0.1:8787', `127.0.0.1:${port}`));
  }
}, 120_000);

afterAll(async () => {
  server?.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

function sh(command: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      '/bin/sh',
      ['-c', command],
      { cwd: dir, env, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('the README, walked offline', () => {
  it('the start banner names the model (none) and what pages may open', () => {
    expect(banner).toContain('model: none (zero-token tier only');
    expect(banner).toMatch(
      /pages may open: public sites \+ the demo pages under http:\/\/127\.0\.0\.1:\d+\/demo/,
    );
  });

  it('every walk line runs as written and does what the README says', async () => {
    const lines = walkLines(await readFile(join(repo, 'README.md'), 'utf8'));
    // The quickstart's curl line and local file, the offline section and its API run, at least.
    expect(lines.length).toBeGreaterThanOrEqual(15);
    let runId = '';
    let cliRunId = '';
    const outputs: [string, string][] = [];
    for (const line of lines) {
      const command = line
        .replaceAll('127.0.0.1:8787', `127.0.0.1:${port}`)
        .replaceAll('<key>', key)
        .replaceAll('<run-id>', runId)
        .replaceAll('npx browserfn ', `${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} `);
      const r = await sh(command);
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      // The CLI prints `run <id> started`; POST /v1/runs answers `{ "runId": … }`.
      cliRunId = /^run (\S+) started/m.exec(r.stdout)?.[1] ?? cliRunId;
      runId = (/^run (\S+) started/m.exec(r.stdout) ?? /"runId":"([^"]+)"/.exec(r.stdout))?.[1] ?? runId;
      outputs.push([line, r.stdout]);
    }
    /** What the first walked line starting with `prefix` printed. */
    const out = (prefix: string) => outputs.find(([l]) => l.startsWith(prefix))?.[1] ?? '';
    // The quickstart's local file: read, acted on, observed and extracted without a model.
    expect(out('npx browserfn snapshot examples/signin.html')).toMatch(/\[\d+\] button: Sign in/);
    expect(JSON.parse(out('npx browserfn act examples/signin.html'))).toMatchObject({
      success: true,
      resolvedBy: 'matcher',
    });
    const fields = JSON.parse(out('npx browserfn observe examples/signin.html')) as {
      elements: { name: string }[];
    };
    expect(fields.elements.map((e) => e.name)).toEqual(expect.arrayContaining(['Email', 'Password']));
    expect(out('npx browserfn extract examples/signin.html')).toContain('Sign in to the demo');
    // curl: the act on the demo sign-in page, answered without a model.
    expect(JSON.parse(out('curl -s http://127.0.0.1:8787/v1/act'))).toMatchObject({
      success: true,
      resolvedBy: 'matcher',
    });
    expect(out('npx browserfn workflow validate')).toMatch(/^ok: demo catalogue/);
    // Every product of the list, read by CSS alone.
    const replay = out('npx browserfn workflow run');
    expect(replay).toContain('"count": 4');
    expect(replay).toMatch(/products\tok\tdeterministic\t0 tokens/);
    expect(replay).toMatch(/done: v1, 0 tokens/);
    expect(cliRunId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/);
    expect(out('npx browserfn run')).toMatch(/run \S+ done: 3 done/);
    expect(out('npx browserfn run')).toContain('spent: 0 tokens');
    const csv = await readFile(join(dir, 'evidence', 'local', `run_${cliRunId}`, 'combined.csv'), 'utf8');
    expect(csv).toContain('Steel Kettle,24.9,12 in stock');
    expect(out('npx browserfn verify')).toMatch(/^ok: \d+ evidence files match the manifest/);
    expect((await stat(out('npx browserfn report').trim())).isFile()).toBe(true);
    expect(out('npx browserfn snapshot http')).toContain('Linen Tea Towel');
    expect(out('npx browserfn extract http')).toContain('Tall Mug');
    expect(JSON.parse(out('npx browserfn act http'))).toMatchObject({ success: true });
    // The run started over the API opened the demo pages (the guard refused them before) and read them.
    const apiRunId = JSON.parse(out('curl -s http://127.0.0.1:8787/v1/runs -H')).runId as string;
    expect(apiRunId).not.toBe(cliRunId);
    const auth = { authorization: `Bearer ${key}` };
    let status = '';
    for (let i = 0; i < 600 && !['done', 'failed', 'cancelled'].includes(status); i++) {
      if (i) await new Promise((r) => setTimeout(r, 500));
      const res = await fetch(`http://127.0.0.1:${port}/v1/runs/${apiRunId}`, { headers: auth });
      status = ((await res.json()) as { status: string }).status;
    }
    const rows = await fetch(`http://127.0.0.1:${port}/v1/runs/${apiRunId}/results?format=csv`, {
      headers: auth,
    });
    const apiCsv = await rows.text();
    expect(status, apiCsv).toBe('done');
    expect(apiCsv).toContain('Tall Mug,8.5,40 in stock');
    expect(apiCsv).toContain('Linen Tea Towel,6.75,85 in stock');
  }, 900_000);

  it('logs each /v1 call with its fields, and never a secret value', async () => {
    const res = await fetch(`http://127.0.0.1:${port}/v1/act`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${port}/demo`,
        instruction: 'type %pw% into the Password field',
        variables: { pw: SECRET },
      }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { success: boolean }).success).toBe(true);
    const lines = serverLog
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const ops = lines.filter((l) => l.msg === 'op' && l.method === 'act');
    expect(ops.at(-1)).toMatchObject({ status: 200, tokens: 0, resolvedBy: 'matcher' });
    expect(typeof ops.at(-1)!.ms).toBe('number');
    expect(serverLog).not.toContain(SECRET);
  }, 120_000);
});
