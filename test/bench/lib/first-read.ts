/**
 * Child process for bench:snapshot's first-read profile: where the first read of a fresh page goes,
 * in a fresh process and in a fresh context of the same process. Prints one JSON line.
 *
 *   node --import tsx test/bench/lib/first-read.ts <large page url> <form page url>
 *
 * Each figure comes from its own fresh context (a page read once is read differently after):
 *   first      the first `snapshot()` of the process, whole (what one stateless call pays), with
 *              what it spent where (read-phases.ts: the main frame's round trip, the page's own
 *              clock for install and walk, parse, assemble, format, select, finish), and before
 *              it the new context + page and the load;
 *   phases     settle, one bare round trip, compiling the collector, installing it and walking once
 *              (timed inside the page, so the rest is transfer + parse), the build in Node; a CPU
 *              profile of that first walk gives its time by what the page spent it on;
 *   again      the first `snapshot()` in another fresh context of the same (now warm) process;
 *   ax         the first `Accessibility.getFullAXTree` in a fresh context without our start
 *              scripts (as another tool opens the page), same page and viewport;
 *   act        the first zero-token `act` on the form page in a fresh context (settle included),
 *              next to a bare settle and a bare snapshot of that page.
 *
 * With a third argument `rendered`, every page is left to finish its first frame (style, layout,
 * paint) after `load` before anything is timed. Served from loopback in one piece, the large page is
 * parsed whole before its first layout (~60–80 ms here), and whichever read comes first pays it —
 * ours and the bare AX call alike. A page loaded over a network is usually laid out while it loads;
 * this mode measures the reads on such a page.
 */
import type { BrowserContext, CDPSession, Page } from 'playwright-core';
import { newJobContext, newPage } from '../../../lib/browser/context.ts';
import { launchBrowser } from '../../../lib/browser/launch.ts';
import { settle } from '../../../lib/browser/settle.ts';
import { act } from '../../../lib/ops/act.ts';
import { collectInstall } from '../../../lib/perception/injected/source.ts';
import { onReadPhase } from '../../../lib/perception/read-phases.ts';
import { snapshot } from '../../../lib/perception/snapshot.ts';
import { profileByKind } from './profile.ts';

// The Playwright adapter of the page-driver port, where the tree has one (ops take a driver there).
await import(new URL('../../../lib/browser/playwright-driver.ts', import.meta.url).href).catch(
  () => undefined,
);

// A deployed call runs the built JavaScript without source-map support (dist/, the Lambda); tsx
// turns it on, and then the first Playwright call made from each of our files parses that file's
// map to capture its stack (~45 ms of the first read, measured). Off, as deployed.
process.setSourceMapsEnabled(false);

const [largeUrl, formUrl, mode] = process.argv.slice(2);
if (!largeUrl || !formUrl) throw new Error('usage: first-read.ts <large url> <form url> [rendered]');
const rendered = mode === 'rendered';
const r1 = (x: number) => Math.round(x * 10) / 10;
const timed = async <T>(f: () => Promise<T>): Promise<[number, T]> => {
  const t0 = performance.now();
  const v = await f();
  return [r1(performance.now() - t0), v];
};

const browser = await launchBrowser();

/**
 * In `rendered` mode, waits for the page's next frame to be done: a task posted from a frame
 * callback runs after that frame's style, layout and paint. Over a CDP session of its own, so no
 * helper the reads use is set up by it.
 */
async function afterLoad(context: BrowserContext, page: Page): Promise<void> {
  if (!rendered) return;
  const cdp = await context.newCDPSession(page);
  await cdp.send('Runtime.evaluate', {
    expression: 'new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)))',
    awaitPromise: true,
  });
  await cdp.detach();
}

const open = async (url: string, plain = false): Promise<{ context: BrowserContext; page: Page }> => {
  const context = plain
    ? await browser.newContext({ viewport: { width: 1280, height: 800 } })
    : await newJobContext(browser);
  const page = plain ? await context.newPage() : await newPage(context);
  await page.goto(url, { waitUntil: 'load' });
  await afterLoad(context, page);
  return { context, page };
};

// 1. The first read of the process, whole, and where its time went.
const [contextMs, fresh] = await timed(async () => {
  const context = await newJobContext(browser);
  return { context, page: await newPage(context) };
});
const [loadMs] = await timed(() => fresh.page.goto(largeUrl, { waitUntil: 'load' }));
await afterLoad(fresh.context, fresh.page);
let at = fresh;
const firstPhases: Record<string, number> = {};
onReadPhase((phase, v) => {
  firstPhases[phase] = r1((firstPhases[phase] ?? 0) + v);
});
const [firstMs, firstSnap] = await timed(() => snapshot(at.page));
onReadPhase(undefined);
await at.context.close();

