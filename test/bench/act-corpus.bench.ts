/**
 * bench:act-corpus — the whole zero-token `act` (read the page, match, act) on the saved real pages of
 * `../shared/corpus/forms`, judged by what happened in the page, not by what act said: the typed
 * text must sit in the labelled field, the click must land on the labelled button. bench:grounding
 * grades the matcher's choice; this one also grades the way there (locators, scrolling, hit
 * testing, fill on real markup), where a right choice can still end on the wrong element.
 *
 *   npm run bench:act-corpus                 (all pages)
 *   BENCH_LIMIT=50 npm run bench:act-corpus  (first 50 pages per folder)
 *   BENCH_FILTER=EN_ …                       (pages whose name contains it)
 *   npm run bench:act-corpus -- --perfect    (the model path with a perfect model, see below)
 *
 * --perfect: the matcher is off and a scripted model that knows the labelled element's snapshot
 * ids (test/bench/lib/oracle-model.ts, through the real OpenAI SDK) answers every act, one act per
 * labelled target. A miss is then perception's, classed as "not in snapshot" (the page read has
 * no element for the target), "missing from prompt" (it has, but the budgeted outline the model
 * was shown left it out) or "wrong" / "no effect" (the right id acted on the wrong thing).
 *
 * Pages load offline at the capture viewport with their labels taken off before act reads them.
 * Clicks are caught at the window before the page sees them (nothing submits or navigates), and
 * text fields are emptied before each act, so every act is judged on its own.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { launchBrowser } from '../../lib/browser/launch.ts';
import { createLlmClient } from '../../lib/llm/client.ts';
import { act } from '../../lib/ops/act.ts';
import { type OpContext, OpError } from '../../lib/ops/types.ts';
import { snapshot } from '../../lib/perception/snapshot.ts';
import {
  CORPUS,
  corpusPages,
  offlineContext,
  requireCorpus,
  takeLabels,
  whichLabelled,
} from './lib/corpus.ts';
import { formApplies, formWords, LABELS, type Label, PHRASINGS } from './lib/grounding-fit.ts';
import { type Oracle, startOracle } from './lib/oracle-model.ts';
import { BenchOutcome } from './lib/outcome.ts';
import { percentile, round, table } from './lib/report.ts';

// The Playwright adapter of the page-driver port, where the tree has one (ops take a driver there).
await import(new URL('../../lib/browser/playwright-driver.ts', import.meta.url).href).catch(() => undefined);
const LIMIT = Number(process.env.BENCH_LIMIT ?? 0) || Infinity;
const PARALLEL = Math.max(1, Number(process.env.BENCH_PARALLEL ?? 3) || 3);
const PERFECT = process.argv.includes('--perfect') || process.env.BENCH_PERFECT === '1';
const log = (msg: string) => process.stderr.write(`${msg}\n`);
requireCorpus('bench:act-corpus');

/** What the page shows after one act. */
type Outcome =
  | 'right'
  | 'wrong'
  | 'no effect'
  | 'deferred'
  | 'failed'
  | 'missing from prompt'
  | 'not in snapshot';
interface Trial {
  file: string;
  label: Label;
  key: string;
  outcome: Outcome;
  detail: string;
  ms: number;
}

const LABELS_KEY = '__actBenchLabels';
const CLICK_KEY = '__actBenchClick';

/** In the page, before its own scripts: every click is noted and stopped at the window. */
const CATCH_CLICKS = `(() => {
  // tsx names the bench's own functions with this helper; they run in the page too.
  globalThis.__name = (f) => f;
  const stop = (e) => { e.preventDefault(); e.stopImmediatePropagation(); };
  window.addEventListener('click', (e) => { window.${CLICK_KEY} = e.target; stop(e); }, true);
  window.addEventListener('submit', stop, true);
})();`;

/**
 * In the page: forgets the last click and, before a fill, empties every text field. A click keeps the
 * fields the fills before it left, as a user's would be: some forms enable their button only then.
 */
