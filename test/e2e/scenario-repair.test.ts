import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../lib/api/app.ts';
import { chromiumArgs, embeddedExecutablePath } from '../../lib/browser/launch.ts';
import type { LlmClient } from '../../lib/llm/types.ts';
import { compileScenario } from '../../lib/scenarios/compile.ts';
import { repairScript } from '../../lib/scenarios/repair/repair.ts';
import { runScenario } from '../../lib/scenarios/run-scenario.ts';
import { parseScenario } from '../../lib/scenarios/spec.ts';
import { exportPlaywright } from '../../lib/workflows/export-playwright.ts';
import type { RecordedRequest, ScriptedModel } from '../support/llm-server.ts';
import { idInPrompt } from '../support/ops-env.ts';
import { type ScenarioTestEnv, startScenarioTestEnv } from '../support/scenario-env.ts';
import { type ScenarioSite, startScenarioSite } from '../support/scenario-site.ts';
import { serveOnLoopback } from '../support/serve.ts';

const run = promisify(execFile);
let env: ScenarioTestEnv<ScenarioSite>;
let browser: Browser;
let site: ScenarioSite;
let llm: ScriptedModel;
let model: LlmClient;

beforeAll(async () => {
  env = await startScenarioTestEnv(startScenarioSite);
  ({ browser, site, llm, model } = env);
});
afterAll(() => env?.close());

const pageAt = (path: string): Promise<Page> => env.pageAt(path);

/** A standalone playwright-core script with a small expect of its own (playwright-core has none). */
const script = (steps: string[]) => `import { chromium, type Locator } from 'playwright-core';

const expect = (loc: Locator) => ({
  async toHaveText(want: string) {
    for (let i = 0; i < 30 && (await loc.innerText()).trim() !== want; i++) await new Promise((r) => setTimeout(r, 100));
    if ((await loc.innerText()).trim() !== want) throw new Error('expected the text ' + want);
  },
  async toHaveCount(n: number) {
    if ((await loc.count()) !== n) throw new Error('expected ' + n + ' elements');
  },
});

async function main(): Promise<void> {
  const browser = await chromium.launch({
    ...(process.env.CHROMIUM_PATH ? { executablePath: process.env.CHROMIUM_PATH } : {}),
    args: (process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean),
  });
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(3000);
${steps.map((s) => `    ${s}`).join('\n')}
  } finally {
    await browser.close();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
`;

async function runScript(source: string, args: string[] = []): Promise<{ stdout: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'bfn-repair-'));
  await symlink(join(process.cwd(), 'node_modules'), join(dir, 'node_modules'));
  await writeFile(join(dir, 'test.ts'), source);
  return run(process.execPath, ['--import', 'tsx', join(dir, 'test.ts'), ...args], {
    cwd: dir,
    env: {
      ...process.env,
      CHROMIUM_PATH: await embeddedExecutablePath(),
      CHROMIUM_ARGS: chromiumArgs().join(' '),
    },
    timeout: 60_000,
  });
}

const isRepair = (r: RecordedRequest) => r.schemaName === 'repair_decision';
const decide = (d: Record<string, unknown>) => ({
  json: { reasoning: 'scripted', noteToFutureSelf: '', experiences: [], commands: [], ...d },
});
const broken = (r: RecordedRequest) => /Broken step (\d+): (.*)/.exec(r.text)?.[2] ?? '';

