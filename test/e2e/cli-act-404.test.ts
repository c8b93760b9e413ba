/**
 * Issue 28 item 3: `act` on a page that answered 404 says so, not "could not resolve" — in the CLI
 * and on the API alike (one rule, lib/ops/gone.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { closeGuardProxies } from '../../lib/browser/guard-proxy.ts';
import { startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let dir: string;
let site: FixtureServer;
let browser: Browser;

beforeAll(async () => {
  [site, browser] = await Promise.all([startFixtureServer(), startBrowser()]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-act-404-'));
});
afterAll(async () => {
  await closeGuardProxies();
  await browser?.close();
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

describe('POST /v1/act on a missing page', () => {
  it('answers the same reason as the CLI, in the result the caller reads', async () => {
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: {},
    });
    const res = await app.request('/v1/act', {
      method: 'POST',
      headers: { authorization: 'Bearer key-a', 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${site.url}/no-such-page.html`, instruction: 'click the login button' }),
    });
    // No model here: the op cannot go on, and the reason it gives is the missing page, not the model.
    const body = (await res.json()) as { error: { kind: string; message: string } };
    expect(res.status).toBe(502);
    expect(body.error.kind).toBe('navigation');
    expect(body.error.message).toContain('the page answered HTTP 404 (not found)');
    expect(JSON.stringify(body)).not.toContain('could not resolve');
  });
});
