/** Issue 28 item 3: `browserfn act` on a page that answered 404 says so, not "could not resolve". */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let dir: string;
let site: FixtureServer;

beforeAll(async () => {
  site = await startFixtureServer();
  dir = await mkdtemp(join(tmpdir(), 'bfn-act-404-'));
});
afterAll(async () => {
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir() },
        timeout: 120_000,
        cwd: dir,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('browserfn act on a missing page', () => {
  it('says the page answered 404, in one line, not could not resolve', async () => {
    const r = await cli(['act', `${site.url}/no-such-page.html`, 'click the login button']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('the page answered HTTP 404 (not found)');
    expect(r.stderr).not.toContain('could not resolve');
  });
});
