/**
 * bench:scenarios-som — what set-of-marks mode adds to a scenario iteration on ordinary pages: the
 * marked viewport picture (markers drawn, screenshot, markers removed — `capturePicture`, as the
 * runner takes it: fast PNG, the removal not waited for) after the snapshot, on the saved real-page
 * corpus (`../shared/corpus/forms`) at its capture viewport. Each page is read once (snapshot, not
 * timed) and pictured BENCH_REPEAT times (default 3); the first picture of each page is kept apart
 * (cold: the first screenshot of a page pays for its first composite). Target: p50 ≤ 60 ms.
 * Then the picture taken apart (lib/som-phases.ts: round trip, drawing with one element per marker
 * or one canvas, forced layout, capture with the overlay, removal, the capture of an unchanged page
 * per format, its size and its base64 decode), and Playwright's PNG screenshot for comparison.
 * Also prints, per page, the prompt's page section in text mode (the outline) and in SoM mode (the
 * element map and trimmed text) in o200k tokens, and the picture's billed tokens (OpenAI tiles).
 * Prints its ok count first; exits non-zero when a page does not load or a picture fails.
 *   BENCH_LIMIT (pages per corpus folder, default 20), BENCH_REPEAT (3), BENCH_CHROMIUM_ARGS (extra
 *   Chromium flags, space-separated: e.g. `--disable-gpu` to compare the compositor's cost)
 */

import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import { setOfMarks } from '../../lib/perception/som.ts';
import { capturePicture, somPageText } from '../../lib/scenarios/som-mode.ts';
import { CORPUS, corpusPages, offlineContext, requireCorpus } from './lib/corpus.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { table } from './lib/report.ts';
import { type Samples, splitPicture } from './lib/som-phases.ts';
import { summarize } from './lib/stats.ts';
import { TOKENIZER, tokens } from './lib/tokens.ts';

requireCorpus('bench:scenarios-som');
const LIMIT = Number(process.env.BENCH_LIMIT ?? 20) || 20;
const REPEAT = Math.max(1, Number(process.env.BENCH_REPEAT ?? 3) || 3);
const EXTRA_ARGS = (process.env.BENCH_CHROMIUM_ARGS ?? '').split(/\s+/).filter(Boolean);

/** OpenAI's high-detail bill for a picture of this size (512-px tiles after its scaling). */
function imageTokens(w: number, h: number): number {
  const fit = Math.min(1, 2048 / Math.max(w, h));
  const [a, b] = [w * fit, h * fit];
  const shrink = Math.min(1, 768 / Math.min(a, b));
  return 85 + 170 * Math.ceil((a * shrink) / 512) * Math.ceil((b * shrink) / 512);
}

const browser = await launchBrowser({ args: EXTRA_ARGS });
const outcome = new BenchOutcome('bench:scenarios-som', 'pages pictured');
const warm: number[] = [];
const cold: number[] = [];
const outline: number[] = [];
const som: number[] = [];
const marks: number[] = [];
/** The picture taken apart (see lib/som-phases.ts). */
const parts: Samples = new Map();
/** Playwright's own PNG screenshot, what the runner took before (for comparison). */
const playwright: number[] = [];
/** The picture as the runner took it before (Playwright's evaluate, the removal waited for). */
const before: number[] = [];
let pictureTokens = 0;
try {
  const context = await offlineContext(browser);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  for (const file of corpusPages(LIMIT)) {
    try {
      await page.goto(pathToFileURL(join(CORPUS, file)).href, { waitUntil: 'load', timeout: 15_000 });
      const snap = await snapshot(page, { budget: 3000 });
      for (let i = 0; i < REPEAT; i++) {
        const t = performance.now();
        const pic = await capturePicture(page, snap);
        (i === 0 ? cold : warm).push(performance.now() - t);
        const o = performance.now();
        await setOfMarks(page, snap, {
          capture: async () =>
            Buffer.from(
              (await cdp.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true })).data,
              'base64',
            ),
        });
        before.push(performance.now() - o);
        await splitPicture(page, cdp, snap, parts);
        const w = performance.now();
        await page.screenshot({ type: 'png' });
        playwright.push(performance.now() - w);
        if (i === 0 && pic.image.length > 0) {
          const { width, height } = page.viewportSize() ?? { width: 0, height: 0 };
          pictureTokens = imageTokens(width, height);
        }
      }
      outline.push(tokens(snap.tree));
      som.push(tokens(somPageText(snap)));
      marks.push(snap.elements.filter((e) => e.inViewport && e.box).length);
      outcome.record(true, file);
    } catch (err) {
      outcome.record(false, `${file}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  await context.close();
} finally {
  await browser.close();
}
const s = (xs: number[]) => summarize(xs);
const rows: (string | number)[][] = [['figure', 'n', 'p50', 'p95', 'max']];
const all = [...cold, ...warm];
for (const [name, xs] of [
  ['SoM picture, all (ms)', all],
  ['SoM picture, first of a page (ms)', cold],
  ['SoM picture, again (ms)', warm],
  ['SoM picture as before: Playwright evaluate, removal waited (ms)', before],
  ...[...parts].map(([k, xs]) => [`  ${k}${k.includes('(') ? '' : ' (ms)'}`, xs] as const),
  ["Playwright's PNG screenshot, no markers (ms)", playwright],
  ['markers per picture', marks],
  [`page section, text mode (${TOKENIZER})`, outline],
  ['page section, SoM mode (tokens)', som],
] as const) {
  const x = s(xs);
  rows.push([name, x.n, x.p50, x.p95, x.max]);
}
console.log(outcome.line());
console.log(table(rows));
console.log(
  `markers cost (SoM picture p50 less the capture of an unchanged page, fast PNG, p50): ${Math.round((s(all).p50 - s(parts.get('unchanged png fast') ?? []).p50) * 10) / 10} ms; load average ${loadavg()
    .map((x) => x.toFixed(1))
    .join(
      ' ',
    )} on ${cpus().length} cores${EXTRA_ARGS.length ? `; extra Chromium flags: ${EXTRA_ARGS.join(' ')}` : ''}`,
);
console.log(
  `picture at the corpus viewport: ${pictureTokens} tokens (OpenAI high detail); target SoM picture p50 ≤ 60 ms: ${s(all).p50 <= 60 ? 'met' : 'NOT met'} (${s(all).p50} ms)`,
);
await outcome.gate();
