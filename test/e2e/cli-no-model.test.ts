/**
 * Issue 28 item 3: `browserfn run` with no model configured refuses once, up front, with one line and
 * a non-zero exit, and leaves no run behind (before, it created a run whose samples all crashed while
 * the bar counted them as pages done).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';

let dir: string;
let llm: ScriptedModel;

beforeAll(async () => {
  llm = await startScriptedModel();
  dir = await mkdtemp(join(tmpdir(), 'bfn-no-model-'));
  await writeFile(join(dir, 'agent.json'), JSON.stringify({ goal: 'Read the page title' }));
  await writeFile(
    join(dir, 'extract.json'),
    JSON.stringify({ goal: 'Read the page title', mode: 'extract' }),
  );
  await writeFile(join(dir, 'samples.csv'), 'url\nhttp://127.0.0.1:9/a\nhttp://127.0.0.1:9/b\n');
});
afterAll(async () => {
  await llm?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The CLI with no model and no provider key in its environment (unless `env` gives one). */
function cli(args: string[], extraEnv: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), 'bin/browserfn.js'), ...args],
      {
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: tmpdir(), ...extraEnv },
        timeout: 90_000,
        cwd: dir,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const runsLeft = async () => readdir(join(dir, '.browserfn', 'runs')).catch(() => [] as string[]);

describe('browserfn run without a model', () => {
  for (const spec of ['agent.json', 'extract.json']) {
    it(`refuses ${spec} up front with one line naming --model and BROWSERFN_MODEL, creating no run`, async () => {
      const r = await cli(['run', '--task', spec, '--input', 'samples.csv']);
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe('');
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^browserfn: this run needs a model\./);
      expect(lines[0]).toContain('BROWSERFN_MODEL');
      expect(lines[0]).toContain('--model');
      expect(lines[0]).not.toContain('pass "model" with the request');
      expect(await runsLeft()).toEqual([]);
    });
  }

  it('a --prompt run refuses the same way, leaving no empty run behind', async () => {
    const r = await cli(['run', '--prompt', 'the title of http://127.0.0.1:9/a']);
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^browserfn: this run needs a model\./);
    expect(await runsLeft()).toEqual([]);
  });

  it('a --prompt run whose model cannot plan is one plain error line, leaving no run behind', async () => {
    // The model answers, but never in the plan's shape (nor after the repair request).
    llm.setHandler(() => ({ malformed: 'I would rather not.' }));
    const r = await cli(['run', '--prompt', 'the title of http://127.0.0.1:9/a'], {
      BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: llm.openaiBaseURL,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^browserfn: --prompt: the model could not plan a run \(.+\); no run was created$/,
    );
    expect(await runsLeft()).toEqual([]);
    expect(llm.requests.some((q) => q.schemaName === 'run_plan')).toBe(true);
  });

  it('a model name that is not "provider/model" is refused naming the field', async () => {
    const r = await cli(['run', '--task', 'agent.json', '--input', 'samples.csv', '--model', 'nonsense']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^browserfn: --task: task spec model: written "provider\/model"/);
    expect(await runsLeft()).toEqual([]);
  });
});