function resetPage(arg: { clickKey: string; fields: boolean }): void {
  (window as unknown as Record<string, unknown>)[arg.clickKey] = undefined;
  if (!arg.fields) return;
  for (const el of Array.from(document.querySelectorAll('input, textarea'))) {
    const input = el as HTMLInputElement;
    if (!['checkbox', 'radio', 'submit', 'button', 'image', 'hidden', 'file'].includes(input.type))
      input.value = '';
  }
}

/** In the page: where the act's effect landed, relative to the visible elements labelled `label`. */
function effectOf(arg: { labelsKey: string; clickKey: string; label: string; value?: string }): {
  outcome: 'right' | 'wrong' | 'no effect';
  detail: string;
} {
  const w = window as unknown as Record<string, unknown>;
  const labelled = ((w[arg.labelsKey] ?? []) as { el: Element; label: string; visible: boolean }[])
    .filter((f) => f.label === arg.label && f.visible)
    .map((f) => f.el);
  const describe = (el: Element) => {
    const i = el as HTMLInputElement;
    const words = (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 40);
    return `<${el.tagName.toLowerCase()}${i.type ? ` type=${i.type}` : ''}${el.id ? ` #${el.id}` : ''}${
      i.name ? ` name=${i.name}` : ''
    }>${words ? ` "${words}"` : ''}`;
  };
  if (arg.value !== undefined) {
    const controls = labelled.flatMap((el) => {
      if (el instanceof HTMLLabelElement) return el.control ? [el.control] : [];
      if (el.matches('input, textarea')) return [el];
      return Array.from(el.querySelectorAll('input, textarea'));
    });
    if (controls.some((c) => (c as HTMLInputElement).value === arg.value))
      return { outcome: 'right', detail: '' };
    const got = Array.from(document.querySelectorAll('input, textarea')).find(
      (c) => (c as HTMLInputElement).value === arg.value,
    );
    return got
      ? { outcome: 'wrong', detail: `typed into ${describe(got)}` }
      : { outcome: 'no effect', detail: 'no field holds the text' };
  }
  const target = w[arg.clickKey] as Element | undefined;
  if (!target) return { outcome: 'no effect', detail: 'no click reached the page' };
  // A label on the words inside a button means the button, wherever on it the click lands.
  const hit = labelled.some(
    (el) =>
      (el.closest('button, a, [role="button"]') ?? el).contains(target) ||
      (el instanceof HTMLLabelElement && el.control && el.control.contains(target)),
  );
  return hit ? { outcome: 'right', detail: '' } : { outcome: 'wrong', detail: `clicked ${describe(target)}` };
}

/** What each fill phrasing types, so the text can be found wherever it went. */
const typed = (label: Label, key: string, secret: string): string | undefined => {
  if (label === 'next') return undefined;
  if (key === 'email' || key === 'sign-in email') return 'ada@example.com';
  if (key === 'username' || key === 'sign-in username') return 'ada';
  return secret;
};

/** Its work is each corpus page; how act did on a page (right, wrong…) is the figure it measures. */
const gate = new BenchOutcome('bench:act-corpus', 'pages');

/** A labelled element the way the bench names it in a miss (the labels themselves are gone). */
function describeLabelled(arg: { labelsKey: string; label: string }): string {
  const w = window as unknown as Record<string, { el: Element; label: string; visible: boolean }[]>;
  return (w[arg.labelsKey] ?? [])
    .filter((f) => f.label === arg.label && f.visible)
    .map(({ el }) => {
      const i = el as HTMLInputElement;
      const words = (el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 30);
      return `<${el.tagName.toLowerCase()}${i.type ? ` type=${i.type}` : ''}${el.id ? ` #${el.id}` : ''}${
        i.name ? ` name=${i.name}` : ''
      }>${words ? ` "${words}"` : ''}`;
    })
    .join(', ');
}

/** In the page: the fewest characters the visible fields labelled `label` keep (0: no limit). */
function maxLengthOf(arg: { labelsKey: string; label: string }): number {
  const w = window as unknown as Record<string, { el: Element; label: string; visible: boolean }[]>;
  const limits = (w[arg.labelsKey] ?? [])
    .filter((f) => f.label === arg.label && f.visible)
    .map(({ el }) => (el instanceof HTMLLabelElement ? el.control : el))
    .map((el) => (el instanceof HTMLInputElement ? el.maxLength : -1))
    .filter((n) => n > 0);
  return limits.length > 0 ? Math.min(...limits) : 0;
}

/** Snapshot ids of the visible elements labelled `label`, from a whole-page read (no budget). */
async function targetIds(page: Page, labels: { label: string; visible: boolean }[], label: Label) {
  return (await targetRead(page, labels, label)).ids;
}

async function targetRead(page: Page, labels: { label: string; visible: boolean }[], label: Label) {
  const snap = await snapshot(page);
  const items: [number, string][] = snap.elements.map((e) => [e.id, e.locator.xpath]);
  const pairs = await page.evaluate(whichLabelled, { key: LABELS_KEY, items });
  const ids = pairs.filter(([at]) => labels[at]?.label === label && labels[at]?.visible).map(([, id]) => id);
  const first = snap.elements.find((e) => e.id === ids[0]);
  // What the user reads on the target's form: "the sign-in password" is no way to say a field of
  // a form that reads "Create password" (as in bench:grounding).
  return { ids, formText: first ? formWords(snap.elements, first) : '' };
}

async function trialsOn(context: BrowserContext, file: string, oracle?: Oracle): Promise<Trial[]> {
  const page: Page = await context.newPage();
  const trials: Trial[] = [];
  const llm = oracle ? createLlmClient(oracle.config) : undefined;
  // The perfect model: the model path alone, no screenshot retry (the oracle reads only the outline).
  const options: OpContext['options'] = oracle ? { matcher: false, vision: 'never' } : {};
  try {
    await page.goto(pathToFileURL(join(CORPUS, file)).href, { waitUntil: 'load', timeout: 20_000 });
    const labels = await page.evaluate(takeLabels, LABELS_KEY);
    for (const label of LABELS) {
      if (!labels.some((l) => l.label === label && l.visible)) continue;
      // With the oracle the wording only steers which lines the budget keeps: one act per target.
      const named = oracle ? [] : PHRASINGS[label].filter((p) => p.form);
      const formText = named.length > 0 ? (await targetRead(page, labels, label)).formText : '';
      for (const p of oracle ? PHRASINGS[label].slice(0, 1) : PHRASINGS[label]) {
        if (!formApplies(p, formText)) continue;
        // Short: some real password fields keep at most 8–14 characters. With the oracle, what is
        // typed fits the field (a 4-digit PIN box): the words a user types are theirs to choose.
        const max = oracle ? await page.evaluate(maxLengthOf, { labelsKey: LABELS_KEY, label }) : 0;
        const fitField = (v: string) => (max > 0 ? v.slice(0, max) : v);
        const secret = fitField(`Pw${Math.random().toString(36).slice(2, 8)}`);
        await page.evaluate(resetPage, { clickKey: CLICK_KEY, fields: label !== 'next' });
        const asked = typed(label, p.key, secret);
        const value = asked === undefined || asked === secret ? asked : fitField(asked);
        if (oracle) {
          const ids = await targetIds(page, labels, label);
          if (ids.length === 0) {
            const what = await page.evaluate(describeLabelled, { labelsKey: LABELS_KEY, label });
            trials.push({ file, label, key: p.key, outcome: 'not in snapshot', detail: what, ms: 0 });
            continue;
          }
          oracle.expect({
            ids,
            method: label === 'next' ? 'click' : 'fill',
            ...(value !== undefined ? { value: value === secret ? '%pw%' : value } : {}),
          });
        }
        const t0 = performance.now();
        let outcome: Outcome;
        let detail: string;
        try {
          const ctx: OpContext = { page, variables: { pw: secret }, options, ...(llm ? { llm } : {}) };
          const res = await act(ctx, p.instruction);
          if (res.success) {
            const effect = await page.evaluate(effectOf, {
              labelsKey: LABELS_KEY,
              clickKey: CLICK_KEY,
              label,
              ...(value !== undefined ? { value } : {}),
            });
            outcome = effect.outcome;
            detail = `${res.actionDescription}${effect.detail ? ` → ${effect.detail}` : ''}`;
          } else {
            outcome = 'failed';
            detail = res.message;
          }
        } catch (err) {
          const e = err as Error;
          outcome = e instanceof OpError && e.kind === 'no_model' ? 'deferred' : 'failed';
          detail = e.message.split('\n')[0]!.slice(0, 200);
        }
        if (oracle && oracle.answered().named === undefined && outcome === 'failed') {
          outcome = 'missing from prompt';
          detail = await page.evaluate(describeLabelled, { labelsKey: LABELS_KEY, label });
        }
        trials.push({ file, label, key: p.key, outcome, detail, ms: performance.now() - t0 });
      }
    }
    gate.record(true, file);
  } catch (err) {
    // A page the bench could not work on is its own failure, not a page quietly left out.
    gate.record(false, `${file}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await page.close().catch(() => undefined);
  }
  return trials;
}

