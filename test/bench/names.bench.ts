/**
 * bench:names — our accessible names against Chromium's own, on the saved real pages of
 * `../shared/corpus/forms` (see its README). For every interactive element of the top document
 * that our snapshot lists, the browser's computed name (CDP `Accessibility.getPartialAXTree` on the
 * same node, found by our XPath) is compared with ours, case and spacing aside. A name is what both
 * the matcher and the model know an element by, so a gap here is a perception gap.
 *
 *   npm run bench:names                      (every 3rd page: ~175 pages, ~20,000 elements)
 *   BENCH_STEP=1 npm run bench:names         (every page)
 *   BENCH_DEBUG=1 …                          (every difference, one per line)
 *
 * Differences are not all ours to fix: the snapshot leaves out on purpose what a user does not see
 * (aria-hidden icons, text hidden by CSS) and names pointer-cursor widgets that Chromium leaves
 * unnamed. The kinds are counted apart so that a change shows where it moved names.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { CDPSession } from 'playwright-core';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import type { SnapshotElement } from '../../lib/perception/types.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { round, table } from './lib/report.ts';

const here = dirname(fileURLToPath(import.meta.url));
const CORPUS = process.env.BENCH_CORPUS ?? join(here, '..', '..', '..', 'shared', 'corpus', 'forms');
const STEP = Math.max(1, Number(process.env.BENCH_STEP ?? 3) || 3);
const DEBUG = !!process.env.BENCH_DEBUG;
const log = (msg: string) => process.stderr.write(`${msg}\n`);

const outcome = new BenchOutcome('bench:names', 'pages');
if (!existsSync(CORPUS)) {
  // Nothing measured is not a pass: the gate says so and exits 1.
  log(`bench:names: no corpus at ${CORPUS} (set BENCH_CORPUS to its forms/ folder)`);
  await outcome.gate();
}

const files = ['login', 'new-password']
  .flatMap((d) =>
    readdirSync(join(CORPUS, d))
      .filter((n) => n.endsWith('.html'))
      .sort()
      .map((n) => `${d}/${n}`),
  )
  .filter((_, i) => i % STEP === 0);

const norm = (s: string) => s.replace(/\s+/g, ' ').trim().toLowerCase();

type Kind =
  | 'same'
  | 'browser unnamed'
  | 'ours unnamed'
  | 'one extends the other'
  | 'one inside the other'
  | 'other';

/** How two names differ: the kinds a reader of the table can act on. */
function kindOf(ours: string, browser: string): Kind {
  const a = norm(ours);
  const b = norm(browser);
  if (a === b) return 'same';
  if (!b) return 'browser unnamed';
  if (!a) return 'ours unnamed';
  if (a.startsWith(b) || b.startsWith(a)) return 'one extends the other';
  if (a.includes(b) || b.includes(a)) return 'one inside the other';
  return 'other';
}

/** Chromium's name for the node our XPath finds, or undefined when it cannot be found. */
async function browserName(cdp: CDPSession, el: SnapshotElement): Promise<string | undefined> {
  const found = (await cdp.send('Runtime.evaluate', {
    expression: `document.evaluate(${JSON.stringify(el.locator.xpath)}, document, null, 9, null).singleNodeValue`,
  })) as { result: { objectId?: string } };
  if (!found.result.objectId) return undefined;
  const { node } = (await cdp.send('DOM.describeNode', { objectId: found.result.objectId })) as {
    node: { backendNodeId: number };
  };
  const ax = (await cdp.send('Accessibility.getPartialAXTree', {
    backendNodeId: node.backendNodeId,
    fetchRelatives: false,
  })) as { nodes: { name?: { value?: unknown } }[] };
  return String(ax.nodes[0]?.name?.value ?? '');
}

const browser = await launchBrowser();
const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
// Offline: the captures' external resources were not kept, and nothing may leave the machine.
await context.route('**/*', (route) =>
  route.request().url().startsWith('file:') ? route.continue() : route.abort(),
);
const counts = new Map<Kind, number>();
const byRole = new Map<string, { total: number; same: number }>();
const differences: string[] = [];
let pages = 0;
const t0 = performance.now();
for (const file of files) {
  const page = await context.newPage();
  try {
    await page.goto(pathToFileURL(join(CORPUS, file)).href, { waitUntil: 'load', timeout: 20_000 });
    const snap = await snapshot(page);
    const cdp = await context.newCDPSession(page);
    await cdp.send('DOM.getDocument', { depth: 0 });
    for (const el of snap.elements) {
      // Top document only: our XPath chains into frames and shadow roots are not plain XPath.
      if (!el.interactive || el.frame !== 0 || el.locator.xpath.includes('>>')) continue;
      const theirs = await browserName(cdp, el);
      if (theirs === undefined) continue;
      const kind = kindOf(el.name, theirs);
      counts.set(kind, (counts.get(kind) ?? 0) + 1);
      const r = byRole.get(el.role) ?? { total: 0, same: 0 };
      r.total++;
      if (kind === 'same') r.same++;
      byRole.set(el.role, r);
      if (kind !== 'same')
        differences.push(
          `${file}\t${el.role}\t${kind}\tours=${JSON.stringify(el.name.slice(0, 80))}\tchromium=${JSON.stringify(theirs.slice(0, 80))}`,
        );
    }
    await cdp.detach();
    pages++;
    outcome.record(true, file);
  } catch (err) {
    // A page that could not be compared is a failure, not a page left out of the figures quietly.
    outcome.record(false, `${file}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await page.close().catch(() => undefined);
  }
}
await browser.close();
await outcome.gate();

const total = [...counts.values()].reduce((s, n) => s + n, 0);
const same = counts.get('same') ?? 0;
const pct = (n: number) => `${round((100 * n) / Math.max(1, total), 1)}%`;
console.log(
  `bench:names — our accessible names vs Chromium's, ${pages} real pages (every ${STEP}), ${total} interactive elements, ${round((performance.now() - t0) / 1000, 1)} s`,
);
console.log(
  table([
    ['how they compare', 'elements', 'share'],
    ...[...counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, n, pct(n)]),
  ]),
);
console.log(
  table([
    ['role (ours)', 'elements', 'same name'],
    ...[...byRole.entries()]
      .sort((a, b) => b[1].total - a[1].total)
      .slice(0, 10)
      .map(([role, r]) => [role, r.total, `${round((100 * r.same) / r.total, 1)}%`]),
  ]),
);
if (DEBUG) console.log(differences.join('\n'));
console.log(
  JSON.stringify({
    bench: 'names',
    pages,
    elements: total,
    same,
    sameShare: round(same / Math.max(1, total), 4),
    kinds: Object.fromEntries(counts),
  }),
);
