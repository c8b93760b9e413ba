/**
 * `browserfn workflow validate|save|list|export` as a user runs it (a real process, the local store
 * under a temp folder): a bad file is one line naming alias and field with exit 1; a saved workflow
 * exports as a playwright-core script by id.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bfn-wf-cli-'));
  await writeFile(
    join(dir, 'good.json'),
    JSON.stringify({
      name: 'Buy flow',
      nodes: [
        { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: 'https://shop.test/' } },
        {
          alias: 'buy',
          type: 'browser_action',
          config: {
            action: 'click',
            target: { candidates: [{ kind: 'css', value: '#buy' }], instruction: 'buy' },
          },
        },
      ],
    }),
  );
  await writeFile(
    join(dir, 'bad.json'),
    JSON.stringify({
      name: 'Bad',
      nodes: [{ alias: 'open', type: 'browser_action', config: { action: 'navigate' } }],
    }),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function cli(args: string[]) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir() },
        timeout: 90_000,
        cwd: dir,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('browserfn workflow', () => {
  it('validates a file: ok, or one line naming the node and field with a non-zero exit', async () => {
    const good = await cli(['workflow', 'validate', 'good.json']);
    expect(good.code).toBe(0);
    expect(good.stdout).toContain('ok: Buy flow, 2 top-level nodes');
    const bad = await cli(['workflow', 'validate', 'bad.json']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/nodes\.0\.config\.url \(open\): .*expected string/);
    const missing = await cli(['workflow', 'validate', 'nope.json']);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain('nope.json: missing');
  });

  it('saves versions, lists them, and exports the stored workflow as a playwright-core script', async () => {
    expect((await cli(['workflow', 'save', 'good.json', '--id', 'buy'])).stdout).toContain('saved buy v1');
    expect((await cli(['workflow', 'save', 'good.json', '--id', 'buy'])).stdout).toContain('saved buy v2');
    expect((await cli(['workflow', 'list'])).stdout).toContain('buy\tv2\tBuy flow');
    const exported = await cli(['workflow', 'export', 'buy', '--playwright', '--out', 'buy.ts']);
    expect(exported.code).toBe(0);
    const script = await readFile(join(dir, 'buy.ts'), 'utf8');
    expect(script).toContain('playwright-core');
    expect(script).toContain('#buy');
    const unknown = await cli(['workflow', 'export', 'nosuch', '--playwright']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('no workflow "nosuch"');
    expect((await cli(['workflow', 'export', 'buy'])).stderr).toContain('--playwright');
  });
});