// 2. The same first read in parts, in a fresh context.
at = await open(largeUrl);
const cdp: CDPSession = await at.context.newCDPSession(at.page);
const [settleMs] = await timed(() => settle(at.page));
const [roundTripMs] = await timed(() =>
  cdp.send('Runtime.evaluate', { expression: '1', returnByValue: true }),
);
const { executionContextId } = await new Promise<{ executionContextId: number }>((resolve) => {
  cdp.once('Runtime.executionContextCreated', (e) => resolve({ executionContextId: e.context.id }));
  void cdp.send('Runtime.enable');
});
const install = collectInstall({ text: true });
const [compileMs] = await timed(() =>
  cdp.send('Runtime.compileScript', {
    expression: install,
    sourceURL: '',
    persistScript: false,
    executionContextId,
  }),
);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
await cdp.send('Profiler.start');
const [walkRoundTripMs, inPage] = await timed(async () => {
  const res = await cdp.send('Runtime.evaluate', {
    expression: `(() => { const t0 = performance.now(); const json = ${install}; return { ms: performance.now() - t0, json }; })()`,
    returnByValue: true,
  });
  return res.result.value as { ms: number; json: string };
});
const { profile } = await cdp.send('Profiler.stop');
const [parseMs] = await timed(async () => JSON.parse(inPage.json));
// The build in Node (assemble, format, budget): a second read of the now-installed page, minus
// its own in-page walk, is the nearest figure without reaching into snapshot().
const [secondMs] = await timed(() => snapshot(at.page));
const [secondWalkMs] = await timed(async () =>
  cdp.send('Runtime.evaluate', {
    expression: 'JSON.stringify(globalThis.__bfnCollect({ text: true })).length',
    returnByValue: true,
  }),
);
await at.context.close();

// 3. The first read in another fresh context of this process.
at = await open(largeUrl);
const [againMs] = await timed(() => snapshot(at.page));
await at.context.close();

// 4. A bare full AX tree, first call in a fresh context as a tool without our start scripts opens
// it (ours would walk the page once it is idle, and so lay it out ahead of the call).
at = await open(largeUrl, true);
const axCdp = await at.context.newCDPSession(at.page);
const [axMs, ax] = await timed(() => axCdp.send('Accessibility.getFullAXTree'));
await at.context.close();

// 5. act on a form page: first call in a fresh context (settle + read + match + fill), and apart.
at = await open(formUrl);
// Inside the act, the page reads it makes (round trips, busy checks included, and builds) are
// summed from read-phases; the rest is waiting for quiet, matching, the fill and its checks.
const actRead = { ms: 0, reads: 0 };
onReadPhase((phase, v) => {
  if (phase === 'evaluate') actRead.reads++;
  if (['evaluate', 'parse', 'frames', 'assemble', 'format', 'select', 'finish'].includes(phase))
    actRead.ms += v;
});
const [actMs, actRes] = await timed(() =>
  act({ page: at.page, variables: {}, options: {} }, 'type "ada@example.com" into the email field'),
);
onReadPhase(undefined);
await at.context.close();
at = await open(formUrl);
const [formSettleMs] = await timed(() => settle(at.page));
const [formSnapMs] = await timed(() => snapshot(at.page));
await at.context.close();

process.stdout.write(
  `${JSON.stringify({
    rendered,
    nodes: firstSnap.stats.nodes,
    firstMs,
    contextMs,
    loadMs,
    firstPhases,
    againMs,
    axMs,
    axNodes: ax.nodes.length,
    phases: {
      settleMs,
      roundTripMs,
      compileMs,
      installAndWalkInPageMs: r1(inPage.ms),
      installAndWalkRoundTripMs: walkRoundTripMs,
      payloadChars: inPage.json.length,
      parseMs,
      secondSnapshotMs: secondMs,
      secondWalkRoundTripMs: secondWalkMs,
    },
    profile: profileByKind(profile),
    act: {
      ms: actMs,
      readMs: r1(actRead.ms),
      reads: actRead.reads,
      ok: actRes.success,
      by: actRes.resolvedBy,
      ...(actRes.success ? {} : { message: actRes.message }),
      settleMs: formSettleMs,
      snapshotMs: formSnapMs,
    },
  })}\n`,
);
await browser.close();
