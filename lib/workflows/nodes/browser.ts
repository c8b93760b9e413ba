/**
 * `browser_action` without a target (navigation, waiting, tabs, screenshots, key presses) and
 * `browser_query` validate: deterministic, never a model.
 */
import { pacedGoto } from '../../browser/navigate.ts';
import { settle } from '../../browser/settle.ts';
import type { Json } from '../../store/ports.ts';
import type { BrowserActionConfig } from '../schema.ts';
import type { NodeResult, NodeRun } from '../types.ts';
import { deterministicError, failed, ok } from './result.ts';

type Plain = Exclude<BrowserActionConfig, { target: unknown }>;

export async function runBrowserAction(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'browser_action' || 'target' in node.config)
    throw new Error(`${node.alias}: not a plain browser action`);
  const config = node.config as Plain;
  const page = deps.page;
  const fail = (message: string, resolution: string, selector?: string) =>
    failed(node, started, deterministicError(message, resolution, selector));
  try {
    switch (config.action) {
      case 'navigate': {
        await deps.checkNavigation?.(config.url);
        const res = await pacedGoto(page, config.url, deps.onThrottle);
        await settle(page, { timeoutMs: 3000 });
        if (res && res.status() >= 400)
          return fail(
            `the page answered ${res.status()}: ${config.url}`,
            'check the URL (inputs.url) or the site',
          );
        return ok(node, started, { url: page.url(), status: res?.status() ?? null });
      }
      case 'wait': {
        const timeout = config.duration ?? 10_000;
        if (config.text) {
          await page.getByText(config.text).first().waitFor({ state: 'visible', timeout });
          return ok(node, started, { waitedFor: config.text });
        }
        if (config.selector) {
          await page.locator(config.selector).first().waitFor({ state: 'attached', timeout });
          return ok(node, started, { waitedFor: config.selector });
        }
        await page.waitForTimeout(Math.min(timeout, 120_000));
        return ok(node, started, { waitedMs: timeout });
      }
      case 'back':
        await page.goBack({ timeout: 30_000 });
        return ok(node, started, { url: page.url() });
      case 'forward':
        await page.goForward({ timeout: 30_000 });
        return ok(node, started, { url: page.url() });
      case 'refresh':
        await page.reload({ timeout: 30_000 });
        return ok(node, started, { url: page.url() });
      case 'keypress':
        await page.keyboard.press(config.key);
        return ok(node, started, { key: config.key });
      case 'screenshot': {
        const png = await page.screenshot({ type: 'png', fullPage: config.fullPage ?? false });
        const label = (config.path ?? node.alias).replace(/[^\w.-]+/g, '_').replace(/\.png$/i, '');
        const saved = await deps.saveEvidence?.(`${label}.png`, png, 'image/png');
        return ok(node, started, saved ? { key: saved.key, sha256: saved.sha256 } : { bytes: png.length });
      }
      case 'listTabs':
        return ok(
          node,
          started,
          page
            .context()
            .pages()
            .map((p, i) => ({ index: i, url: p.url() })) as Json,
        );
      case 'getCurrentTab':
        return ok(node, started, { url: page.url(), title: await page.title() });
      case 'openNewTab':
      case 'switchTab':
        // Tabs are the shell's: the executor handles them (it owns which page is current).
        return fail(`${config.action} runs in the executor, not here`, 'report this: it is a bug');
    }
  } catch (err) {
    const message = (err as Error).message.split('\n')[0] ?? String(err);
    const selector = config.action === 'wait' ? (config.selector ?? config.text) : undefined;
    return fail(
      `${config.action} failed: ${message}`,
      'check the page state before this step, or raise its timeout',
      selector,
    );
  }
}

/** `browser_query` validate: CSS checks in the page; `continue_with_error` records the failure and goes on. */
export async function runValidate(run: NodeRun): Promise<NodeResult> {
  const started = performance.now();
  const { node, deps } = run;
  if (node.type !== 'browser_query' || node.config.method !== 'validate')
    throw new Error(`${node.alias}: not a validate query`);
  const checks: { selector: string; type: string; ok: boolean; description?: string }[] = [];
  for (const rule of node.config.rules) {
    const count = await deps.page.locator(rule.selector).count();
    checks.push({
      selector: rule.selector,
      type: rule.type,
      ok: rule.type === 'element_exists' ? count > 0 : count === 0,
      ...(rule.description ? { description: rule.description } : {}),
    });
  }
  const broken = checks.find((c) => !c.ok);
  if (!broken) return ok(node, started, { valid: true, checks } as Json);
  const message =
    broken.type === 'element_exists'
      ? `Element not found: ${broken.selector}`
      : `Element present but should be absent: ${broken.selector}`;
  const result = failed(
    node,
    started,
    deterministicError(
      message,
      'the element does not match the page: check the selector or the page state',
      broken.selector,
    ),
  );
  return { ...result, output: { valid: false, checks } as Json };
}
