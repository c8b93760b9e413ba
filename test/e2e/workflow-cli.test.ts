/**
 * `browserfn workflow validate|save|list|export` as a user runs it (a real process, the local store
 * under a temp folder): a bad file is one line naming alias and field with exit 1; a saved workflow
 * exports as a playwright-core script by id; a workflow marked readable from its served HTML runs with
 * no browser at all.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shopProduct, startStaticShop } from '../support/static-shop.ts';

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

function cli(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), ...env },
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

  it('runs a workflow marked readable from its served HTML without starting a browser', async () => {
    const shop = await startStaticShop();
    try {
      const read = (selector: string, type: string) => ({ selector, type });
      await writeFile(
        join(dir, 'chair.json'),
        JSON.stringify({
          name: 'Chair',
          inputs: { url: { type: 'string' } },
          nodes: [
            { alias: 'open', type: 'browser_action', config: { action: 'navigate', url: '{{inputs.url}}' } },
            {
              alias: 'data',
              type: 'browser_query',
              config: {
                method: 'extract',
                instruction: 'the chair',
                store_variable: true,
                extractor: {
                  fields: {
                    name: read('h1.name', 'string'),
                    price: read('p.price', 'number'),
                    sku: read('span.sku', 'string'),
                  },
                },
              },
            },
          ],
          staticRead: {
            verified: true,
            enabled: true,
            url: `${shop.url}/p/1`,
            checkedAt: new Date().toISOString(),
          },
        }),
      );
      // A browser this process would start cannot start: only a run without one can succeed.
      const noBrowser = { BROWSERFN_CHROMIUM_PATH: join(dir, 'no-chromium-here') };
      const run = await cli(['workflow', 'run', 'chair.json', `${shop.url}/p/4`], noBrowser);
      expect(run.code, run.stderr).toBe(0);
      const { name, price, sku } = shopProduct(4);
      expect(JSON.parse(run.stdout.slice(0, run.stdout.indexOf('\n}') + 2))).toEqual({
        data: { name, price, sku },
      });
      expect(run.stdout).toMatch(/static-html/);
      // The same file on a page whose data script fills in: it needs the browser, which cannot start.
      shop.setMode('script');
      const needsBrowser = await cli(['workflow', 'run', 'chair.json', `${shop.url}/p/5`], noBrowser);
      expect(needsBrowser.code).not.toBe(0);
    } finally {
      await shop.close();
    }
  });
});