const files = corpusPages(LIMIT, process.env.BENCH_FILTER);
log(`bench:act-corpus: ${files.length} pages from ${CORPUS}`);
const browser = await launchBrowser();
const context = await offlineContext(browser);
await context.addInitScript(CATCH_CLICKS);
const trials: Trial[] = [];
let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: PARALLEL }, async () => {
    // One oracle per worker: each knows the target of the act its worker is running.
    const oracle = PERFECT ? await startOracle() : undefined;
    try {
      for (;;) {
        const i = next++;
        if (i >= files.length) return;
        trials.push(...(await trialsOn(context, files[i]!, oracle)));
        if ((i + 1) % 50 === 0) log(`  ${i + 1}/${files.length} pages`);
      }
    } finally {
      await oracle?.close();
    }
  }),
);
await browser.close();
await gate.gate();

const OUTCOMES: Outcome[] = PERFECT
  ? ['right', 'wrong', 'no effect', 'missing from prompt', 'not in snapshot', 'failed']
  : ['right', 'wrong', 'no effect', 'deferred', 'failed'];
const rows: (string | number)[][] = [['label', 'phrasing', 'acts', ...OUTCOMES, 'p50 ms']];
for (const label of LABELS)
  for (const p of PHRASINGS[label]) {
    const ts = trials.filter((t) => t.label === label && t.key === p.key);
    if (ts.length === 0) continue;
    rows.push([
      label,
      p.key,
      ts.length,
      ...OUTCOMES.map((o) => ts.filter((t) => t.outcome === o).length),
      round(
        percentile(
          ts.map((t) => t.ms),
          50,
        ),
      ),
    ]);
  }
