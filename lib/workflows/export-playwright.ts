/**
 * Export: a compiled workflow as a readable TypeScript script on `playwright-core` that runs on its
 * own (no browserfn): each pinned step tries its candidates in order as a fallback chain, its
 * post-conditions become checks, inputs become `--name=value` arguments (defaults from the
 * document), secrets come from environment variables (`%password%` → `SECRET_PASSWORD`). The
 * script prints the data the workflow stores as JSON. Steps that need a model or the engine's
 * control flow cannot be exported; they are refused by name, never written as a stub.
 */
import type { LocatorCandidate, PostCondition, Workflow, WorkflowNode } from './schema.ts';

export class ExportError extends Error {
  override name = 'ExportError';
}

const q = (s: string) => JSON.stringify(s);

/** A template string literal: `{{inputs.x}}` → `${inputs.x}`, `%secret%` kept for `withSecrets`. */
function tpl(text: string, alias: string): string {
  const escaped = text.replace(/\\/g, '\\\\').replace(/`/g, '\\`').replace(/\$\{/g, '\\${');
  const out = escaped.replace(/\{\{\s*([^}]+?)\s*\}\}/g, (_, ref: string) => {
    const m = /^inputs\.([A-Za-z_]\w*)$/.exec(ref);
    if (!m)
      throw new ExportError(
        `${alias}: the template {{${ref}}} reads another step's output; only {{inputs.*}} can be exported`,
      );
    return `\${String(inputs.${m[1]})}`;
  });
  return `\`${out}\``;
}

function candidateCode(c: LocatorCandidate): string | undefined {
  switch (c.kind) {
    case 'css':
      return `{ css: ${q(c.value)} }`;
    case 'role':
      return `{ role: ${q(c.role)}, name: ${q(c.name)} }`;
    case 'text':
      return `{ text: ${q(c.text)}${c.tag ? `, tag: ${q(c.tag)}` : ''} }`;
    case 'xpath':
      // Chains into iframes / shadow roots are perception's own notation; Playwright has no equivalent.
      return c.value.includes(' >> ') ? undefined : `{ xpath: ${q(c.value)} }`;
  }
}

function checks(post: readonly PostCondition[] | undefined, alias: string, hasEl: boolean): string[] {
  return (post ?? []).map((c): string => {
    switch (c.kind) {
      case 'url':
        return `await expectUrl(page, ${q(c.pattern)}, ${q(alias)});`;
      case 'element':
        return `await expectElement(page, ${q(c.selector)}, ${c.present}, ${q(alias)});`;
      case 'text':
        return `await expectText(page, ${q(c.contains)}, ${q(alias)});`;
      case 'value':
        if (!hasEl) throw new ExportError(`${alias}: a value check needs the step's element`);
        return `await expectValue(el, withSecrets(${tpl(c.equals, alias)}), ${q(alias)});`;
      default:
        return `await expectChecked(el, ${c.equals}, ${q(alias)});`;
    }
  });
}

function stepCode(node: WorkflowNode, n: number): string[] {
  const head = `// ${n}. ${node.alias}${node.description ? ` — ${node.description}` : ''}`;
  if (node.type === 'group') return node.config.nodes.flatMap((child, i) => stepCode(child, n * 100 + i + 1));
  if (node.type === 'browser_action') {
    const c = node.config;
    switch (c.action) {
      case 'navigate':
        return [
          head,
          `await page.goto(${tpl(c.url, node.alias)}, { waitUntil: 'load' });`,
          ...checks(c.postconditions, node.alias, false),
        ];
      case 'wait':
        return [
          head,
          c.text
            ? `await page.getByText(${q(c.text)}).first().waitFor({ timeout: ${c.duration ?? 30_000} });`
            : c.selector
              ? `await page.locator(${q(c.selector)}).first().waitFor({ timeout: ${c.duration ?? 30_000} });`
              : `await page.waitForTimeout(${c.duration ?? 1000});`,
        ];
      case 'back':
        return [head, 'await page.goBack();'];
      case 'forward':
        return [head, 'await page.goForward();'];
      case 'refresh':
        return [head, 'await page.reload();'];
      case 'keypress':
        return [head, `await page.keyboard.press(${q(c.key)});`];
      case 'screenshot':
        return [
          head,
          `await page.screenshot({ path: ${q(`${c.path ?? node.alias}.png`)}, fullPage: ${c.fullPage ?? false} });`,
        ];
      case 'openNewTab':
      case 'switchTab':
      case 'listTabs':
      case 'getCurrentTab':
        throw new ExportError(`${node.alias}: tab handling (${c.action}) is not exported`);
      default: {
        const cands = c.target.candidates.map(candidateCode).filter((x): x is string => !!x);
        if (cands.length === 0) throw new ExportError(`${node.alias}: no candidate Playwright can follow`);
        const expectArg = c.target.expect
          ? `{ role: ${q(c.target.expect.role)}, name: ${q(c.target.expect.name)} }`
          : 'undefined';
        const find = [
          `const el = await find(page, ${q(node.alias)}, [`,
          ...cands.map((x) => `  ${x},`),
          `], ${expectArg});`,
        ];
        const act =
          c.action === 'fill'
            ? `await el.fill(withSecrets(${tpl(c.value, node.alias)}));`
            : c.action === 'select'
              ? `await el.selectOption(withSecrets(${tpl(c.value, node.alias)}));`
              : c.action === 'press'
                ? `await el.press(${q(c.key)});`
                : `await clearCover(page, el);\nawait el.${c.action}();`;
        return [
          head,
          '{',
          ...[...find, ...act.split('\n'), ...checks(c.postconditions, node.alias, true)].map(
            (l) => `  ${l}`,
          ),
          '}',
        ];
      }
    }
  }
  if (node.type === 'browser_query' && node.config.method === 'extract') {
    const spec = JSON.stringify(node.config.extractor, null, 2).replace(/\n/g, '\n  ');
    const lines = [head, `{`, `  const out = await readFields(page, ${spec});`];
    if (node.config.store_variable) lines.push(`  data[${q(node.alias)}] = out;`);
    return [...lines, '}'];
  }
  if (node.type === 'browser_query' && node.config.method === 'validate') {
    return [
      head,
      ...node.config.rules.map(
        (r) =>
          `await expectElement(page, ${q(r.selector)}, ${r.type === 'element_exists'}, ${q(node.alias)});`,
      ),
    ];
  }
  throw new ExportError(
    `${node.alias}: a ${node.type} step ${node.type.includes('ai') || node.type === 'cognition' || node.type === 'agent' ? 'needs a model' : 'needs the workflow engine'} and cannot be exported to a standalone script`,
  );
}

/** The runtime helpers every exported script carries (plain Playwright, no browserfn). */
const HELPERS = String.raw`type Candidate = { css: string } | { role: string; name: string } | { text: string; tag?: string } | { xpath: string };

function locate(page: Page, c: Candidate): Locator {
  if ('css' in c) return page.locator(c.css);
  if ('role' in c) return page.getByRole(c.role as Parameters<Page['getByRole']>[0], { name: c.name, exact: true });
  if ('text' in c) return page.locator(c.tag ?? '*', { hasText: new RegExp('^\\s*' + c.text.replace(/[.*+?^$(){}|[\]\\]/g, '\\$&') + '\\s*$') });
  return page.locator('xpath=' + c.xpath);
}

const words = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();

/** The first candidate that matches exactly one element that still has the recorded role and name. */
async function find(page: Page, step: string, candidates: Candidate[], expect?: { role: string; name: string }): Promise<Locator> {
  for (const c of candidates) {
    const loc = locate(page, c);
    if ((await loc.count().catch(() => 0)) !== 1) continue;
    if (expect) {
      const aria = (await loc.ariaSnapshot().catch(() => '')).trim();
      const m = /^- ([\w-]+)(?: "((?:[^"\\]|\\.)*)")?/.exec(aria);
      const a = words(expect.name);
      const b = words(m?.[2] ?? '');
      if (!m || m[1] !== expect.role || !(a === b || (' ' + b + ' ').includes(' ' + a + ' ') || (' ' + a + ' ').includes(' ' + b + ' '))) continue;
    }
    return loc;
  }
  throw new Error(step + ': no candidate found the element; the page changed (re-record this step)');
}

/** A consent banner covering the element is refused (or closed) before the element is pressed. */
async function clearCover(page: Page, el: Locator): Promise<void> {
  const covered = await el.evaluate((e) => {
    e.scrollIntoView({ block: 'center' });
    const r = e.getBoundingClientRect();
    const t = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return !!t && t !== e && !e.contains(t) && !t.contains(e) && !(t instanceof HTMLLabelElement && t.control === e);
  });
  if (!covered) return;
  for (const name of [/^(reject all|reject|decline|necessary only)$/i, /^(close|dismiss|no thanks)$/i, /^(accept all|accept|agree|ok|got it)$/i]) {
    const button = page.getByRole('button', { name });
    if ((await button.count()) > 0) {
      await button.first().click();
      return;
    }
  }
}

function urlMatches(pattern: string, url: string): boolean {
  const re = pattern.split('*').map((p) => p.replace(/[.*+?^$(){}|[\]\\]/g, '\\$&')).join('.*');
  return new RegExp('^' + re + '$').test(url);
}

async function poll(ok: () => Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await ok().catch(() => false)) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 150));
  }
}

async function expectUrl(page: Page, pattern: string, step: string) {
  if (!(await poll(async () => urlMatches(pattern, page.url())))) throw new Error(step + ': expected the URL to match ' + pattern + ', it is ' + page.url());
}
async function expectElement(page: Page, selector: string, present: boolean, step: string) {
  if (!(await poll(async () => ((await page.locator(selector).count()) > 0) === present)))
    throw new Error(step + ': expected ' + selector + (present ? ' on the page' : ' to be gone'));
}
async function expectText(page: Page, text: string, step: string) {
  if (!(await poll(async () => (await page.locator('body').innerText()).replace(/\s+/g, ' ').includes(text))))
    throw new Error(step + ': expected the text "' + text + '" on the page');
}
async function expectValue(el: Locator, value: string, step: string) {
  if (!(await poll(async () => (await el.inputValue()) === value))) throw new Error(step + ': the field does not hold the value typed');
}
async function expectChecked(el: Locator, checked: boolean, step: string) {
  if (!(await poll(async () => (await el.isChecked()) === checked))) throw new Error(step + ': expected it ' + (checked ? 'checked' : 'unchecked'));
}

/** %name% → the SECRET_NAME environment variable (never written in this file). */
function withSecrets(text: string): string {
  return text.replace(/%([A-Za-z_]\w*)%/g, (_, name: string) => {
    const v = process.env['SECRET_' + name.toUpperCase()];
    if (v === undefined) throw new Error('set SECRET_' + name.toUpperCase() + ' for %' + name + '%');
    return v;
  });
}

type Extractor = { item?: string; list?: string; fields: Record<string, { selector: string; attr?: string; type?: 'string' | 'number' | 'boolean' }> };

function parseField(raw: string | null, type = 'string'): unknown {
  if (raw === null) return null;
  const t = raw.replace(/\s+/g, ' ').trim();
  if (type === 'number') {
    const m = /-?\d[\d,]*(?:\.\d+)?/.exec(t);
    return m ? Number(m[0].replace(/,/g, '')) : null;
  }
  if (type === 'boolean') {
    if (/^(true|yes|y|1|in stock|available|on|enabled|active)$/i.test(t)) return true;
    if (/^(false|no|n|0|out of stock|sold out|unavailable|off|disabled|inactive)$/i.test(t)) return false;
    return null;
  }
  return t;
}

/** Runs in the page; kept as text so that no compiler helper ends up in the page. */
const READ_FIELDS_IN_PAGE =
  "(spec) => {" +
  " const read = (el, attr) => { if (!el) return null; if (!attr || attr === 'text') return el.innerText ?? el.textContent;" +
  " if (attr === 'href') return el.href; if (attr === 'src') return el.src; if (attr === 'value') return el.value; return el.getAttribute(attr); };" +
  " const rec = (root) => Object.fromEntries(Object.entries(spec.fields).map(([k, f]) =>" +
  " [k, read(f.selector === ':scope' ? root : root.querySelector(f.selector), f.attr)]));" +
  " return spec.item ? [...document.querySelectorAll(spec.item)].map(rec) : rec(document); }";

async function readFields(page: Page, ex: Extractor): Promise<unknown> {
  const raw = (await page.evaluate('(' + READ_FIELDS_IN_PAGE + ')(' + JSON.stringify(ex) + ')')) as
    | Record<string, string | null>
    | Record<string, string | null>[];
  const typed = (r: Record<string, string | null>) => Object.fromEntries(Object.entries(ex.fields).map(([k, f]) => [k, parseField(r[k] ?? null, f.type)]));
  return Array.isArray(raw) ? { [ex.list ?? 'items']: raw.map(typed) } : typed(raw);
}
`;

function inputsCode(workflow: Workflow): string[] {
  const lines = [
    'const args = Object.fromEntries(process.argv.slice(2).flatMap((a) => { const m = /^--([^=]+)=(.*)$/s.exec(a); return m ? [[m[1], m[2]]] : []; }));',
    'const inputs = {',
  ];
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const fallback = spec.default === undefined ? 'undefined' : JSON.stringify(spec.default);
    const read = `args[${q(name)}] ?? ${fallback}`;
    const typed =
      spec.type === 'number'
        ? `Number(${read})`
        : spec.type === 'boolean'
          ? `String(${read}) === 'true'`
          : spec.type === 'json'
            ? `JSON.parse(String(${read}))`
            : read;
    lines.push(
      `  ${/^[A-Za-z_]\w*$/.test(name) ? name : q(name)}: ${typed}, // --${name}=…${spec.description ? ` (${spec.description.replace(/\n/g, ' ')})` : ''}`,
    );
  }
  lines.push('};');
  for (const [name, spec] of Object.entries(workflow.inputs))
    if (spec.default === undefined)
      lines.push(`if (inputs.${name} === undefined) throw new Error('give --${name}=…');`);
  return lines;
}

