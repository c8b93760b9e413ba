import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';

const run = promisify(execFile);
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * browserfn as a dependency: a program of its own, in its own folder, imports the package by name
 * (its `exports`, the built `dist/`) from TypeScript and JavaScript, and drives a page with it.
 */
describe('browserfn as a library', () => {
  let app: string;
  let site: FixtureServer;

  beforeAll(async () => {
    // `npm install` builds dist/ (the prepare script); a checkout that skipped it builds here.
    if (!existsSync(join(root, 'dist', 'lib', 'index.js')))
      await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, timeout: 240_000 });
    site = await startFixtureServer();
    app = await mkdtemp(join(tmpdir(), 'bfn-consumer-'));
    await mkdir(join(app, 'node_modules'), { recursive: true });
    await symlink(root, join(app, 'node_modules', 'browserfn'), 'dir');
    await writeFile(
      join(app, 'package.json'),
      JSON.stringify({ name: 'consumer', type: 'module', private: true }),
    );
  }, 300_000);
  afterAll(async () => {
    await site?.close();
    if (app) await rm(app, { recursive: true, force: true });
  });

  it('type-checks a TypeScript program against the package’s own types', async () => {
    await writeFile(
      join(app, 'main.ts'),
      `import { act, extract, observe, openSession, runTask, type ActResult, type TaskSpecInput } from 'browserfn';
const spec: TaskSpecInput = { goal: 'read the heading', mode: 'extract' };
const ops: [typeof act, typeof observe, typeof extract, typeof runTask, typeof openSession] = [act, observe, extract, runTask, openSession];
export async function first(r: Promise<ActResult>): Promise<boolean> { return (await r).success; }
// @ts-expect-error a task spec needs a goal
const wrong: TaskSpecInput = { mode: 'extract' };
export { spec, ops, wrong };
`,
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2023',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: [],
        },
        files: ['main.ts'],
      }),
    );
    const tsc = join(root, 'node_modules', '.bin', 'tsc');
    const out = await run(tsc, ['-p', join(app, 'tsconfig.json')], { cwd: app, timeout: 120_000 }).catch(
      (e: { stdout: string }) => e,
    );
    expect('stdout' in out ? out.stdout : '').toBe('');
  });

  it('runs a plain Node program that acts on a page with zero tokens', async () => {
    await writeFile(
      join(app, 'main.mjs'),
      `import { act, openSession, closeSharedBrowser } from 'browserfn';
const session = await openSession({ url: process.argv[2], policy: { allowPrivate: false, allowHosts: [new URL(process.argv[2]).host] } });
const result = await act({ page: session.page, checkNavigation: session.checkNavigation }, 'click the Sign in button');
console.log(JSON.stringify({ success: result.success, resolvedBy: result.resolvedBy, tokens: result.usage.promptTokens }));
await session.close();
await closeSharedBrowser();
`,
    );
    const { stdout } = await run('node', [join(app, 'main.mjs'), `${site.url}/login.html`], {
      cwd: app,
      timeout: 120_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({
      success: true,
      resolvedBy: 'matcher',
      tokens: 0,
    });
  });
});