rows.push([
  'all',
  '',
  trials.length,
  ...OUTCOMES.map((o) => trials.filter((t) => t.outcome === o).length),
  '',
]);
const right = trials.filter((t) => t.outcome === 'right').length;
console.log(
  `bench:act-corpus — ${PERFECT ? 'act with a perfect model (matcher off)' : 'zero-token act'} on ${files.length} saved real pages, judged in the page (${round((performance.now() - t0) / 1000, 1)} s)\n`,
);
console.log(table(rows));
if (PERFECT)
  console.log(
    `\nright: ${right} of ${trials.length} targets (${round((100 * right) / Math.max(1, trials.length), 1)}%; target ≥ 99%)`,
  );
for (const o of OUTCOMES.filter((x) => x !== 'right' && x !== 'deferred')) {
  const ts = trials.filter((t) => t.outcome === o);
  console.log(`\n${o}: ${ts.length}`);
  for (const t of ts) console.log(`  ${t.file} [${t.label} / "${t.key}"]: ${t.detail}`);
}
console.log(
  JSON.stringify({
    bench: 'act-corpus',
    perfect: PERFECT,
    pages: files.length,
    acts: trials.length,
    ...Object.fromEntries(OUTCOMES.map((o) => [o, trials.filter((t) => t.outcome === o).length])),
  }),
);
