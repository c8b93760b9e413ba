/**
 * A repaired step written back as Playwright code: each command that ran becomes one statement on
 * the element it acted on, named the way a person would keep it (a unique CSS selector, else role
 * and name, else its text, else its XPath), verifications as `expect(…)` checks. Pure.
 */
import type { PageCandidate } from '../../perception/candidates.ts';
import type { ActionCommand, Command, VerificationCommand } from '../decision.ts';

const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;

/** Roles Playwright's getByRole accepts that perception also reports. */
const ROLES = new Set([
  'button',
  'link',
  'textbox',
  'checkbox',
  'radio',
  'combobox',
  'listbox',
  'option',
  'menuitem',
  'tab',
  'heading',
  'switch',
  'slider',
  'spinbutton',
  'searchbox',
  'img',
  'row',
  'cell',
  'dialog',
  'status',
  'alert',
  'list',
  'listitem',
]);

/** The locator expression for an element, from its candidates (best first). */
export function locatorCode(candidates: readonly PageCandidate[]): string | undefined {
  const css = candidates.find((c) => c.kind === 'css');
  if (css?.kind === 'css') return `page.locator(${q(css.value)})`;
  const role = candidates.find((c) => c.kind === 'role');
  if (role?.kind === 'role' && ROLES.has(role.role) && role.name)
    return `page.getByRole(${q(role.role)}, { name: ${q(role.name)}, exact: true })`;
  const text = candidates.find((c) => c.kind === 'text');
  if (text?.kind === 'text') return `page.getByText(${q(text.text)}, { exact: true })`;
  const xpath = candidates.find((c) => c.kind === 'xpath');
  if (xpath?.kind === 'xpath' && !xpath.value.includes(' >> '))
    return `page.locator(${q(`xpath=${xpath.value}`)})`;
  return undefined;
}

/** A fill value: a `%name%` secret is read from SECRET_NAME, never written into the script. */
function valueCode(value: string): string {
  if (!/%[A-Za-z_]\w*%/.test(value)) return q(value);
  const parts = value.split(/(%[A-Za-z_]\w*%)/).filter(Boolean);
  return parts
    .map((p) => {
      const m = /^%([A-Za-z_]\w*)%$/.exec(p);
      return m ? `(process.env.SECRET_${m[1]!.toUpperCase()} ?? '')` : q(p);
    })
    .join(' + ');
}

function actionCode(c: ActionCommand, loc: string | undefined): string | { error: string } {
  const v = c.value ?? '';
  const need = () => (loc ? undefined : { error: `${c.action} has no element to name` });
  switch (c.action) {
    case 'goto':
      return `await page.goto(${q(v)});`;
    case 'back':
      return 'await page.goBack();';
    case 'wait':
      return v.startsWith('text:')
        ? `await page.getByText(${q(v.slice(5))}).first().waitFor();`
        : `await page.waitForTimeout(${Number(v) || 500});`;
    case 'press':
      return loc
        ? `await ${loc}.press(${q(v || 'Enter')});`
        : `await page.keyboard.press(${q(v || 'Enter')});`;
    case 'scroll':
      if (loc) return `await ${loc}.scrollIntoViewIfNeeded();`;
      return `await page.mouse.wheel(0, ${v === 'up' ? -600 : 600});`;
    case 'fill':
    case 'type':
      return need() ?? `await ${loc}.fill(${valueCode(v)});`;
    case 'select':
      return need() ?? `await ${loc}.selectOption(${valueCode(v)});`;
    default:
      return need() ?? `await ${loc}.${c.action}();`;
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function verifyCode(c: VerificationCommand, loc: string | undefined): string | { error: string } {
  const want = c.expected ?? '';
  const target = c.selector
    ? `page.locator(${q(c.selector)})`
    : (loc ?? (c.id === undefined ? "page.locator('body')" : undefined));
  if (!target) return { error: `${c.check} has no element to name` };
  const ex = `await expect(${target})`;
  switch (c.check) {
    case 'textContains':
      return `${ex}.toContainText(${valueCode(want)});`;
    case 'textEquals':
      return `${ex}.toHaveText(${valueCode(want)});`;
    case 'valueEquals':
      return `${ex}.toHaveValue(${valueCode(want)});`;
    case 'valueEmpty':
      return `${ex}.toHaveValue('');`;
    case 'isVisible':
      return `${ex}.toBeVisible();`;
    case 'isHidden':
      return `${ex}.toBeHidden();`;
    case 'isEnabled':
      return `${ex}.toBeEnabled();`;
    case 'isDisabled':
      return `${ex}.toBeDisabled();`;
    case 'isChecked':
      return `${ex}.toBeChecked();`;
    case 'isUnchecked':
      return `${ex}.not.toBeChecked();`;
    case 'countEquals':
      return `${ex}.toHaveCount(${Number(want)});`;
    case 'countGreaterThan':
      return `expect(await ${target}.count()).toBeGreaterThan(${Number(want)});`;
    case 'countLessThan':
      return `expect(await ${target}.count()).toBeLessThan(${Number(want)});`;
    case 'hasClass':
      return `${ex}.toHaveClass(/(^|\\s)${escapeRe(want)}(\\s|$)/);`;
    case 'hasAttribute': {
      const at = want.indexOf('=');
      return at < 0
        ? `${ex}.toHaveAttribute(${q(want.trim())});`
        : `${ex}.toHaveAttribute(${q(want.slice(0, at).trim())}, ${valueCode(want.slice(at + 1))});`;
    }
  }
}

/**
 * The statements for the commands that ran (in order), each with its element's candidates; an
 * error names the first command that cannot be written.
 */
export function stepCode(
  commands: readonly { command: Command; candidates?: readonly PageCandidate[] }[],
): string | { error: string } {
  const lines: string[] = [];
  for (const { command, candidates } of commands) {
    const loc = candidates ? locatorCode(candidates) : undefined;
    const line = command.kind === 'verify' ? verifyCode(command, loc) : actionCode(command, loc);
    if (typeof line !== 'string') return line;
    lines.push(line);
  }
  return lines.join('\n');
}
