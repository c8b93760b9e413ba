import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { journeyId } from '../../lib/scenarios/explore.ts';
import { locatorCode, stepCode } from '../../lib/scenarios/repair/codegen.ts';
import { newScope, runStep } from '../../lib/scenarios/repair/interpret.ts';
import { assertionChange } from '../../lib/scenarios/repair/repair.ts';
import {
  applyEdits,
  expectedValues,
  loadTs,
  parseScript,
  ScriptError,
  stepAtLine,
  stepDiff,
  type Ts,
} from '../../lib/scenarios/repair/script.ts';

let ts: Ts;
beforeAll(async () => {
  ts = await loadTs();
});

const TEST_FILE = `import { test, expect } from '@playwright/test';

test('adds a note', async ({ page }) => {
  await page.goto('https://example.com/notes');
  const text = 'Buy milk';
  await page.getByLabel('New note').fill(text);
  await page.click('#add-note');
  await expect(page.locator('#count')).toHaveText('1 note');
});
`;

const MAIN_FILE = `import { chromium } from 'playwright-core';
async function main() {
  const browser = await chromium.launch();
  try {
    const page = await browser.newPage();
    page.setDefaultTimeout(3000);
    await page.goto('https://example.com');
    await page.click('#go');
  } finally {
    await browser.close();
  }
}
main();
`;

describe('reading a Playwright script', () => {
  it('takes the steps from the block that does the page work, with lines, harness and assertions marked', () => {
    const parsed = parseScript(ts, TEST_FILE, 'notes.spec.ts');
    expect(parsed.steps.map((s) => [s.line, s.assertion, s.harness])).toEqual([
      [4, false, false],
      [5, false, false],
      [6, false, false],
      [7, false, false],
      [8, true, false],
    ]);
    expect(parsed.usesExpect).toBe(true);
    expect(stepAtLine(parsed, 7)?.text).toBe("await page.click('#add-note');");
    expect(stepAtLine(parsed, 2)).toBeUndefined();
    // A main() script: the try block holds the steps; launching, newPage, timeouts are harness.
    const main = parseScript(ts, MAIN_FILE, 'main.js');
    expect(main.steps.map((s) => [s.text, s.harness])).toEqual([
      ['const page = await browser.newPage();', true],
      ['page.setDefaultTimeout(3000);', true],
      ["await page.goto('https://example.com');", false],
      ["await page.click('#go');", false],
    ]);
  });

  it('takes the statements inside test.step bodies as steps of the test around them', () => {
    const source = `test('t', async ({ page }) => {
  await page.goto('https://example.com');
  await test.step('add', async () => {
    await page.fill('#n', 'Tea');
    await page.click('#add');
  });
  await expect(page.locator('li')).toHaveCount(1);
});
`;
    const parsed = parseScript(ts, source, 's.spec.ts', 5);
    expect(parsed.steps.map((s) => [s.line, s.indent.length])).toEqual([
      [2, 2],
      [4, 4],
      [5, 4],
      [7, 2],
    ]);
    expect(
      applyEdits(source, [
        {
          step: parsed.steps[2]!,
          text: "await page.locator('#a').click();\nawait page.keyboard.press('Enter');",
        },
      ]),
    ).toContain("    await page.locator('#a').click();\n    await page.keyboard.press('Enter');\n  });");
  });

  it('names a syntax error with its line, and refuses a line that is not a step', () => {
    expect(() => parseScript(ts, 'await page.click(\n', 'x.ts')).toThrow(/^x\.ts:2: /);
    expect(() => parseScript(ts, TEST_FILE, 'notes.spec.ts', 1)).toThrow(ScriptError);
  });

  it('reads what an assertion compares with, and flags a repair that changes or deletes it', () => {
    const parsed = parseScript(ts, TEST_FILE, 'notes.spec.ts');
    const assertion = parsed.steps[4]!;
    expect(expectedValues(ts, assertion.node)).toEqual(['1 note']);
    expect(
      assertionChange(ts, assertion, "await expect(page.locator('#counter')).toHaveText('1 note');"),
    ).toBeUndefined();
    expect(
      assertionChange(ts, assertion, "await expect(page.locator('#count')).toHaveText('2 notes');"),
    ).toBe('the repair changes the assertion\'s expected value: "1 note" → "2 notes"');
    expect(assertionChange(ts, assertion, null)).toBe('the repair deletes an assertion');
    // An action step's repair is never held for review.
    expect(assertionChange(ts, parsed.steps[3]!, null)).toBeUndefined();
  });

  it('writes a repair in place (indented) and deletes a step with its line', () => {
    const parsed = parseScript(ts, TEST_FILE, 'notes.spec.ts');
    const out = applyEdits(TEST_FILE, [
      {
        step: parsed.steps[3]!,
        text: "await page.locator('#add').click();\nawait page.keyboard.press('Enter');",
      },
      { step: parsed.steps[0]!, text: null },
    ]);
    expect(out).toContain("  const text = 'Buy milk';\n");
    expect(out).not.toContain('page.goto');
    expect(out).toContain(
      "  await page.locator('#add').click();\n  await page.keyboard.press('Enter');\n  await expect(",
    );
    expect(stepDiff(parsed.steps[0]!, null)).toBe(
      "- 4: await page.goto('https://example.com/notes');\n+ (deleted)",
    );
  });
});

