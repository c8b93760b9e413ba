/**
 * The labelled real-page corpus (`../shared/corpus/forms`, see its README) as the corpus benchmarks
 * read it: where it is, which pages, an offline browser context at the capture viewport, and the
 * in-page step that takes the labels off the page before our code reads it.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext } from 'playwright-core';

const here = dirname(fileURLToPath(import.meta.url));
export const CORPUS =
  process.env.BENCH_CORPUS ?? join(here, '..', '..', '..', '..', 'shared', 'corpus', 'forms');
export const FOLDERS = ['login', 'new-password'];
/** The captures were made at this size; layout (and so visibility) depends on it. */
export const VIEWPORT = { width: 1100, height: 900 };

/** Says the bench is skipped and exits when the corpus is not beside the project. */
export function requireCorpus(bench: string): void {
  if (existsSync(CORPUS)) return;
  process.stderr.write(`${bench} skipped: no corpus at ${CORPUS} (set BENCH_CORPUS to its forms/ folder)\n`);
  process.exit(0);
}

/** `folder/name.html` of every page, sorted; at most `limit` per folder, only names containing `filter`. */
export function corpusPages(limit = Infinity, filter?: string): string[] {
  const files: string[] = [];
  for (const folder of FOLDERS) {
    const dir = join(CORPUS, folder);
    if (!existsSync(dir)) continue;
    const names = readdirSync(dir)
      .filter((n) => n.endsWith('.html'))
      .sort()
      .slice(0, limit);
    for (const n of names) if (!filter || n.includes(filter)) files.push(`${folder}/${n}`);
  }
  return files;
}

/**
 * A context that loads the saved pages and nothing else: the captures' external resources were not
 * kept, and nothing may leave the machine.
 */
export async function offlineContext(browser: Browser): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: VIEWPORT, acceptDownloads: false });
  await context.route('**/*', (route) =>
    route.request().url().startsWith('file:') ? route.continue() : route.abort(),
  );
  return context;
}

/**
 * In the page (serialised: self-contained). Reads the labels into a private list under `key`,
 * removes the attributes so nothing our code reads can key on them, and notes what a user could see.
 */
export function takeLabels(key: string): { label: string; visible: boolean }[] {
  const found: { el: Element; label: string; visible: boolean }[] = [];
  for (const el of Array.from(document.querySelectorAll('[data-fathom]'))) {
    const label = el.getAttribute('data-fathom') ?? '';
    el.removeAttribute('data-fathom');
    const r = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    let visible =
      r.width > 2 &&
      r.height > 2 &&
      r.right + window.scrollX > 0 &&
      r.bottom + window.scrollY > 0 &&
      style.visibility === 'visible' &&
      el.checkVisibility({ opacityProperty: true, visibilityProperty: true });
    // Clipped to nothing by an ancestor (sr-only patterns, collapsed panels).
    for (let p = el.parentElement; visible && p && p !== document.body; p = p.parentElement) {
      const ps = getComputedStyle(p);
      if (ps.overflow !== 'visible') {
        const pr = p.getBoundingClientRect();
        if (pr.width < 2 || pr.height < 2) visible = false;
      }
    }
    found.push({ el, label, visible });
  }
  Object.defineProperty(window, key, { value: found, enumerable: false });
  return found.map(({ label, visible }) => ({ label, visible }));
}

/**
 * In the page (serialised: self-contained). Which snapshot element (by its XPath) each labelled
 * element is, as [index into the label list, snapshot id] pairs.
 */
export function whichLabelled(arg: { key: string; items: [number, string][] }): [number, number][] {
  const found = (window as unknown as Record<string, { el: Element }[]>)[arg.key] ?? [];
  const out: [number, number][] = [];
  for (const [id, xpath] of arg.items) {
    if (xpath.includes(' >> ')) continue;
    let node: Node | null = null;
    try {
      node = document.evaluate(
        xpath,
        document,
        null,
        XPathResult.FIRST_ORDERED_NODE_TYPE,
        null,
      ).singleNodeValue;
    } catch {
      // Prefixed tag names ("fb:login-button") are not valid XPath name tests.
      continue;
    }
    // A label on a <label> means its control.
    let at = found.findIndex(
      (f) => f.el === node || (f.el instanceof HTMLLabelElement && f.el.control === node),
    );
    // A label on a wrapper ("<div data-fathom=next><button>…") means the control inside it.
    if (at < 0 && node)
      at = found.findIndex(
        (f) => f.el !== node && f.el.contains(node) && f.el.querySelectorAll('button,a,input').length <= 2,
      );
    // A label on the words inside a control ("<button><span data-fathom=next>Submit") means it.
    if (at < 0 && node instanceof Element && node.matches('button, a, [role="button"]'))
      at = found.findIndex((f) => f.el !== node && node.contains(f.el));
    if (at >= 0) out.push([at, id]);
  }
  return out;
}
