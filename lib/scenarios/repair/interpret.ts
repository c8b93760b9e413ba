/**
 * Runs a script's steps on our page without executing the script as code: each statement's AST is
 * evaluated over a fixed subset — literals, `const` names, calls on `page`, its locators,
 * `keyboard` and `mouse` by an allow-list of method names, and `expect(…)` with the common web
 * matchers (polled, as Playwright's own). Anything else (another module, `process`, `evaluate`,
 * `route`, file paths) is refused by name. This is what lets `POST /v1/repair` take a caller's
 * script without running the caller's code on the server.
 */
import type { Page } from 'playwright-core';
import type * as TS from 'typescript';
import type { Ts } from './script.ts';

export class StepError extends Error {
  override name = 'StepError';
}

const PAGE_METHODS = new Set([
  'goto',
  'click',
  'dblclick',
  'fill',
  'type',
  'press',
  'check',
  'uncheck',
  'selectOption',
  'hover',
  'focus',
  'waitForSelector',
  'waitForTimeout',
  'waitForURL',
  'waitForLoadState',
  'goBack',
  'goForward',
  'reload',
  'locator',
  'getByRole',
  'getByText',
  'getByLabel',
  'getByPlaceholder',
  'getByTestId',
  'getByAltText',
  'getByTitle',
  'frameLocator',
  'title',
  'url',
  'textContent',
  'innerText',
  'inputValue',
  'isVisible',
  'isHidden',
  'isChecked',
  'isEnabled',
  'isDisabled',
  'getAttribute',
]);
const LOCATOR_METHODS = new Set([
  ...PAGE_METHODS,
  'first',
  'last',
  'nth',
  'filter',
  'and',
  'or',
  'count',
  'waitFor',
  'clear',
  'pressSequentially',
  'scrollIntoViewIfNeeded',
  'allTextContents',
  'allInnerTexts',
  'blur',
  'setChecked',
]);
const DEVICE_METHODS = new Set([
  'press',
  'type',
  'insertText',
  'down',
  'up',
  'click',
  'dblclick',
  'move',
  'wheel',
]);
const PROPERTIES = new Set(['keyboard', 'mouse']);

type Scope = Map<string, unknown>;
const DEVICE = Symbol('device');

export interface InterpretOptions {
  /** Polling time for `expect` (Playwright's default is 5 s). */
  expectTimeoutMs?: number;
  /** Every `page.goto` URL is checked first (the network guard). */
  checkNavigation?: (url: string) => Promise<void>;
}

const isPage = (v: unknown, page: Page) => v === page;
const isLocator = (v: unknown) =>
  !!v &&
  typeof v === 'object' &&
  typeof (v as { count?: unknown }).count === 'function' &&
  'page' in (v as object);

async function poll(ok: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await ok().catch(() => false)) return true;
    if (Date.now() >= end) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const textMatches = (actual: string, want: unknown, whole: boolean) =>
  want instanceof RegExp
    ? want.test(actual)
    : whole
      ? norm(actual) === norm(String(want))
      : norm(actual).includes(norm(String(want)));

type Loc = import('playwright-core').Locator;