describe('repaired steps as code', () => {
  it('names the element by unique CSS, else role and name, else text, else XPath', () => {
    expect(
      locatorCode([
        { kind: 'css', value: '#add' },
        { kind: 'role', role: 'button', name: 'Add' },
      ]),
    ).toBe("page.locator('#add')");
    expect(locatorCode([{ kind: 'role', role: 'button', name: "Don't" }])).toBe(
      "page.getByRole('button', { name: 'Don\\'t', exact: true })",
    );
    expect(locatorCode([{ kind: 'text', text: 'Hello' }])).toBe("page.getByText('Hello', { exact: true })");
    expect(locatorCode([{ kind: 'xpath', value: '/html/body/p' }])).toBe(
      "page.locator('xpath=/html/body/p')",
    );
  });

  it('writes actions and verifications; a secret is read from the environment, never written', () => {
    const el = [{ kind: 'css' as const, value: '#pw' }];
    expect(
      stepCode([
        { command: { kind: 'action', action: 'fill', id: 1, value: '%password%' }, candidates: el },
        { command: { kind: 'action', action: 'press', value: 'Enter' } },
        {
          command: { kind: 'verify', check: 'isUnchecked', id: 2 },
          candidates: [{ kind: 'css', value: '#x' }],
        },
        { command: { kind: 'verify', check: 'countGreaterThan', selector: 'li', expected: '2' } },
        { command: { kind: 'verify', check: 'hasAttribute', selector: 'a', expected: 'href=/home' } },
        { command: { kind: 'verify', check: 'textContains', expected: 'Welcome' } },
      ]),
    ).toBe(
      [
        "await page.locator('#pw').fill((process.env.SECRET_PASSWORD ?? ''));",
        "await page.keyboard.press('Enter');",
        "await expect(page.locator('#x')).not.toBeChecked();",
        "expect(await page.locator('li').count()).toBeGreaterThan(2);",
        "await expect(page.locator('a')).toHaveAttribute('href', '/home');",
        "await expect(page.locator('body')).toContainText('Welcome');",
      ].join('\n'),
    );
    expect(stepCode([{ command: { kind: 'action', action: 'click', id: 3 } }])).toEqual({
      error: 'click has no element to name',
    });
  });
});

describe('running script steps without running the script', () => {
  it('refuses what is outside the Playwright subset, by name, before touching the page', async () => {
    const page = { url: () => 'about:blank' } as unknown as Page;
    const steps = parseScript(
      ts,
      `async function t(page) {\n  await page.evaluate(() => 1);\n  await fetch(process.env.URL);\n  await page.route('**', () => {});\n  await page.goto(process.env.URL);\n}`,
      't.js',
    ).steps;
    const errors: string[] = [];
    for (const s of steps)
      await runStep(ts, page, s.node, newScope()).catch((e: Error) => errors.push(e.message));
    expect(errors.map((e) => e.split(' (')[0])).toEqual([
      'not run: the method evaluate',
      'not run: the function fetch',
      'not run: the method route',
      'not run: the name process',
    ]);
  });
});

describe('journey ids', () => {
  it('are kebab-case', () => {
    expect(journeyId('Add a Note!')).toBe('add-a-note');
    expect(journeyId('***')).toBe('journey');
  });
});
