import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrapSites, type TrapSites } from '../support/trap-site.ts';

/** The CLI as a user meets it: a child process, real Chromium, loopback sites only. */

let trap: TrapSites;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  trap = await startTrapSites();
  dir = await mkdtemp(join(tmpdir(), 'bfn-honest-cli-'));
  await writeFile(
    join(dir, 'page.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Local</title></head><body>
     <h1>Local page</h1><form onsubmit="event.preventDefault(); document.querySelector('p').textContent = 'sent'">
     <label for="e">Email</label><input id="e"><button type="submit">Sign in</button></form><p></p></body></html>`,
  );
  await writeFile(
    join(dir, 'wander.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Wander</title></head><body>
     <p>leaving</p><script>setTimeout(() => { location.href = ${JSON.stringify(pathToFileURL(join(dir, 'page.html')).toString())}; }, 30)</script></body></html>`,
  );
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.pid) process.kill(c.pid, 'SIGTERM');
  await trap?.close();
  await rm(dir, { recursive: true, force: true });
});

const baseEnv = () => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  TMPDIR: process.env.TMPDIR ?? tmpdir(),
  BROWSERFN_CACHE_DIR: join(dir, 'cache'),
});

function cli(args: string[], opts: { cwd?: string } = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      { env: baseEnv(), timeout: 60_000, cwd: opts.cwd ?? process.cwd() },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const lines = (s: string) => s.split('\n').filter((l) => l.trim());

describe('CLI: failures are failures', () => {
  it('a navigation refused after load exits non-zero with one line naming the URL and the rule', async () => {
    const snap = await cli(['snapshot', `${trap.origin}/meta-refresh`]);
    expect(snap.code).toBe(1);
    expect(snap.stdout).toBe('');
    expect(lines(snap.stderr)).toHaveLength(1);
    expect(snap.stderr).toContain(`${trap.secretOrigin}/meta`);
    expect(snap.stderr).toMatch(/loopback/);
    const act = await cli(['act', `${trap.origin}/links`, 'click the Secret report link']);
    expect(act.code).toBe(1);
    expect(JSON.parse(act.stdout).error).toMatchObject({ kind: 'blocked', url: `${trap.secretOrigin}/link` });
    expect(lines(act.stderr)).toHaveLength(1);
    expect(act.stderr).toMatch(new RegExp(`blocked: .*${trap.secretOrigin}/link.*loopback`));
    expect(trap.secretHits).toEqual([]);
  });

  it('an unreachable page exits non-zero naming the URL; an HTTP error page loads with its status', async () => {
    const closed = await cli(['snapshot', `http://127.0.0.1:${trap.closedPort}/`]);
    expect(closed.code).toBe(1);
    expect(closed.stdout).toBe('');
    expect(closed.stderr).toContain(`could not reach http://127.0.0.1:${trap.closedPort}/`);
    const dns = await cli(['observe', 'http://nowhere.invalid/']);
    expect(dns.code).toBe(1);
    expect(dns.stderr).toMatch(/could not reach http:\/\/nowhere\.invalid\/: .*DNS/);
    const missing = await cli(['observe', `${trap.origin}/missing`]);
    // Said on failure: once, with two suites at once, this exited 1 and nothing told why.
    expect(missing.code, missing.stderr).toBe(0);
    expect(JSON.parse(missing.stdout).status).toBe(404);
    const tree = await cli(['snapshot', `${trap.origin}/broken`]);
    expect(tree.code, tree.stderr).toBe(0);
    expect(tree.stdout).toMatch(/, HTTP 500$/m);
  });
});

describe('CLI: local files', () => {
  it('opens a path or a file:// URL the operator typed, and acts on it', async () => {
    const byPath = await cli(['snapshot', './page.html'], { cwd: dir });
    expect(byPath.code).toBe(0);
    expect(byPath.stdout).toMatch(/\[\d+\] button: Sign in/);
    const url = pathToFileURL(join(dir, 'page.html')).toString();
    const act = await cli(['act', url, 'click the Sign in button']);
    expect(act.code).toBe(0);
    expect(JSON.parse(act.stdout)).toMatchObject({ success: true, url });
    const missing = await cli(['snapshot', './nope.html'], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/the file .*nope\.html does not exist/);
  });

  it('never lets the page go on to another file: URL', async () => {
    const res = await cli(['snapshot', join(dir, 'wander.html')]);
    expect(res.code).toBe(1);
    expect(res.stdout).not.toContain('Local page');
    expect(res.stderr).toMatch(/file URLs are not allowed/);
  });
});

describe('CLI: help', () => {
  it('prints each command its own usage with --help, and the top level lists every flag the README lists', async () => {
    for (const [command, flag] of [
      ['act', '--var name=value'],
      ['observe', '--selector'],
      ['extract', '--schema'],
      ['snapshot', '--som'],
      ['serve', '--port'],
    ]) {
      const res = await cli([command!, '--help']);
      expect(res.code, command).toBe(0);
      expect(res.stdout).toMatch(new RegExp(`^usage: browserfn ${command} `));
      expect(res.stdout).toContain(flag);
    }
    const top = await cli(['--help']);
    expect(top.code).toBe(0);
    const readme = await readFile(join(process.cwd(), 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## CLI'),
      readme.indexOf('\n## ', readme.indexOf('## CLI') + 1),
    );
    const flags = [...new Set(section.match(/--[a-z][a-z-]*/g) ?? [])];
    expect(flags.length).toBeGreaterThan(8);
    for (const f of flags) expect(top.stdout, f).toContain(f);
  });
});

describe('CLI: waiting on a terminal', () => {
  it('says what it waits for on a TTY after ~2 s, and nothing when stderr is not a terminal', async () => {
    const url = `${trap.origin}/slow?ms=3500`;
    const tty = await new Promise<string>((resolve) => {
      const cmd = `${process.execPath} ${join(process.cwd(), 'bin/browserfn.js')} snapshot '${url}' --json`;
      execFile('script', ['-qec', cmd, '/dev/null'], { env: baseEnv(), timeout: 60_000 }, (_e, stdout) =>
        resolve(stdout),
      );
    });
    expect(tty).toContain(`waiting for ${url} to load`);
    const piped = await cli(['snapshot', url]);
    expect(piped.code).toBe(0);
    expect(piped.stderr).not.toContain('waiting for');
  });
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

describe('browserfn serve', () => {
  it('says in one line that the port is taken, and exits non-zero', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const res = await cli(['serve', '--port', String(port)]);
      expect(res.code).toBe(1);
      expect(lines(res.stderr)).toHaveLength(1);
      expect(res.stderr).toContain(`port ${port}`);
      expect(res.stderr).toMatch(/already in use.*--port/);
    } finally {
      taken.close();
    }
  });

  it('prints a curl line that works offline, on its own demo page', async () => {
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), 'serve', '--port', String(port)],
      {
        env: baseEnv(),
      },
    );
    children.push(child);
    let out = '';
    const tryLine = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no curl line in: ${out}`)), 30_000);
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith('try: curl '));
        if (line) {
          clearTimeout(timer);
          resolve(line.slice('try: '.length));
        }
      });
    });
    expect(tryLine).toContain(`http://127.0.0.1:${port}/demo`);
    const answer = await new Promise<string>((resolve) =>
      execFile('sh', ['-c', tryLine], { timeout: 60_000 }, (_e, stdout) => resolve(stdout)),
    );
    const json = JSON.parse(answer);
    expect(json.success).toBe(true);
    expect(json.usage.promptTokens).toBe(0);
    // The demo page is the only thing of the server's own origin a page may open.
    const key = /Bearer ([\w-]+)/.exec(tryLine)![1];
    const api = await fetch(`http://127.0.0.1:${port}/v1/observe`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `http://127.0.0.1:${port}/healthz` }),
    });
    expect(api.status).toBe(403);
    process.kill(child.pid!, 'SIGTERM');
    const exited = await Promise.race([
      new Promise((r) => child.once('exit', () => r(true))),
      new Promise((r) => setTimeout(() => r(false), 15_000)),
    ]);
    if (!exited) child.kill('SIGKILL');
    expect(exited).toBe(true);
  }, 150_000);
});
