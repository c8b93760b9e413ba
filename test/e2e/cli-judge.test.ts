import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRun } from '../../lib/runs/run-records.ts';
import { parseTaskSpec } from '../../lib/runs/task-spec.ts';
import { sampleEvidenceKey } from '../../lib/store/keys.ts';
import { LocalEvidenceStore } from '../../lib/store/local-evidence-store.ts';
import { LocalRunStore } from '../../lib/store/local-run-store.ts';
import { openPage, startBrowser } from '../support/browser.ts';
import { type FixtureServer, startFixtureServer } from '../support/fixture-server.ts';
import { plannedSample, plantSample } from '../support/planted-runs.ts';

/** The command line as a person meets it: `judge`, `agent --cua`, and what it says when something is missing. */

let dir: string;
let browser: Browser;
let site: FixtureServer;

beforeAll(async () => {
  [browser, site] = await Promise.all([startBrowser(), startFixtureServer()]);
  dir = await mkdtemp(join(tmpdir(), 'bfn-cli-judge-'));
});
afterAll(async () => {
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
        timeout: 90_000,
        cwd: dir,
      },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('browserfn judge', () => {
  it('rules on each finished sample from its evidence, rules first, and says so per sample', async () => {
    const runStore = new LocalRunStore(join(dir, '.browserfn', 'runs'));
    const evidence = new LocalEvidenceStore(join(dir, 'evidence'));
    const right = plannedSample(0);
    const missing = plannedSample(3);
    const blocked = plannedSample(5);
    const spec = parseTaskSpec({ goal: right.goal, requiredFields: ['price'] });
    const input = await createRun(runStore, evidence, {
      tenant: 'local',
      spec,
      samples: [right, missing, blocked].map((p) => ({
        sampleId: p.sampleId,
        url: `https://shop.test/${p.sampleId}`,
        input: {},
      })),
    });
    const { page } = await openPage(browser);
    for (const p of [right, missing, blocked])
      await plantSample({ runStore, evidence }, page, 'local', input.runId, p);

    const out = await cli(['judge', input.runId, '--out', dir]);
    expect(out.code).toBe(1);
    const lines = out.stdout.trim().split('\n');
    // No model configured: what rules can decide is decided; the rest is uncertain, never a pass.
    expect(lines.find((l) => l.startsWith(`${missing.sampleId}:`))).toMatch(/: fail .*"price" is missing/);
    expect(lines.find((l) => l.startsWith(`${blocked.sampleId}:`))).toMatch(/: fail \[blocked by captcha\]/);
    expect(lines.find((l) => l.startsWith(`${right.sampleId}:`))).toMatch(/: uncertain/);
    expect(lines.at(-1)).toBe('judged 3: 1 uncertain, 2 fail');
    const stored = await evidence.get(
      sampleEvidenceKey('local', input.runId, missing.sampleId, 'judge.json'),
    );
    expect(JSON.parse(new TextDecoder().decode(stored!)).verdict).toBe('fail');
  });

  it('names a run that is not there in one line', async () => {
    const out = await cli(['judge', 'no-such-run', '--out', dir]);
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toContain('run no-such-run not found');
  });
});

describe('what the command line says', () => {
  it('a step that needs a model names --model and BROWSERFN_MODEL, not the API field', async () => {
    const out = await cli(['act', `${site.url}/login.html`, 'make the page nicer somehow']);
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('--model provider/model');
    expect(out.stderr).toContain('BROWSERFN_MODEL');
    expect(out.stderr).not.toContain('with the request');
  });

  it('a missing local file is called missing', async () => {
    const out = await cli(['snapshot', './missing.html']);
    expect(out.code).toBe(2);
    expect(out.stderr).toMatch(/the file .*missing\.html does not exist/);
  });

  it('agent --cua refuses a model that has no computer use, in one line', async () => {
    const out = await cli([
      'agent',
      `${site.url}/cua/chord.html`,
      'open the palette',
      '--cua',
      '--model',
      'mistral/large',
    ]);
    expect(out.code).toBe(2);
    expect(out.stderr.trim().split('\n')).toHaveLength(1);
    expect(out.stderr).toContain('"mistral/large" is not a computer-use model');
  });
});