export function exportPlaywright(workflow: Workflow): string {
  const steps = workflow.nodes.flatMap((node, i) => [...stepCode(node, i + 1), '']);
  return [
    `// ${workflow.name} — version ${workflow.version}, exported from browserfn.`,
    '// Runs on its own: npm install playwright-core; node --import tsx this-file.ts --name=value …',
    "// Browser: CHROMIUM_PATH (an executable; else Playwright's own), CHROMIUM_ARGS (space-separated flags).",
    '// Secrets: %name% in a step is read from the SECRET_NAME environment variable.',
    "import { chromium, type Locator, type Page } from 'playwright-core';",
    '',
    HELPERS,
    ...inputsCode(workflow),
    'const data: Record<string, unknown> = {};',
    '',
    'async function main(): Promise<void> {',
    '  const browser = await chromium.launch({',
    '    ...(process.env.CHROMIUM_PATH ? { executablePath: process.env.CHROMIUM_PATH } : {}),',
    "    args: (process.env.CHROMIUM_ARGS ?? '').split(' ').filter(Boolean),",
    '  });',
    '  try {',
    '    const page = await browser.newPage();',
    ...steps.map((l) => (l ? `    ${l.replace(/\n/g, '\n    ')}` : '')),
    '    console.log(JSON.stringify(data));',
    '  } finally {',
    '    await browser.close();',
    '  }',
    '}',
    '',
    'main().catch((err: unknown) => {',
    '  console.error(err instanceof Error ? err.message : String(err));',
    '  process.exit(1);',
    '});',
    '',
  ].join('\n');
}