/** `expect(subject)` with the web matchers; `.not` flips. */
function expectation(
  subject: unknown,
  page: Page,
  timeoutMs: number,
  negate = false,
): Record<string, unknown> {
  const check = async (what: string, ok: () => Promise<boolean>) => {
    const held = await poll(async () => (await ok()) !== negate, timeoutMs);
    if (!held)
      throw new StepError(`expect${negate ? '.not' : ''}.${what} did not hold within ${timeoutMs} ms`);
  };
  const loc = () => {
    if (!isLocator(subject)) throw new StepError('this matcher needs a locator');
    return subject as Loc;
  };
  const firstText = async () => norm(await loc().first().innerText());
  const matchers: Record<string, (...a: unknown[]) => Promise<void>> = {
    toHaveText: (w) => check(`toHaveText(${String(w)})`, async () => textMatches(await firstText(), w, true)),
    toContainText: (w) =>
      check(`toContainText(${String(w)})`, async () => textMatches(await firstText(), w, false)),
    toBeVisible: () => check('toBeVisible()', () => loc().first().isVisible()),
    toBeHidden: () =>
      check('toBeHidden()', async () => (await loc().count()) === 0 || loc().first().isHidden()),
    toBeEnabled: () => check('toBeEnabled()', () => loc().first().isEnabled()),
    toBeDisabled: () => check('toBeDisabled()', () => loc().first().isDisabled()),
    toBeChecked: () => check('toBeChecked()', () => loc().first().isChecked()),
    toBeEmpty: () =>
      check(
        'toBeEmpty()',
        async () =>
          (await loc()
            .first()
            .inputValue()
            .catch(() => loc().first().innerText())) === '',
      ),
    toHaveValue: (w) =>
      check(`toHaveValue(${String(w)})`, async () => textMatches(await loc().first().inputValue(), w, true)),
    toHaveCount: (n) => check(`toHaveCount(${String(n)})`, async () => (await loc().count()) === Number(n)),
    toHaveClass: (w) =>
      check(`toHaveClass(${String(w)})`, async () =>
        textMatches((await loc().first().getAttribute('class')) ?? '', w, true),
      ),
    toHaveAttribute: (name, w) =>
      check(`toHaveAttribute(${String(name)})`, async () => {
        const got = await loc().first().getAttribute(String(name));
        return got !== null && (w === undefined || textMatches(got, w, true));
      }),
    toHaveURL: (w) => check(`toHaveURL(${String(w)})`, async () => textMatches(page.url(), w, true)),
    toHaveTitle: (w) =>
      check(`toHaveTitle(${String(w)})`, async () => textMatches(await page.title(), w, true)),
    // Plain values (already awaited by the script).
    toBe: (w) => check(`toBe(${String(w)})`, async () => subject === w),
    toEqual: (w) => check(`toEqual(${String(w)})`, async () => JSON.stringify(subject) === JSON.stringify(w)),
    toContain: (w) => check(`toContain(${String(w)})`, async () => String(subject).includes(String(w))),
    toMatch: (w) => check(`toMatch(${String(w)})`, async () => textMatches(String(subject), w, false)),
    toBeTruthy: () => check('toBeTruthy()', async () => !!subject),
    toBeGreaterThan: (n) => check(`toBeGreaterThan(${String(n)})`, async () => Number(subject) > Number(n)),
    toBeLessThan: (n) => check(`toBeLessThan(${String(n)})`, async () => Number(subject) < Number(n)),
  };
  return { ...matchers, not: negate ? undefined : expectation(subject, page, timeoutMs, true) };
}

class Evaluator {
  constructor(
    private readonly ts: Ts,
    private readonly page: Page,
    private readonly scope: Scope,
    private readonly opts: InterpretOptions,
  ) {}

  private refuse(node: TS.Node, why: string): never {
    throw new StepError(
      `not run: ${why} (${node.getText().slice(0, 80)}); repair runs a subset of Playwright calls`,
    );
  }

