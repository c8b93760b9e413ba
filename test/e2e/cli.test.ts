import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

let site: FixtureServer;
let dir: string;
beforeAll(async () => {
  site = await startFixtureServer();
  dir = await mkdtemp(join(tmpdir(), 'bfn-cli-'));
});
afterAll(async () => {
  await site?.close();
  await rm(dir, { recursive: true, force: true });
});

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** What the CLI said, for a failed assertion's message. */
  why: string;
}

function cli(...args: string[]): Promise<CliResult> {
  return cliWith({}, ...args);
}

function cliWith(extraEnv: Record<string, string>, ...args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/browserfn.js', ...args],
      {
        // No model configured: everything here must work on the zero-token tier.
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TMPDIR: process.env.TMPDIR,
          BROWSERFN_CACHE_DIR: join(dir, 'cache'),
          // The CLI opens the host you type; the cross-origin iframe's host needs the allow-list.
          BROWSERFN_ALLOW_HOSTS: `127.0.0.1:${site.crossOriginPort}`,
          ...extraEnv,
        },
        timeout: 60_000,
      },
      (err, stdout, stderr) =>
        resolve({
          code: err ? Number(err.code ?? 1) : 0,
          stdout,
          stderr,
          why: stderr + stdout.slice(0, 2000),
        }),
    );
  });
}

describe('browserfn CLI', () => {
  it('snapshot prints the tree and a stats line', async () => {
    const { code, stdout, why } = await cli('snapshot', `${site.url}/login.html`);
    expect(code, why).toBe(0);
    expect(stdout).toMatch(/\[\d+\] button: Sign in/);
    expect(stdout).toMatch(/— \d+ elements \(\d+ interactive\), \d+ chars, ~\d+ tokens, [\d.]+ ms/);
  });

  // Retried once: it failed once in CI with two suites running at once (the cross-origin frame's
  // button missing; settle waits at most 3 s for the page's requests) and never in 5 runs here. The
  // frames the snapshot did read are printed if it fails.
  it('snapshot --json prints the whole Snapshot, --som writes the marked screenshot', {
    retry: 1,
  }, async () => {
    const png = join(dir, 'som.png');
    const { code, stdout, why } = await cli('snapshot', `${site.url}/iframes.html`, '--json', '--som', png);
    expect(code, why).toBe(0);
    const snap = JSON.parse(stdout);
    const cross = snap.elements.find((e: { name: string }) => e.name === 'Cross save');
    expect(cross, `frames read: ${JSON.stringify(snap.frames)}`).toBeDefined();
    expect(cross.locator.xpath).toContain(' >> ');
    expect(cross.box.width).toBeGreaterThan(0);
    expect(snap.stats.tokens).toBeGreaterThan(0);
    expect((await readFile(png)).subarray(1, 4).toString()).toBe('PNG');
  });

  // Retried once: it failed once in CI (exit 1, its stderr not kept then) and never here in 60
  // runs under load. The first failure's stderr is printed either way.
  it('act runs a plain instruction with zero tokens and no model configured', { retry: 1 }, async () => {
    const { code, stdout, why } = await cli('act', `${site.url}/login.html`, 'click the Sign in button');
    if (code !== 0) console.error(`[cli act] exit ${code}: ${why}`);
    expect(code, why).toBe(0);
    const res = JSON.parse(stdout);
    expect(res.success).toBe(true);
    expect(res.resolvedBy).toMatch(/matcher|cache/);
    expect(res.usage.promptTokens).toBe(0);
  });

  it('observe lists the interactive elements', async () => {
    const { code, stdout, why } = await cli('observe', `${site.url}/login.html`);
    expect(code, why).toBe(0);
    expect(JSON.parse(stdout).elements.map((e: { name: string }) => e.name)).toContain('Email');
  });

  it('extract with a schema file goes through the configured model and prints data with usage', async () => {
    const { startScriptedModel } = await import('../support/llm-server.ts');
    const llm = await startScriptedModel({
      handler: () => ({ json: { data: { title: 'Sign in to Acme' }, done: true } }),
    });
    try {
      const schema = join(dir, 'title.json');
      await writeFile(
        schema,
        JSON.stringify({ type: 'object', properties: { title: { type: 'string' } }, required: ['title'] }),
      );
      const { code, stdout, why } = await cliWith(
        {
          OPENAI_API_KEY: 'sk-test',
          OPENAI_BASE_URL: llm.openaiBaseURL,
          BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
        },
        'extract',
        `${site.url}/login.html`,
        'the page title',
        '--schema',
        schema,
      );
      expect(code, why).toBe(0);
      const res = JSON.parse(stdout);
      expect(res.data).toEqual({ title: 'Sign in to Acme' });
      expect(res.usage.promptTokens).toBeGreaterThan(0);
      expect(llm.requests[0]!.text).toContain('h1: Sign in to Acme');
    } finally {
      await llm.close();
    }
  });

  it('bad input: one line, non-zero exit', async () => {
    const cases: [string[], RegExp][] = [
      [['snapshot'], /missing <url>/],
      [['snapshot', 'not a url'], /must be an http\(s\) URL/],
      [['snapshot', `${site.url}/`, '--budget', 'many'], /--budget expects a positive whole number/],
      [['act', `${site.url}/login.html`], /missing "<instruction>"/],
      [['fly'], /unknown command "fly"/],
      [
        ['extract', `${site.url}/login.html`, 'x', '--schema', join(dir, 'nope.json')],
        /--schema: cannot read/,
      ],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await cli(...args);
      expect(code, args.join(' ')).toBe(2);
      expect(stderr.split('\n')[0]).toMatch(message);
      expect(stderr.trimEnd().split('\n'), args.join(' ')).toHaveLength(1);
    }
    const noModel = await cli('act', `${site.url}/login.html`, 'log me in');
    expect(noModel.code).toBe(1);
    expect(noModel.stderr).toMatch(/BROWSERFN_MODEL/);
  });
});