/** A tester repairing the notes script: the tips dialog is gone (delete), the button was renamed in the DOM. */
function repairModel(r: RecordedRequest) {
  if (!isRepair(r)) return { status: 400 };
  const step = broken(r);
  if (step.includes('#close-tips'))
    return decide({ status: 'complete', reasoning: 'no tips dialog on the page: already gone' });
  if (step.includes('#add-note'))
    return decide({
      status: 'complete',
      commands: [{ kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') }],
    });
  if (step.includes('#counter'))
    return decide({
      status: 'complete',
      commands: [{ kind: 'verify', check: 'textEquals', selector: '#count', expected: '1 note' }],
    });
  if (step.includes('toHaveCount(2)'))
    return decide({
      status: 'complete',
      commands: [{ kind: 'verify', check: 'countEquals', selector: '#notes > li', expected: '1' }],
    });
  return decide({ status: 'stuck', reasoning: `unexpected step ${step}` });
}

describe('repair mode', () => {
  it('repairs a changed selector and deletes an obsolete step, proved on the page; the repaired script runs green', async () => {
    llm.setHandler(repairModel);
    const source = script([
      `await page.goto('${site.url}/notes');`,
      "await page.click('#close-tips');",
      "await page.fill('#new-note', 'Buy milk');",
      "await page.click('#add-note');",
      "await expect(page.locator('#count')).toHaveText('1 note');",
    ]);
    // The script as it stands fails on this app.
    await expect(runScript(source)).rejects.toThrow();

    const page = await pageAt('/');
    const before = llm.requests.filter(isRepair).length;
    const result = await repairScript({
      source,
      fileName: 'notes.test.ts',
      page,
      llm: model,
      stepTimeoutMs: 3000,
    });
    expect(result.status).toBe('repaired');
    expect(result.repairs.map((r) => [r.step, r.after, r.applied])).toEqual([
      [2, null, true],
      [4, "await page.locator('#add').click();", true],
    ]);
    expect(result.repairs[0]!.diff).toMatch(/^- \d+: await page.click\('#close-tips'\);\n\+ \(deleted\)$/);
    expect(llm.requests.filter(isRepair).length - before).toBe(2);
    // The repair ran in the browser and the script went on: the note is there, the last step passed.
    expect(await page.locator('#notes li').allTextContents()).toEqual(['Buy milk']);
    expect(result.steps.map((s) => s.outcome)).toEqual([
      'harness',
      'harness',
      'ran',
      'deleted',
      'ran',
      'repaired',
      'ran',
    ]);
    const fixed = result.script!;
    expect(fixed).not.toContain('#close-tips');
    expect(fixed).toContain("    await page.locator('#add').click();\n    await expect(");
    await runScript(fixed);
    await page.context().close();
  });
});

describe('POST /v1/repair', () => {
  it('applies a locator repair of an assertion, reports a changed expected value for review (not applied), 400 naming the field', async () => {
    llm.setHandler(repairModel);
    const app = createApp({
      keys: new Map([['key-a', 'tenant-a']]),
      policy: { allowPrivate: false, allowHosts: [`127.0.0.1:${site.port}`] },
      browser: async () => browser,
      env: {
        OPENAI_API_KEY: 'sk-test',
        OPENAI_BASE_URL: llm.openaiBaseURL,
        BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
      },
    });
    const { server, base } = await serveOnLoopback(app.fetch);
    const post = (body: unknown) =>
      fetch(`${base}/v1/repair`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer key-a' },
        body: JSON.stringify(body),
      });
    try {
      const source = script([
        "await page.fill('#new-note', 'Tea');",
        "await page.click('#add');",
        "await expect(page.locator('#counter')).toHaveText('1 note');",
        "await expect(page.locator('#notes li')).toHaveCount(2);",
      ]);
      const line = source.split('\n').findIndex((l) => l.includes('#counter')) + 1;
      const res = await post({
        url: `${site.url}/notes`,
        script: source,
        error: { message: "locator('#counter'): element not found", line },
        stepTimeoutMs: 3000,
      });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.status).toBe('review');
      expect(body.repairs.map((r: { step: number; applied: boolean }) => [r.step, r.applied])).toEqual([
        [3, true],
        [4, false],
      ]);
      expect(body.repairs[0].after).toBe("await expect(page.locator('#count')).toHaveText('1 note');");
      expect(body.repairs[1].review).toBe('the repair changes the assertion\'s expected value: "2" → "1"');
      expect(body.repairs[1].diff).toContain("+ await expect(page.locator('#notes > li')).toHaveCount(1);");
      // The script carries the locator repair; the expected value stays as written until a person says so.
      expect(body.script).toContain("await expect(page.locator('#count')).toHaveText('1 note');");
      expect(body.script).toContain("await expect(page.locator('#notes li')).toHaveCount(2);");
      expect(body.script).not.toContain('toHaveCount(1)');
      // Allowed by the caller, the same change is applied.
      const allowed = await (
        await post({
          url: `${site.url}/notes`,
          script: source,
          error: { message: "locator('#counter'): element not found", line },
          stepTimeoutMs: 3000,
          allowAssertionChanges: true,
        })
      ).json();
      expect(allowed.status).toBe('repaired');
      expect(allowed.script).toContain("await expect(page.locator('#notes > li')).toHaveCount(1);");

      const bad = await post({ url: `${site.url}/notes`, script: 'await page.click(' });
      expect(bad.status).toBe(400);
      expect((await bad.json()).error.message).toMatch(/^script: script\.ts:1: /);
      const noStep = await post({
        url: `${site.url}/notes`,
        script: source,
        error: { message: 'x', line: 1 },
      });
      expect(noStep.status).toBe(400);
      expect((await noStep.json()).error.message).toMatch(/^error\.line: /);
    } finally {
      server.close();
    }
  });
});