  async statement(s: TS.Statement): Promise<void> {
    const ts = this.ts;
    if (ts.isExpressionStatement(s)) {
      await this.expr(s.expression);
      return;
    }
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) {
        if (!ts.isIdentifier(d.name)) this.refuse(d, 'destructuring');
        this.scope.set(d.name.text, d.initializer ? await this.expr(d.initializer) : undefined);
      }
      return;
    }
    if (ts.isEmptyStatement(s)) return;
    if (ts.isBlock(s)) {
      for (const inner of s.statements) await this.statement(inner);
      return;
    }
    this.refuse(s, `a ${ts.SyntaxKind[s.kind]}`);
  }

  async expr(e: TS.Expression): Promise<unknown> {
    const ts = this.ts;
    if (ts.isAwaitExpression(e)) return await this.expr(e.expression);
    if (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e))
      return this.expr(e.expression);
    if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
    if (ts.isNumericLiteral(e)) return Number(e.text);
    if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken)
      return -Number(await this.expr(e.operand));
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword) return false;
    if (e.kind === ts.SyntaxKind.NullKeyword) return null;
    if (ts.isRegularExpressionLiteral(e)) {
      const m = /^\/(.*)\/([a-z]*)$/s.exec(e.text);
      return new RegExp(m?.[1] ?? '', m?.[2] ?? '');
    }
    if (ts.isTemplateExpression(e)) {
      let out = e.head.text;
      for (const span of e.templateSpans) out += String(await this.expr(span.expression)) + span.literal.text;
      return out;
    }
    if (ts.isArrayLiteralExpression(e)) return Promise.all(e.elements.map((x) => this.expr(x)));
    if (ts.isObjectLiteralExpression(e)) {
      const out: Record<string, unknown> = {};
      for (const p of e.properties) {
        if (ts.isPropertyAssignment(p) && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)))
          out[p.name.text] = await this.expr(p.initializer);
        else if (ts.isShorthandPropertyAssignment(p)) out[p.name.text] = this.name(p.name);
        else this.refuse(p, 'an object property that is not a plain value');
      }
      return out;
    }
    if (ts.isIdentifier(e)) return this.name(e);
    if (ts.isPropertyAccessExpression(e)) {
      const on = await this.expr(e.expression);
      const prop = e.name.text;
      if (prop === 'not' && on && typeof on === 'object' && 'toBeVisible' in on)
        return (on as Record<string, unknown>).not;
      if (PROPERTIES.has(prop) && isPage(on, this.page)) {
        const device = (this.page as unknown as Record<string, object>)[prop]!;
        return Object.assign(Object.create(device), { [DEVICE]: device });
      }
      this.refuse(e, `the property ${prop}`);
    }
    if (ts.isCallExpression(e)) return this.call(e);
    this.refuse(e, `a ${ts.SyntaxKind[e.kind]}`);
  }

  private name(id: TS.Identifier): unknown {
    if (id.text === 'page') return this.page;
    if (id.text === 'undefined') return undefined;
    if (this.scope.has(id.text)) return this.scope.get(id.text);
    this.refuse(id, `the name ${id.text}`);
  }

  private async call(e: TS.CallExpression): Promise<unknown> {
    const ts = this.ts;
    const args = () => Promise.all(e.arguments.map((a) => this.expr(a)));
    if (ts.isIdentifier(e.expression) && e.expression.text === 'expect')
      return expectation((await args())[0], this.page, this.opts.expectTimeoutMs ?? 5000);
    if (ts.isIdentifier(e.expression)) this.refuse(e, `the function ${e.expression.text}`);
    if (!ts.isPropertyAccessExpression(e.expression))
      this.refuse(e, 'a call of something other than a method');
    const method = e.expression.name.text;
    const on = await this.expr(e.expression.expression);
    // The method is allowed (or refused by name) before any argument is evaluated.
    if (on && typeof on === 'object' && DEVICE in on) {
      if (!DEVICE_METHODS.has(method)) this.refuse(e, `the method ${method}`);
      const device = (on as Record<symbol, Record<string, (...a: unknown[]) => unknown>>)[DEVICE]!;
      return device[method]!.call(device, ...(await args()));
    }
    if (on && typeof on === 'object' && 'toBeVisible' in on) {
      const m = (on as Record<string, unknown>)[method];
      if (typeof m !== 'function') this.refuse(e, `the matcher ${method}`);
      return (m as (...a: unknown[]) => unknown)(...(await args()));
    }
    const allowed = isPage(on, this.page) ? PAGE_METHODS : isLocator(on) ? LOCATOR_METHODS : undefined;
    if (!allowed || !allowed.has(method)) this.refuse(e, `the method ${method}`);
    const values = await args();
    if (method === 'goto' && this.opts.checkNavigation) await this.opts.checkNavigation(String(values[0]));
    const target = on as Record<string, (...a: unknown[]) => unknown>;
    return target[method]!.call(target, ...values);
  }
}

/** A scope of `const` names shared by the steps of one script run. */
export const newScope = (): Scope => new Map();

/** Runs one statement; a failure is a `StepError` (or Playwright's own error) with its message. */
export async function runStep(
  ts: Ts,
  page: Page,
  statement: TS.Statement,
  scope: Scope,
  opts: InterpretOptions = {},
): Promise<void> {
  await new Evaluator(ts, page, scope, opts).statement(statement);
}
