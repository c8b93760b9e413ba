/**
 * Child process for the cold-start figure: process start → embedded browser → context → page →
 * first snapshot. Prints one JSON line; `performance.now()` counts from this process's timeOrigin.
 * Usage: node --import tsx test/bench/lib/cold-start.ts <url>
 */
import { newJobContext, newPage } from '../../../lib/browser/context.ts';
import { launchBrowser } from '../../../lib/browser/launch.ts';
import { snapshot } from '../../../lib/perception/snapshot.ts';

const url = process.argv[2];
if (!url) throw new Error('usage: cold-start.ts <url>');
const marks: Record<string, number> = { imported: performance.now() };
const browser = await launchBrowser();
marks.launched = performance.now();
const context = await newJobContext(browser);
const page = await newPage(context);
marks.page = performance.now();
await page.goto(url, { waitUntil: 'load' });
marks.loaded = performance.now();
const snap = await snapshot(page);
marks.snapshot = performance.now();
const r = (x: number) => Math.round(x);
process.stdout.write(
  `${JSON.stringify({
    done: r(marks.snapshot),
    marks: Object.fromEntries(Object.entries(marks).map(([k, v]) => [k, r(v)])),
    interactive: snap.stats.interactive,
  })}\n`,
);
await browser.close();