describe('a passed scenario exported as a Playwright script (--playwright)', () => {
  it('runs green on the app, its verifications as expect checks that fail on the broken app', async () => {
    llm.setHandler((r) => {
      if (r.schemaName !== 'scenario_decision') return { status: 400 };
      const step = Number(/Current step (\d+) of/.exec(r.text)?.[1]);
      return decide({
        status: 'complete',
        commands:
          step === 1
            ? [
                {
                  kind: 'action',
                  action: 'fill',
                  id: idInPrompt(r.text, 'textbox', 'New note'),
                  value: 'Buy milk',
                },
                { kind: 'action', action: 'click', id: idInPrompt(r.text, 'button', 'Add note') },
              ]
            : [
                { kind: 'verify', check: 'textContains', selector: '#notes', expected: 'Buy milk' },
                { kind: 'verify', check: 'countEquals', selector: '#notes > li', expected: '1' },
              ],
      });
    });
    const page = await pageAt('/notes');
    const passed = await runScenario(
      parseScenario({ steps: ['Add a note saying Buy milk', 'Verify the list shows Buy milk, once'] }),
      { page, llm: model },
    );
    expect(passed.status).toBe('passed');
    const { workflow, notCarried } = compileScenario(passed);
    expect(notCarried).toEqual([]);
    const exported = exportPlaywright(workflow);
    // The verifications are checks of the script, not comments.
    expect(exported).toContain(
      'await expectElement(page, "#notes:has-text(\\"Buy milk\\")", true, "verify_textcontains");',
    );
    expect(exported).toContain(
      'await expectElement(page, ":nth-match(#notes > li, 2)", false, "verify_countequals");',
    );
    await runScript(exported, [`--url=${site.url}/notes`]);
    await expect(runScript(exported, [`--url=${site.url}/notes?broken=1`])).rejects.toThrow(
      /expected .*Buy milk/,
    );
    await page.context().close();
  });
});

describe('browserfn repair', () => {
  it('repairs the step at the error line, prints the diff and writes name.repaired.ts beside the untouched script', async () => {
    llm.setHandler(repairModel);
    const dir = await mkdtemp(join(tmpdir(), 'bfn-repair-cli-'));
    const file = join(dir, 'notes.ts');
    const source = script([
      `await page.goto('${site.url}/notes');`,
      "await page.fill('#new-note', 'Buy milk');",
      "await page.click('#add-note');",
      "await expect(page.locator('#count')).toHaveText('1 note');",
    ]);
    await writeFile(file, source);
    const line = source.split('\n').findIndex((l) => l.includes('#add-note')) + 1;
    const res = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(
        process.execPath,
        [
          'bin/browserfn.js',
          'repair',
          file,
          '--url',
          `${site.url}/`,
          '--error',
          'Timeout 3000ms exceeded',
          '--line',
          String(line),
        ],
        {
          env: {
            PATH: process.env.PATH,
            HOME: process.env.HOME,
            TMPDIR: process.env.TMPDIR,
            OPENAI_API_KEY: 'sk-test',
            OPENAI_BASE_URL: llm.openaiBaseURL,
            BROWSERFN_MODEL: 'openai/gpt-4.1-mini',
          },
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += String(d);
      });
      child.stderr.on('data', (d) => {
        stderr += String(d);
      });
      child.on('exit', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(
      `step 3 (line ${line}) repaired\n- ${line}: await page.click('#add-note');\n+ await page.locator('#add').click();`,
    );
    expect(res.stdout).toContain(`wrote ${join(dir, 'notes.repaired.ts')}`);
    expect(await readFile(file, 'utf8')).toBe(source);
    expect(await readFile(join(dir, 'notes.repaired.ts'), 'utf8')).toBe(
      source.replace("page.click('#add-note')", "page.locator('#add').click()"),
    );
  });
});
