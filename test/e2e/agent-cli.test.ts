import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportCommand, verifyCommand } from '../../lib/cli/run-tools.ts';
import { sha256Hex } from '../../lib/store/local-evidence-store.ts';
import { perStep, reply, tempRoot } from '../support/agent-env.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { type ScriptedModel, startScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';

let site: FixtureServer;
let llm: ScriptedModel;
let dir: string;
beforeAll(async () => {
  [site, llm] = await Promise.all([startFixtureServer(), startScriptedModel()]);
  dir = await tempRoot();
});
afterAll(async () => {
  await site?.close();
  await llm?.close();
});

function cli(
  args: string[],
  onOut?: (all: string) => void,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/browserfn.js', ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TMPDIR: process.env.TMPDIR,
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += String(d);
      onOut?.(stdout);
    });
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

describe('browserfn agent', () => {
  it('prints each step as it happens, then the result; --out holds a one-sample run that verify and report read', async () => {
    const schema = join(dir, 'count.json');
    await writeFile(
      schema,
      JSON.stringify({ type: 'object', properties: { count: { type: 'number' } }, required: ['count'] }),
    );
    const printedBeforeStep2: string[] = [];
    let seen = '';
    llm.setHandler(
      perStep((step, r) => {
        if (step === 2) printedBeforeStep2.push(seen);
        return step === 1
          ? reply([{ tool: 'click', id: idInPrompt(r.text, 'button', 'Add one') }], {
              next_goal: 'raise the count',
            })
          : reply([{ tool: 'done', data: { count: Number(/Count: (\d+)/.exec(r.text)![1]) } }]);
      }),
    );
    const out = join(dir, 'ev');
    const { code, stdout, stderr } = await cli(
      [
        'agent',
        `${site.url}/agent/counter.html`,
        'Add one and report the count',
        '--schema',
        schema,
        '--max-steps',
        '5',
        '--out',
        out,
      ],
      (all) => {
        seen = all;
      },
    );
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(printedBeforeStep2[0]).toMatch(
      /^step 1 {2}http:\/\/127\.0\.0\.1:\d+\/agent\/counter\.html\n {2}thought: ok → raise the count\n {2}✓ click \{"id":\d+\} → clicked/,
    );
    const result = JSON.parse(stdout.slice(stdout.indexOf('\n{') + 1));
    expect(result).toMatchObject({ status: 'done', data: { count: 1 }, steps: 2 });
    for (const e of result.evidence) {
      expect(e.path.startsWith(out)).toBe(true);
      expect(sha256Hex(await readFile(e.path))).toBe(e.sha256);
    }
    // The same layout and id format as `browserfn run`: verify and report take its run id as is.
    expect(result.runId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{6}$/);
    const lines: string[] = [];
    expect(await verifyCommand([result.runId, '--out', out], (l) => lines.push(l))).toBe(0);
    expect(lines.join('\n')).toMatch(/^ok: \d+ evidence files match the manifest/);
    expect(lines.join('\n')).toContain(result.manifestHead);
    const reported: string[] = [];
    expect(await reportCommand([result.runId, '--out', out], (l) => reported.push(l))).toBe(0);
    const html = await readFile(reported[0]!, 'utf8');
    expect(html).toContain('Add one and report the count');
    const csv = await readFile(join(out, 'evidence', 'local', `run_${result.runId}`, 'combined.csv'), 'utf8');
    expect(csv.split('\n')[1]).toContain(',done,');
  });

  it('bad input: one line, non-zero exit', async () => {
    const cases: [string[], RegExp][] = [
      [['agent', `${site.url}/agent/counter.html`], /missing "<goal>"/],
      [
        ['agent', `${site.url}/agent/counter.html`, 'x', '--max-steps', 'lots'],
        /--max-steps expects a positive whole number/,
      ],
      [
        ['agent', `${site.url}/agent/counter.html`, 'x', '--schema', join(dir, 'nope.json')],
        /--schema: cannot read/,
      ],
    ];
    // Side by side: each is a cold start of the CLI, which a loaded machine makes slow.
    const outs = await Promise.all(cases.map(([args]) => cli(args)));
    for (const [i, [args, message]] of cases.entries()) {
      expect(outs[i]!.code, args.join(' ')).toBe(2);
      expect(outs[i]!.stderr.split('\n')[0]).toMatch(message);
    }
  }, 180_000); // three cold CLI starts: ~25 s each on this loaded machine
});
