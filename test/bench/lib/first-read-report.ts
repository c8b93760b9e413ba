/**
 * bench:snapshot's first-read profile: runs first-read.ts in fresh processes (one at a time, other
 * browsers closed) and renders its figures, median per figure over the runs.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, fmtRatio, ratio, renderTable } from './stats.ts';

const here = dirname(fileURLToPath(import.meta.url));

export interface FirstRead {
  /** Each page finished its first frame before it was read (first-read.ts `rendered`). */
  rendered?: boolean;
  nodes: number;
  firstMs: number;
  /** New context + page, and the page's load, before the first read (not part of it). */
  contextMs: number;
  loadMs: number;
  /** The first read's own phases (read-phases.ts), ms; payloadChars a size. */
  firstPhases: Record<string, number>;
  againMs: number;
  axMs: number;
  axNodes: number;
  phases: Record<string, number>;
  profile: { totalMs: number; kinds: Record<string, number>; top: [string, number][] };
  act: {
    ms: number;
    /** The page reads inside the act (main-frame round trips and builds) and how many. */
    readMs?: number;
    reads?: number;
    ok: boolean;
    by: string;
    message?: string;
    settleMs: number;
    snapshotMs: number;
  };
}

export function firstReadOnce(largeUrl: string, formUrl: string, rendered = false): Promise<FirstRead> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(here, 'first-read.ts'), largeUrl, formUrl, ...(rendered ? ['rendered'] : [])],
      {
        cwd: join(here, '..', '..', '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve(JSON.parse(line) as FirstRead);
      else reject(new Error(`first-read child exited ${code}: ${err.slice(-2000)}`));
    });
  });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? Number.NaN : s[Math.floor(s.length / 2)]!;
};

const NODE = ['driver', 'parse', 'frames', 'assemble', 'format', 'select', 'finish'];
const nodeSide = (r: FirstRead) => NODE.reduce((s, k) => s + (r.firstPhases[k] ?? 0), 0);
const verdict = (x: number) => (x >= 5 ? 'ok (target ≥ 5x)' : 'MISSED (target ≥ 5x)');

/** The first-read figures as printed lines: right after `load`, then (if run) on a rendered page. */
export function renderFirstReads(all: FirstRead[]): string[] {
  const runs = all.filter((r) => !r.rendered);
  const done = all.filter((r) => r.rendered);
  return [...(runs.length ? renderAfterLoad(runs) : []), ...(done.length ? renderRendered(done) : [])];
}

/** Reads of a page whose first frame was done before them: the read's own cost, both sides. */
function renderRendered(runs: FirstRead[]): string[] {
  const m = (f: (r: FirstRead) => number) => median(runs.map(f));
  const fp = (k: string) => m((r) => r.firstPhases?.[k] ?? Number.NaN);
  const first = m((r) => r.firstMs);
  const ax = m((r) => r.axMs);
  return [
    `\nFirst read of a rendered page — the same page with its first frame (style, layout, paint) done before each read, as on a page laid out while it loaded; median of ${runs.length} fresh processes`,
    renderTable(
      ['measure', 'ms', 'note'],
      [
        ['first snapshot() of the process', fmt(first), 'what one stateless call pays'],
        [
          '  waiting in the page before the script ran',
          fmt(fp('inPageQueue')),
          'send + compile + the page busy',
        ],
        [
          '  install + walk, in the page',
          fmt(m((r) => (r.firstPhases.inPageInstall ?? 0) + (r.firstPhases.inPageWalk ?? 0))),
          "page's clock",
        ],
        [
          '  stringify + back to Node',
          fmt(m((r) => (r.firstPhases.inPageStringify ?? 0) + (r.firstPhases.backToNode ?? 0))),
          `${fmt(fp('payloadChars'))} chars`,
        ],
        ['  Node side (parse, assemble, format, finish)', fmt(m(nodeSide)), 'Node'],
        ['first snapshot() in a 2nd fresh context', fmt(m((r) => r.againMs)), 'same process, warm Node'],
        ['first getFullAXTree in a fresh context', fmt(ax), 'bare CDP, same page, also rendered'],
        ['AX / first snapshot', fmtRatio(ratio(ax, first)), verdict(ratio(ax, first))],
      ],
      ['left', 'right', 'left'],
    ),
  ];
}

function renderAfterLoad(runs: FirstRead[]): string[] {
  const m = (f: (r: FirstRead) => number) => median(runs.map(f));
  const first = m((r) => r.firstMs);
  const ax = m((r) => r.axMs);
  const out: string[] = [];
  out.push(
    `First read of a fresh page, right after \`load\` — large page (${m((r) => r.nodes)} DOM nodes, ${m((r) => r.axNodes)} AX nodes), median of ${runs.length} fresh processes`,
  );
  const phase = (k: string) => m((r) => r.phases[k] ?? Number.NaN);
  const fp = (k: string) => m((r) => r.firstPhases?.[k] ?? Number.NaN);
  const accounted = (r: FirstRead) => (r.firstPhases.evaluate ?? 0) + nodeSide(r);
  out.push(
    renderTable(
      ['measure', 'ms', 'note'],
      [
        ['new context + page (before the read)', fmt(m((r) => r.contextMs)), 'not counted'],
        ['load of the page (before the read)', fmt(m((r) => r.loadMs)), 'not counted'],
        ['first snapshot() of the process', fmt(first), 'what one stateless call pays'],
        ['  wrap the page (driver)', fmt(fp('driver')), 'Node'],
        ['  main frame round trip', fmt(fp('evaluate')), 'send, page work, transfer'],
        [
          '    install the collector, in the page',
          fmt(fp('inPageInstall')),
          "page's clock: compile + helpers",
        ],
        ['    walk, in the page', fmt(fp('inPageWalk')), "page's clock"],
        [
          '    waiting in the page before the script ran',
          fmt(fp('inPageQueue')),
          'send + compile + the page busy',
        ],
        ['    stringify, in the page', fmt(fp('inPageStringify')), "page's clock"],
        ['    back to Node', fmt(fp('backToNode')), `${fmt(fp('payloadChars'))} chars through the browser`],
        ['  JSON.parse of the payload', fmt(fp('parse')), 'Node'],
        ['  child frames stitched', fmt(fp('frames')), 'Node'],
        ['  ids + assemble', fmt(fp('assemble')), 'Node'],
        ['  format the lines', fmt(fp('format')), 'Node'],
        ['  select + join', fmt(fp('select')), 'Node'],
        ['  signature, hashes, confidence', fmt(fp('finish')), 'Node'],
        ['  not in a phase', fmt(m((r) => r.firstMs - accounted(r))), 'awaits, microtasks'],
        ['first snapshot() in a 2nd fresh context', fmt(m((r) => r.againMs)), 'same process, warm Node'],
        ['first getFullAXTree in a fresh context', fmt(ax), 'bare CDP, same page'],
        [
          'AX / first snapshot',
          fmtRatio(ratio(ax, first)),
          `${verdict(ratio(ax, first))}; both pay the page's first layout`,
        ],
        ['  settle (fresh page, after load)', fmt(phase('settleMs')), 'a caller of act waits for it'],
        ['  one bare round trip', fmt(phase('roundTripMs')), 'Runtime.evaluate "1"'],
        ['  compile the collector', fmt(phase('compileMs')), 'Runtime.compileScript, ~30k chars'],
        [
          '  install + first walk, in the page',
          fmt(phase('installAndWalkInPageMs')),
          'performance.now() in page',
        ],
        ['  install + first walk, round trip', fmt(phase('installAndWalkRoundTripMs')), 'incl. transfer'],
        ['  JSON.parse of the payload in Node', fmt(phase('parseMs')), `${fmt(phase('payloadChars'))} chars`],
        ['  second walk, round trip', fmt(phase('secondWalkRoundTripMs')), 'collector warm'],
        ['  second snapshot() whole', fmt(phase('secondSnapshotMs')), 'walk + build in Node'],
      ],
      ['left', 'right', 'left'],
    ),
  );
  const kinds = new Set(runs.flatMap((r) => Object.keys(r.profile.kinds)));
  out.push(
    `first walk's CPU profile (renderer main thread, self ms by kind, median): ${[...kinds]
      .map((k) => `${k} ${fmt(m((r) => r.profile.kinds[k] ?? 0))}`)
      .join(', ')}`,
  );
  const mid = runs[Math.floor(runs.length / 2)]!;
  out.push(`top self time (one run): ${mid.profile.top.map(([n, ms]) => `${n} ${ms}`).join(', ')}`);
  out.push(
    `act, first call in a fresh context on login.html (zero-token fill, settle included): ${fmt(m((r) => r.act.ms))} ms` +
      ` (its page reads ${fmt(m((r) => r.act.readMs ?? Number.NaN))} ms in ${fmt(m((r) => r.act.reads ?? Number.NaN))} round trips,` +
      ` the rest — waiting for quiet, matching, the fill and its checks — ${fmt(m((r) => r.act.ms - (r.act.readMs ?? 0)))} ms;` +
      ` apart: settle ${fmt(m((r) => r.act.settleMs))} ms, snapshot ${fmt(m((r) => r.act.snapshotMs))} ms);` +
      ` ok ${runs.filter((r) => r.act.ok).length}/${runs.length}${mid.act.message ? ` — ${mid.act.message}` : ''}`,
  );
  return out;
}
